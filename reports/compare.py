"""Two runs on the same instances, compared pair by pair.

Episodes pair by instance and trial (`scenario_id`, `trial`); episodes either run excluded
(`infra_error`, `judge_error`, `environment_invalid`) drop out of the pairing. For each
measure the paired bootstrap of per-pair differences and the exact McNemar test say whether
the runs differ. Beside them stands the figure other benchmarks report: how many of the
groups (all pairs, each family, each level) have overlapping 95% intervals, a weaker test
that needs many more instances to separate agents.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel, Field

from netdojo.reports.records import EpisodeRecord, Rate
from netdojo.reports.runs import Run
from netdojo.reports.stats import PairedComparison, paired_comparison, wilson
from netdojo.reports.summary import counted, is_correct, is_safe, is_solved

MEASURES: dict[str, Callable[[EpisodeRecord], bool]] = {
    "solved": is_solved,
    "correct": is_correct,
    "safe": is_safe,
}


class MeasureComparison(BaseModel):
    measure: str
    a: Rate = Field(description="run A's rate over the shared pairs")
    b: Rate = Field(description="run B's rate over the shared pairs")
    paired: PairedComparison


class GroupOverlap(BaseModel):
    group: str = Field(description='"all", "family:<name>" or "level:<n>"')
    a: Rate
    b: Rate
    overlap: bool


class RunComparison(BaseModel):
    a: str = Field(description="run A: agent and directory")
    b: str
    pairs: int = Field(description="(instance, trial) pairs both runs counted")
    instances: int = Field(description="distinct instances among the pairs")
    only_a: int = Field(description="counted episodes of A without a partner in B")
    only_b: int
    measures: list[MeasureComparison]
    groups: list[GroupOverlap] = Field(description="solve-rate intervals per group")
    overlap_share: float = Field(description="share of groups whose 95% intervals overlap")


def _key(record: EpisodeRecord) -> str:
    return f"{record.scenario_id}/t{record.trial}"


def _label(run: Run) -> str:
    return f"{run.agent} ({run.path})"


def _overlaps(x: Rate, y: Rate) -> bool:
    return x.ci_low <= y.ci_high and y.ci_low <= x.ci_high


def _labels(record: EpisodeRecord) -> list[str]:
    return ["all", f"family:{record.family}", f"level:{record.level}"]


def _solve_rate(records: Sequence[EpisodeRecord], group: str) -> Rate:
    members = [r for r in records if group in _labels(r)]
    return wilson(sum(map(is_solved, members)), len(members))


def _groups(a: Sequence[EpisodeRecord], b: Sequence[EpisodeRecord]) -> list[GroupOverlap]:
    """Solve-rate intervals of A and B per group; ``a`` and ``b`` are the paired episodes."""
    groups = []
    for name in dict.fromkeys(label for r in a for label in _labels(r)):
        rate_a, rate_b = _solve_rate(a, name), _solve_rate(b, name)
        groups.append(
            GroupOverlap(group=name, a=rate_a, b=rate_b, overlap=_overlaps(rate_a, rate_b))
        )
    return groups


def compare_runs(a: Run, b: Run, resamples: int = 2000, seed: int = 0) -> RunComparison:
    """Compare run A with run B on the (instance, trial) pairs both counted."""
    left = {_key(r): r for r in counted(a.result.episodes)}
    right = {_key(r): r for r in counted(b.result.episodes)}
    shared = sorted(left.keys() & right.keys())
    if not shared:
        raise ValueError(f"{_label(a)} and {_label(b)} share no counted instances")
    measures = []
    for name, test in MEASURES.items():
        flags_a = {k: test(left[k]) for k in shared}
        flags_b = {k: test(right[k]) for k in shared}
        measures.append(
            MeasureComparison(
                measure=name,
                a=wilson(sum(flags_a.values()), len(shared)),
                b=wilson(sum(flags_b.values()), len(shared)),
                paired=paired_comparison(flags_a, flags_b, resamples=resamples, seed=seed),
            )
        )
    groups = _groups([left[k] for k in shared], [right[k] for k in shared])
    return RunComparison(
        a=_label(a),
        b=_label(b),
        pairs=len(shared),
        instances=len({left[k].scenario_id for k in shared}),
        only_a=len(left.keys() - right.keys()),
        only_b=len(right.keys() - left.keys()),
        measures=measures,
        groups=groups,
        overlap_share=sum(g.overlap for g in groups) / len(groups),
    )
