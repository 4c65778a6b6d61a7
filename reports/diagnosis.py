"""The diagnosis figures of a summary: the false-alarm rate over the healthy controls (where
the agent changed state or claimed a fault) and the mean localisation and root-cause scores
over the episodes the judge scored (`netdojo.judges.root_cause`)."""

from __future__ import annotations

from collections.abc import Sequence

from netdojo.reports.records import EpisodeRecord, Rate, ScoreRates, Scores
from netdojo.reports.stats import bootstrap_mean, wilson


def false_alarm_rate(records: Sequence[EpisodeRecord]) -> Rate | None:
    """The share of judged healthy controls that raised a false alarm; None without any."""
    judged = [r for r in records if r.healthy and r.false_alarm is not None]
    if not judged:
        return None
    return wilson(sum(bool(r.false_alarm) for r in judged), len(judged))


def score_rates(records: Sequence[EpisodeRecord], which: str) -> ScoreRates | None:
    """Mean precision, recall and F1 (``which``: localisation or root_cause) over the
    episodes with a diagnosis score; None when none has one."""
    scored: list[Scores] = [getattr(r.diagnosis, which) for r in records if r.diagnosis]
    if not scored:
        return None
    return ScoreRates(
        precision=bootstrap_mean([s.precision for s in scored]),
        recall=bootstrap_mean([s.recall for s in scored]),
        f1=bootstrap_mean([s.f1 for s in scored]),
    )
