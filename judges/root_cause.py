"""The submitted root cause of an episode, scored against the faults its scenario injected.

A set named is scored against the true set by precision, recall and F1: devices for
localisation (an interface, ``device:interface``, counts as its device), classes of the
published taxonomy (`netdojo.scenarios.taxonomy`) for the root cause. An empty set named
against an empty truth is exact (1, 1, 1); an empty set against a non-empty truth, or the other
way round, scores 0. A diagnosis that names no place and no class says nothing is wrong: the
class ``none``, the truth of a healthy control.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from pydantic import ValidationError

from netdojo.reports.records import DiagnosisScore, Scores, Task
from netdojo.scenarios.model import Scenario
from netdojo.scenarios.taxonomy import Diagnosis, root_cause
from netdojo.tools.trajectory import Trajectory

NONE = "none"
"""The class of a healthy network."""


def scores(named: Collection[str], truth: Collection[str]) -> Scores:
    """Precision, recall and F1 of ``named`` against ``truth``."""
    named, truth = set(named), set(truth)
    if not named and not truth:
        return Scores(precision=1.0, recall=1.0, f1=1.0)
    hits = len(named & truth)
    precision = hits / len(named) if named else 0.0
    recall = hits / len(truth) if truth else 0.0
    f1 = 2 * precision * recall / (precision + recall) if hits else 0.0
    return Scores(precision=round(precision, 4), recall=round(recall, 4), f1=round(f1, 4))


def score_diagnosis(
    locations: Sequence[str] | None,
    classes: Sequence[str] | None,
    true_devices: Collection[str],
    true_classes: Collection[str],
) -> DiagnosisScore:
    """A diagnosis (None for both when none was submitted) against the truth."""
    submitted = locations is not None or classes is not None
    devices = {loc.split(":", 1)[0].strip() for loc in locations or () if loc.strip()}
    named = set(classes or ()) or ({NONE} if not devices else set())
    return DiagnosisScore(
        submitted=submitted,
        locations=sorted(devices),
        classes=sorted(named),
        true_devices=sorted(true_devices),
        true_classes=sorted(true_classes),
        localisation=scores(devices, true_devices),
        root_cause=scores(named, true_classes),
    )


def diagnosis_score(
    scenario: Scenario, trajectory: Trajectory, task: Task
) -> DiagnosisScore | None:
    """The score of the diagnosis given at submit; in a diagnosis task an episode without one
    is scored as naming nothing. None for a repair without a diagnosis, or a constructive task."""
    if scenario.kind != "reactive":
        return None
    given: Diagnosis | None = None
    if trajectory.diagnosis is not None:
        try:
            given = Diagnosis.model_validate(trajectory.diagnosis)
        except ValidationError:
            given = None  # the submit tool checked it; a stored one that fails names nothing
    if given is None and task == "repair":
        return None
    truth = root_cause(scenario.hidden.faults)
    return score_diagnosis(
        None if given is None else given.locations,
        None if given is None else list(given.classes),
        truth.devices,
        truth.classes,
    )


def false_alarm(scenario: Scenario, trajectory: Trajectory, score: DiagnosisScore | None) -> bool:
    """On a healthy control: whether the agent changed anything or claimed a fault."""
    claimed = score is not None and score.claims_fault
    return scenario.hidden.healthy and (trajectory.state_changes > 0 or claimed)
