"""The summary of an assessment: rates with intervals, breakdowns, trials, effort.

Episodes that failed for reasons not the agent's (`infra_error`, `judge_error`,
`environment_invalid`) are counted apart and left out of every rate. Correctness, safety
and the solve rate are broken down by family, level and kind; when instances ran several
trials, pass@k and pass^k are averaged over instances with bootstrap intervals. The model's
turns and tokens are totalled over every judged episode, the agent's errors included: what the
run cost. Healthy controls give the false-alarm rate; structured diagnoses, the localisation
and root-cause scores (`netdojo.reports.diagnosis`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence

from netdojo.reports.diagnosis import false_alarm_rate, score_rates
from netdojo.reports.records import (
    NOT_THE_AGENTS,
    Assessment,
    AssessmentResult,
    EpisodeRecord,
    GroupRates,
    Rate,
    Summary,
    TrialStats,
)
from netdojo.reports.stats import bootstrap_mean, pass_at_k, pass_hat_k, wilson

BREAKDOWNS: dict[str, Callable[[EpisodeRecord], str]] = {
    "family": lambda r: r.family,
    "level": lambda r: str(r.level),
    "kind": lambda r: r.kind,
}


def counted(records: Sequence[EpisodeRecord]) -> list[EpisodeRecord]:
    """The episodes that count against (or for) the agent."""
    return [r for r in records if r.outcome not in NOT_THE_AGENTS]


def is_solved(record: EpisodeRecord) -> bool:
    return record.outcome == "solved"


def is_correct(record: EpisodeRecord) -> bool:
    return bool(record.verdict and record.verdict.correct)


def is_safe(record: EpisodeRecord) -> bool:
    """Safe by the verdict's safety checks, whatever outcome took precedence."""
    if record.verdict is not None:
        return record.verdict.safety.safe
    return record.outcome != "unsafe"


def rate_of(records: Sequence[EpisodeRecord], test: Callable[[EpisodeRecord], bool]) -> Rate:
    return wilson(sum(test(r) for r in records), len(records))


def group_rates(records: Sequence[EpisodeRecord]) -> GroupRates:
    return GroupRates(
        counted=len(records),
        solved=rate_of(records, is_solved),
        correct=rate_of(records, is_correct),
        safe=rate_of(records, is_safe),
    )


def _grouped(
    records: Sequence[EpisodeRecord], key: Callable[[EpisodeRecord], str]
) -> dict[str, list[EpisodeRecord]]:
    groups: dict[str, list[EpisodeRecord]] = defaultdict(list)
    for record in records:
        groups[key(record)].append(record)
    return dict(sorted(groups.items()))


def trial_stats(records: Sequence[EpisodeRecord]) -> TrialStats | None:
    """pass@k and pass^k for k = 1..most trials, over instances with at least k counted trials."""
    per_instance = _grouped(records, lambda r: r.scenario_id)
    most = max((len(rs) for rs in per_instance.values()), default=0)
    if most < 2:
        return None
    at: dict[str, Rate] = {}
    hat: dict[str, Rate] = {}
    for k in range(1, most + 1):
        tallies = [(len(rs), sum(map(is_solved, rs))) for rs in per_instance.values()]
        eligible = [(n, c) for n, c in tallies if n >= k]
        at[str(k)] = bootstrap_mean([pass_at_k(n, c, k) for n, c in eligible])
        hat[str(k)] = bootstrap_mean([pass_hat_k(n, c, k) for n, c in eligible])
    return TrialStats(trials=most, instances=len(per_instance), pass_at_k=at, pass_hat_k=hat)


def total(values: Sequence[int | None]) -> int | None:
    """The sum of the values reported; None when none is."""
    given = [v for v in values if v is not None]
    return sum(given) if given else None


def summarize(records: Sequence[EpisodeRecord]) -> Summary:
    kept = counted(records)
    judged = [r.verdict for r in kept if r.verdict is not None]
    spent = [r.verdict.effort for r in records if r.verdict is not None]
    breakdown = {
        name: {group: group_rates(rs) for group, rs in _grouped(kept, key).items()}
        for name, key in BREAKDOWNS.items()
    }
    return Summary(
        episodes=len(records),
        counted=len(kept),
        excluded=dict(Counter(r.outcome for r in records if r.outcome in NOT_THE_AGENTS)),
        outcomes=dict(Counter(r.outcome for r in records)),
        solved=rate_of(kept, is_solved),
        safe=rate_of(kept, is_safe),
        correct=rate_of(kept, is_correct),
        by_family={f: g.solved for f, g in breakdown["family"].items()},
        by_level={lv: g.solved for lv, g in breakdown["level"].items()},
        breakdown=breakdown,
        trials=trial_stats(kept),
        tool_calls=bootstrap_mean([v.effort.tool_calls for v in judged]),
        wall_s=bootstrap_mean([v.effort.wall_s for v in judged]),
        state_changing_calls=bootstrap_mean([v.effort.state_changing_calls for v in judged]),
        turns=total([e.turns for e in spent]),
        tokens_in=total([e.tokens_in for e in spent]),
        tokens_out=total([e.tokens_out for e in spent]),
        healthy_controls=sum(r.healthy for r in kept),
        false_alarms=false_alarm_rate(kept),
        localisation=score_rates(kept, "localisation"),
        root_cause=score_rates(kept, "root_cause"),
    )


def failed_for_the_agent(records: Sequence[EpisodeRecord]) -> str | None:
    """When every episode ended as the agent's error (an agent whose endpoint never answered),
    the first episode's cause; None otherwise."""
    if not records or any(r.outcome != "agent_error" for r in records):
        return None
    first = records[0]
    return (first.verdict.detail if first.verdict else None) or first.error or "agent_error"


def summarized(assessment: Assessment) -> AssessmentResult:
    """The results document of an assessment: its records with the summary of its episodes."""
    recorded = {name: getattr(assessment, name) for name in Assessment.model_fields}
    return AssessmentResult(**recorded, summary=summarize(assessment.episodes))
