"""The run journal: episodes kept as they end, read back after a kill, merged on resume."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from netdojo.errors import NetdojoError
from netdojo.judges.assessment import AssessmentConfig
from netdojo.judges.journal import (
    EPISODES,
    RESULTS,
    Journal,
    JournalError,
    RunSpec,
    merge,
    open_run,
)
from netdojo.reports.records import AssessmentResult, EpisodeRecord, Provenance
from netdojo.reports.summary import summarize, summarized
from netdojo.servers.green import AssessmentRequest
from netdojo.tools.trajectory import Trajectory

CONFIG = AssessmentConfig(families=["static-routing"], seeds=[1, 2, 3], seed=5)


def _record(slot: int, outcome: str = "unsolved") -> EpisodeRecord:
    return EpisodeRecord(
        episode_id=f"ep-{slot}",
        scenario_id=f"static-routing-L1-s{slot + 1}",
        family="static-routing",
        level=1,
        seed=slot + 1,
        kind="reactive",
        outcome=outcome,  # type: ignore[arg-type]
        slot=slot,
    )


def _result(records: list[EpisodeRecord]) -> AssessmentResult:
    provenance = Provenance(netdojo="0", kathara="0", mcp="0", python="3", host="test")
    return AssessmentResult(
        participant="noop (http://127.0.0.1:1)",
        config=CONFIG,
        provenance=provenance,
        episodes=records,
        summary=summarize(records),
    )


def test_episodes_are_kept_with_their_trajectories_and_read_back(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.start(RunSpec(agent="noop", config=CONFIG))
    journal.append(_record(1), Trajectory(episode="ep-1"))
    journal.append(_record(0, "solved"), None)
    assert [(r.slot, r.outcome) for r in journal.records()] == [(1, "unsolved"), (0, "solved")]
    assert (tmp_path / "trajectories" / "ep-1.json").exists()
    assert Journal(tmp_path).spec() == RunSpec(agent="noop", config=CONFIG)


def test_a_line_cut_short_by_a_kill_is_ignored_but_a_corrupt_one_is_not(
    tmp_path: Path,
) -> None:
    journal = Journal(tmp_path)
    journal.start(RunSpec(agent="noop", config=CONFIG))
    journal.append(_record(0), None)
    whole = (tmp_path / EPISODES).read_text()
    (tmp_path / EPISODES).write_text(whole + whole[: len(whole) // 2])
    assert [r.slot for r in journal.records()] == [0]
    (tmp_path / EPISODES).write_text("{not json}\n" + whole)
    with pytest.raises(JournalError, match=":1 is not an episode record"):
        journal.records()


def test_a_fresh_start_forgets_the_episodes_and_result_of_an_earlier_run(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.start(RunSpec(agent="noop", config=CONFIG))
    journal.append(_record(0), None)
    (tmp_path / RESULTS).write_text("{}")
    journal.start(RunSpec(agent="heuristic", config=CONFIG))
    assert journal.records() == [] and not (tmp_path / RESULTS).exists()


def test_merge_puts_every_slot_in_schedule_order_and_keeps_what_was_recorded() -> None:
    earlier = [_record(2, "solved"), _record(0, "solved")]
    rerun = _record(0, "timeout")  # a slot that somehow ran again must not replace the record
    merged = merge(_result([_record(1), rerun]), earlier)
    assert [(r.slot, r.outcome) for r in merged.episodes] == [
        (0, "solved"),
        (1, "unsolved"),
        (2, "solved"),
    ]
    assert not isinstance(merged, AssessmentResult)  # no summary of the episodes it replaced
    summary = summarized(merged).summary
    assert summary.episodes == 3 and summary.outcomes == {"solved": 2, "unsolved": 1}


def test_a_request_may_skip_only_slots_of_its_schedule() -> None:
    agent = {"agent": "http://127.0.0.1:1"}
    request = AssessmentRequest(participants=agent, config=CONFIG, skip=[0, 2])
    assert request.skip == [0, 2]
    with pytest.raises(ValidationError, match=r"slots \[-1, 3\] are not in the schedule of 3"):
        AssessmentRequest(participants=agent, config=CONFIG, skip=[3, -1, 1])


def test_a_new_run_never_overwrites_an_unfinished_one(tmp_path: Path) -> None:
    config = {"families": ["static-routing"], "seeds": [1, 2, 3], "seed": 5}
    journal, spec, earlier = open_run("noop", config, tmp_path, None)
    assert earlier == [] and spec.config == CONFIG
    journal.start(spec)
    journal.append(_record(0), None)
    with pytest.raises(NetdojoError, match=r"unfinished run .*--resume"):
        open_run("noop", config, tmp_path, None)
    _, resumed, recorded = open_run(None, {}, tmp_path, tmp_path)
    assert resumed == spec and [r.slot for r in recorded] == [0]
    with pytest.raises(NetdojoError, match="--agent"):
        open_run(None, config, tmp_path / "other", None)
    with pytest.raises(NetdojoError, match=r"bad assessment config: .*unknown families"):
        open_run("noop", {"families": ["nope"]}, tmp_path / "other", None)
    with pytest.raises(JournalError, match="no run to resume"):
        open_run(None, {}, tmp_path / "other", tmp_path / "other")
