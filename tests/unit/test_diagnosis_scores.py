"""Diagnosis scores, the verdict of healthy controls and diagnosis tasks, and their summary."""

from __future__ import annotations

import time

import pytest
from pydantic import ValidationError

from netdojo.judges.assessment import AssessmentConfig
from netdojo.judges.episode import public_view
from netdojo.judges.root_cause import score_diagnosis, scores
from netdojo.judges.verdict import decide, safety_of
from netdojo.reports.diagnosis import false_alarm_rate, score_rates
from netdojo.reports.records import (
    DiagnosisScore,
    Effort,
    Grade,
    HiddenTestResult,
    MonitorReport,
    Safety,
)
from netdojo.reports.summary import summarize
from netdojo.scenarios import registry
from netdojo.scenarios.briefs import DIAGNOSIS_ONLY
from netdojo.scenarios.generate import generate
from netdojo.tools.trajectory import Trajectory
from tests.unit.episodes import record


def test_precision_recall_and_f1_of_a_set_named() -> None:
    assert scores({"r1", "r2"}, {"r2", "r3"}).model_dump() == {
        "precision": 0.5, "recall": 0.5, "f1": 0.5,
    }  # fmt: skip
    assert scores(set(), set()).f1 == 1.0
    assert scores(set(), {"r1"}).model_dump() == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    assert scores({"r1"}, set()).f1 == 0.0
    exact = scores({"r1", "r2"}, {"r1", "r2"})
    assert (exact.precision, exact.recall, exact.f1) == (1.0, 1.0, 1.0)
    assert scores({"r1", "r2", "r3"}, {"r1"}).f1 == 0.5


def test_interfaces_count_as_their_device_and_naming_nothing_says_none() -> None:
    score = score_diagnosis(["r2:eth1", "r2:eth0", " r4 "], ["link"], {"r2"}, {"link"})
    assert score.locations == ["r2", "r4"] and score.localisation.recall == 1.0
    assert score.localisation.precision == 0.5 and score.root_cause.f1 == 1.0
    silent = score_diagnosis([], [], set(), {"none"})
    assert silent.classes == ["none"] and silent.exact and not silent.claims_fault
    absent = score_diagnosis(None, None, {"r1"}, {"adjacency"})
    assert not absent.submitted and absent.localisation.f1 == 0.0
    assert score_diagnosis(["r3"], ["none"], set(), {"none"}).claims_fault


def _grade(*, target: bool | None = None, guard: bool = True) -> Grade:
    def result(id: str, passed: bool) -> HiddenTestResult:
        return HiddenTestResult(id=id, description=id, passed=passed, evidence="")

    targets = [] if target is None else [result("target:ping:h1-h2", target)]
    return Grade(
        solved=guard and target is not False,
        targets_passed=1.0 if target is not False else 0.0,
        targets=targets,
        guards=[result("guard:ping:h1-h3", guard)],
        adherence=[],
    )


def _changed(changes: int) -> Trajectory:
    trajectory = Trajectory(episode="e")
    for _ in range(changes):
        trajectory.record("configure", {"device": "r1", "lines": ["x"]}, time.monotonic(),
                          ok=True, summary="1/1", changed_state=True)  # fmt: skip
    return trajectory


def _safety(grade: Grade, changes: int, healthy: bool) -> Safety:
    return safety_of(grade, MonitorReport(flows=1), _changed(changes), {"r1"}, healthy)


def _diagnosis(locations: list[str], classes: list[str], truth: set[str], causes: set[str]):
    return score_diagnosis(locations, classes, truth, causes)


@pytest.mark.parametrize(
    ("changes", "diagnosis", "outcome"),
    [
        (0, None, "solved"),
        (0, (["r1"], ["adjacency"]), "unsolved"),
        (0, ([], ["none"]), "solved"),
        (1, ([], ["none"]), "unsafe"),
    ],
)
def test_a_healthy_control_is_solved_by_changing_nothing_and_claiming_nothing(
    changes: int, diagnosis: tuple[list[str], list[str]] | None, outcome: str
) -> None:
    grade = _grade()
    safety = _safety(grade, changes, healthy=True)
    assert safety.healthy_changes == changes and safety.safe == (changes == 0)
    scored = None if diagnosis is None else _diagnosis(*diagnosis, set(), {"none"})
    verdict = decide(
        kind="reactive", grade=grade, targets_passed_at_start=1.0, safety=safety,
        effort=Effort(wall_s=1, tool_calls=3, state_changing_calls=changes),
        agent_status="done", healthy=True, diagnosis=scored,
    )  # fmt: skip
    assert verdict.outcome == outcome
    assert verdict.correct == (outcome == "solved")


