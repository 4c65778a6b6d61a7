"""Episode records and runs built through the real models, for the results tests."""

from __future__ import annotations

from pathlib import Path

from netdojo.judges.assessment import AssessmentConfig
from netdojo.reports.records import (
    NOT_THE_AGENTS,
    AssessmentResult,
    Effort,
    EpisodeRecord,
    Grade,
    HiddenTestResult,
    MonitorReport,
    Outcome,
    Provenance,
    Safety,
    Verdict,
)
from netdojo.reports.runs import Run
from netdojo.reports.summary import summarize
from netdojo.tools.trajectory import Step, Trajectory


def record(
    name: str,
    outcome: Outcome,
    *,
    family: str = "static-routing",
    level: int = 1,
    instance: str | None = None,
    trial: int = 0,
    kind: str = "reactive",
    correct: bool | None = None,
    safe: bool = True,
    calls: int = 5,
    wall: float = 10.0,
) -> EpisodeRecord:
    """One episode; the verdict is absent for the harness's own failures."""
    correct = outcome == "solved" if correct is None else correct
    verdict = None
    if outcome not in NOT_THE_AGENTS:
        target = HiddenTestResult(
            id="target:ping:h1-h2", description="h1 can ping h2", passed=correct,
            evidence="3 packets transmitted, 3 received" if correct else "100% packet loss",
        )  # fmt: skip
        verdict = Verdict(
            outcome=outcome,
            correct=correct,
            targets_passed=1.0 if correct else 0.0,
            targets_passed_at_start=0.0,
            safety=Safety(
                safe=safe,
                guards_failed=[] if safe else ["guard:ping:h1-h3"],
                outages=MonitorReport(flows=1, samples=10),
                refused_changes=0,
                out_of_scope_changes=0,
            ),
            effort=Effort(wall_s=wall, tool_calls=calls, state_changing_calls=1),
            tests=Grade(
                solved=correct,
                targets_passed=1.0 if correct else 0.0,
                targets=[target],
                guards=[],
                adherence=[],
            ),
            detail=f"answer of {name}",
        )
    return EpisodeRecord(
        episode_id=name,
        scenario_id=instance or f"{family}-{level}-{name}",
        family=family,
        level=level,
        seed=7,
        trial=trial,
        kind=kind,
        outcome=outcome,
        verdict=verdict,
        error="the lab did not come up" if verdict is None else None,
    )


def trajectory(name: str, brief: str = "Make h1 reach h2.", extra: str = "") -> Trajectory:
    """A short trajectory: topology, a failed show, a change, and submit."""
    steps = [
        Step(index=0, time="2026-01-01T00:00:00.000+00:00", tool="topology", arguments={},
             ok=True, summary="3 devices", result={"devices": ["r1", "h1", "h2"]},
             duration_s=0.01, changed_state=False),
        Step(index=1, time="2026-01-01T00:00:01.000+00:00", tool="show",
             arguments={"device": "r9", "command": f"show version {extra}".strip()}, ok=False,
             summary="unknown device", error="no device r9", duration_s=0.02,
             changed_state=False),
        Step(index=2, time="2026-01-01T00:00:02.000+00:00", tool="execute",
             arguments={"device": "r1", "command": "ip link set eth0 up"}, ok=True,
             summary="exit 0", result={"exit_code": 0, "output": "<script>alert(1)</script>"},
             duration_s=0.1, changed_state=True),
        Step(index=3, time="2026-01-01T00:00:03.000+00:00", tool="submit",
             arguments={"summary": "brought eth0 up"}, ok=True, summary="submitted",
             result={"accepted": True}, duration_s=0.0, changed_state=False),
    ]  # fmt: skip
    return Trajectory(episode=name, brief=brief, steps=steps, submitted="brought eth0 up")


def run(
    agent: str,
    records: list[EpisodeRecord],
    path: str = "run",
    trajectories: dict[str, Trajectory] | None = None,
) -> Run:
    result = AssessmentResult(
        participant=f"{agent} (http://127.0.0.1:9010)",
        config=AssessmentConfig(families=["static-routing", "host-config"], levels=[1, 2]),
        provenance=Provenance(
            netdojo="0.1.0",
            kathara="3.8.3",
            mcp="2.3.0",
            python="3.11.7",
            host="Linux 6.1 x86_64",
            frr="8.4.4",
            device_image="netdojo/device:abc (sha256:0)",
        ),
        episodes=records,
        summary=summarize(records),
    )
    return Run(path=Path(path), result=result, trajectories=trajectories or {})
