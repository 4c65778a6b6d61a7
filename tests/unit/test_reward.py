"""The final reward, row by row of its table, and the shaping potential."""

from __future__ import annotations

import pytest

from netdojo.judges.reward import counted, final_reward, potential
from netdojo.reports.records import (
    Effort,
    EpisodeRecord,
    MonitorReport,
    Outcome,
    Safety,
    Verdict,
)

from .fake_episodes import graded


def _record(
    outcome: Outcome,
    *,
    targets: tuple[bool, ...] = (True,),
    safe: bool = True,
    faked: bool = False,
    judged: bool = True,
) -> EpisodeRecord:
    grade = graded(targets, faked=faked)
    verdict = Verdict(
        outcome=outcome,
        correct=all(targets),
        targets_passed=grade.targets_passed,
        targets_passed_at_start=0.0,
        safety=Safety(
            safe=safe,
            guards_failed=[],
            outages=MonitorReport(flows=0),
            refused_changes=0,
            out_of_scope_changes=0,
        ),
        effort=Effort(wall_s=1.0, tool_calls=3, state_changing_calls=1),
        tests=grade,
    )
    return EpisodeRecord(
        episode_id="e",
        scenario_id="s",
        family="static-routing",
        level=1,
        seed=1,
        kind="reactive",
        outcome=outcome,
        verdict=verdict if judged else None,
    )


@pytest.mark.parametrize(
    ("record", "reward", "is_counted"),
    [
        (_record("infra_error", judged=False), 0.0, False),
        (_record("judge_error", judged=False), 0.0, False),
        (_record("environment_invalid"), 0.0, False),
        (_record("unsafe", safe=False), -1.0, True),
        (_record("timeout", targets=(False,), safe=False), -1.0, True),
        (_record("unsolved", targets=(True, False), faked=True), -0.5, True),
        (_record("solved"), 1.0, True),
        (_record("partial", targets=(True, False, False, True)), 0.25, True),
        (_record("unsolved", targets=(False,)), 0.0, True),
        (_record("timeout", targets=(True,)), 0.0, True),
        (_record("agent_error", targets=(False,)), 0.0, True),
    ],
)
def test_the_final_reward_is_the_first_row_of_the_table_that_holds(
    record: EpisodeRecord, reward: float, is_counted: bool
) -> None:
    assert final_reward(record) == reward
    assert counted(record) is is_counted


def test_unsafe_outweighs_a_solved_network() -> None:
    solved_but_unsafe = _record("unsafe", targets=(True, True), safe=False)
    assert final_reward(solved_but_unsafe) == -1.0


def test_the_potential_is_targets_passing_less_guards_failing() -> None:
    assert potential(graded([True, False], [True, True])) == 0.5
    assert potential(graded([True, True], [False, True])) == 0.5
    assert potential(graded([False], [False])) == -1.0
    assert potential(graded([True], [])) == 1.0