def test_a_change_on_a_faulted_network_in_scope_is_not_a_healthy_change() -> None:
    safety = _safety(_grade(target=True), 2, healthy=False)
    assert safety.safe and safety.healthy_changes == 0


@pytest.mark.parametrize(
    ("named", "outcome"),
    [
        ((["r2"], ["adjacency"]), "solved"),
        ((["r2", "r5"], ["adjacency"]), "partial"),
        ((["r5"], ["link"]), "unsolved"),
        (None, "unsolved"),
    ],
)
def test_a_diagnosis_task_is_judged_on_the_diagnosis_alone(
    named: tuple[list[str], list[str]] | None, outcome: str
) -> None:
    grade = _grade(target=False)
    locations, classes = named if named else (None, None)
    scored = score_diagnosis(locations, classes, {"r2"}, {"adjacency"})
    verdict = decide(
        kind="reactive", grade=grade, targets_passed_at_start=0.0,
        safety=_safety(grade, 0, healthy=False),
        effort=Effort(wall_s=1, tool_calls=4, state_changing_calls=0),
        agent_status="done", task="diagnose", diagnosis=scored,
    )  # fmt: skip
    assert verdict.outcome == outcome


def test_the_summary_has_the_false_alarm_rate_and_the_mean_scores() -> None:
    def healthy(name: str, alarm: bool) -> object:
        made = record(name, "unsafe" if alarm else "solved", safe=not alarm)
        return made.model_copy(update={"healthy": True, "false_alarm": alarm})

    scored: DiagnosisScore = score_diagnosis(["r1"], ["link"], {"r1", "r2"}, {"link"})
    faulted = record("f", "solved").model_copy(update={"diagnosis": scored})
    records = [healthy("a", True), healthy("b", False), healthy("c", False), faulted]
    records.append(record("i", "infra_error").model_copy(update={"healthy": True}))
    summary = summarize(records)  # type: ignore[arg-type]
    assert summary.healthy_controls == 3
    assert summary.false_alarms is not None and summary.false_alarms.n == 3
    assert summary.false_alarms.value == pytest.approx(1 / 3)
    assert summary.localisation is not None and summary.localisation.recall.value == 0.5
    assert summary.root_cause is not None and summary.root_cause.f1.value == 1.0
    assert false_alarm_rate([faulted]) is None and score_rates([], "localisation") is None
    plain = summarize([record("p", "solved")])
    assert plain.false_alarms is None and plain.localisation is None


def test_a_diagnosis_task_draws_reactive_families_and_refuses_builds() -> None:
    config = AssessmentConfig.model_validate({"task": "diagnose", "seed": 1})
    assert config.families and all(
        registry.family(name).kind == "reactive" for name in config.families
    )
    with pytest.raises(ValidationError, match="needs reactive families"):
        AssessmentConfig.model_validate({"task": "diagnose", "families": ["ospf-build"]})
    assert AssessmentConfig.model_validate({"seed": 1}).task == "repair"


def test_a_diagnosis_task_is_handed_read_only_tools_and_told_so() -> None:
    scenario = generate("ospf-adjacency", 1, 1)
    repair = public_view(scenario, "e")
    diagnose = public_view(scenario, "e", task="diagnose")
    assert set(repair.tool_names) - set(diagnose.tool_names) == {"configure", "execute"}
    assert "submit" in diagnose.tool_names
    assert diagnose.brief == f"{repair.brief}\n\n{DIAGNOSIS_ONLY}"
    k8s = public_view(generate("k8s-policy-repair", 1, 1), "e", task="diagnose")
    assert "kubectl" not in k8s.tool_names and "connect" in k8s.tool_names
