"""Assessments split over machines: the schedule dealt to shards, the shard keys of a config,
and shard runs merged into the run of the whole schedule."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from netdojo.arena_commands import parse_shard
from netdojo.cli import app
from netdojo.errors import NetdojoError
from netdojo.judges import assessment
from netdojo.judges.assessment import (
    AssessmentConfig,
    Slot,
    full_schedule,
    run_assessment,
    schedule,
)
from netdojo.judges.journal import EPISODES, open_run, write_results
from netdojo.judges.provenance import instances_of
from netdojo.reports.compare import compare_runs
from netdojo.reports.leaderboard import leaderboard
from netdojo.reports.merge import MergeError, merge_runs
from netdojo.reports.records import (
    AssessmentResult,
    Budgets,
    EpisodeRecord,
    Outcome,
    Provenance,
)
from netdojo.reports.runs import Run, RunError, load_run, load_runs
from netdojo.reports.summary import summarize, summarized
from netdojo.scenarios.model import Scenario
from netdojo.servers.green import SKILL, AssessmentRequest
from netdojo.tools.contract import AgentReport

from .episodes import record, trajectory

BASE: dict[str, Any] = {
    "families": ["static-routing", "host-config"],
    "levels": [1, 2],
    "episodes": 5,
    "trials": 2,
    "seed": 4242,
}
SHARDS = 3
OUTCOMES: list[Outcome] = ["solved", "unsolved", "solved", "infra_error", "unsafe", "partial"]
AGENT = "heuristic (http://127.0.0.1:9010)"
runner = CliRunner()


def _config(**given: Any) -> AssessmentConfig:
    return AssessmentConfig.model_validate({**BASE, **given})


def _shard(index: int, count: int = SHARDS, **given: Any) -> AssessmentConfig:
    return _config(shard_index=index, num_shards=count, **given)


CONFIGS = [
    _config(),
    _config(episodes=None, seeds=[11, 12, 13], trials=1),
    _config(episodes=None, levels=[1, 2, 3], trials=3),
]


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("count", [1, 2, 3, 7, 20])
def test_the_shards_of_a_schedule_are_disjoint_and_make_it_whole(
    config: AssessmentConfig, count: int
) -> None:
    whole = full_schedule(config)
    assert len(whole) == config.slot_count
    shards = [
        schedule(AssessmentConfig.model_validate({**config.model_dump(), "shard_index": i,
                                                  "num_shards": count}))
        for i in range(count)
    ]  # fmt: skip
    indices = [slot.index for shard in shards for slot in shard]
    assert len(indices) == len(set(indices)), "no slot is in two shards"
    assert sorted(indices) == [slot.index for slot in whole], "every slot is in one shard"
    by_index = {slot.index: slot for slot in whole}
    for i, shard in enumerate(shards):
        assert all(by_index[slot.index] == slot for slot in shard), "slots keep their place"
        assert all(slot.index % count == i for slot in shard)


def test_a_shard_is_reproduced_alone() -> None:
    one = schedule(_shard(1))
    assert one == schedule(_shard(1)) and one
    assert one == [slot for slot in full_schedule(_config()) if slot.index % SHARDS == 1]
    assert one != schedule(_shard(1, seed=4243))


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"num_shards": 2, "seed": None}, r"num_shards=2 needs the assessment seed .*same"),
        ({"num_shards": 0}, r"num_shards must be a whole number from 1 to 20, got 0"),
        ({"num_shards": 21}, r"num_shards must be a whole number from 1 to 20, got 21"),
        ({"num_shards": 2.5}, r"num_shards must be a whole number from 1 to 20, got 2.5"),
        ({"num_shards": "2"}, r"num_shards must be a whole number from 1 to 20, got '2'"),
        ({"num_shards": True}, r"num_shards must be a whole number from 1 to 20, got True"),
        ({"shard_index": -1}, r"shard_index must be a whole number from 0 to 19, got -1"),
        ({"shard_index": 0.5}, r"shard_index must be a whole number from 0 to 19, got 0.5"),
        ({"shard_index": 3, "num_shards": 3}, r"shard_index must be below num_shards \(0 to 2"),
        ({"shard_index": 1}, r"shard_index must be below num_shards \(0 to 0 for num_shards=1"),
        ({"num_instances": 6}, r"num_instances is another name for episodes.*episodes=5"),
        ({"num_instances": 0, "episodes": None}, r"num_instances must be .* of at least 1, got 0"),
        ({"num_instances": 1.5}, r"num_instances must be a whole number of at least 1, got 1.5"),
        ({"episodes": None, "num_instances": 4, "seeds": [1]}, r"episodes \(num_instances\) or"),
        ({"num_shard": 2}, r"num_shard\n.*Extra inputs are not permitted"),
    ],
)
def test_bad_shard_keys_are_refused_with_the_valid_range(
    given: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        _config(**given)


def test_the_runners_keys_are_taken() -> None:
    a2a = _config(episodes=None, num_instances=4.0, shard_index=1.0, num_shards=2.0)
    assert (a2a.episodes, a2a.shard_index, a2a.num_shards) == (4, 1, 2)
    assert _config(num_instances=5).episodes == 5, "both names, one value"
    assert "num_instances" not in a2a.model_dump()
    seeds = _config(episodes=None, seeds=[1, 2], num_shards=2, seed=None)
    assert seeds.num_shards == 2, "explicit seeds fix the schedule without the assessment seed"


def test_the_green_agents_skill_names_every_config_key() -> None:
    for key in [*AssessmentConfig.model_fields, "num_instances"]:
        assert f"{key}" in SKILL.description, key
    assert "at most 20" in SKILL.description


def test_a_request_may_skip_only_its_shards_slots() -> None:
    agent = {"agent": "http://127.0.0.1:1"}
    assert AssessmentRequest(participants=agent, config=_shard(1), skip=[1, 4]).skip == [1, 4]
    with pytest.raises(ValidationError, match=r"slots \[0, 20\] are not in shard 1 of 3 of"):
        AssessmentRequest(participants=agent, config=_shard(1), skip=[0, 1, 20])


def test_run_shard_is_the_config_keys(tmp_path: Path) -> None:
    assert parse_shard("0/2") == (0, 2) and parse_shard(" 3 / 4 ") == (3, 4)
    for bad in ("2", "a/2", "-1/2", "1/2/3", "1.0/2"):
        with pytest.raises(NetdojoError, match=r"--shard takes I/N"):
            parse_shard(bad)
    index, count = parse_shard("1/3")
    config = {**BASE, "shard_index": index, "num_shards": count}
    _, spec, _ = open_run("noop", config, tmp_path / "one", None)
    assert spec.config == _shard(1)
    with pytest.raises(NetdojoError, match=r"bad assessment config: .*needs the assessment seed"):
        open_run("noop", {**config, "seed": None}, tmp_path / "two", None)
    with pytest.raises(NetdojoError, match=r"shard_index must be below num_shards"):
        open_run("noop", {**config, "shard_index": 3}, tmp_path / "three", None)


async def _nobody(view: Any) -> AgentReport:
    return AgentReport()


def _assess(config: AssessmentConfig, monkeypatch: pytest.MonkeyPatch) -> AssessmentResult:
    """``config``'s schedule through the real assessment, each episode's record made up from its
    scenario and trial instead of run on a lab (every outcome, with and without a verdict)."""

    async def episode(
        scenario: Scenario,
        agent: Any,
        budgets: Budgets,
        episode_id: str,
        trial: int = 0,
        calibration: bool = False,
        task: str = "repair",
    ) -> EpisodeRecord:
        outcome = OUTCOMES[(scenario.seed % 97 + trial) % len(OUTCOMES)]
        made = record(
            episode_id,
            outcome,
            safe=outcome != "unsafe",
            family=scenario.family,
            level=scenario.level,
            instance=scenario.id,
            trial=trial,
            kind=scenario.kind,
            calls=scenario.seed % 9 + 1,
            wall=float(scenario.seed % 13 + trial),
        )
        made = made.model_copy(update={"seed": scenario.seed})
        made.trajectory = trajectory(episode_id)
        return made

    def provenance(
        scenarios: Sequence[Scenario] = (),
        budgets: Budgets | None = None,
        assessment_seed: int | None = None,
    ) -> Provenance:
        return Provenance(
            netdojo="0.1.0", kathara="3.8.3", mcp="2.3.0", python="3.11.7", host="Linux",
            assessment_seed=assessment_seed, budgets=budgets, instances=instances_of(scenarios),
        )  # fmt: skip

    async def keep(slot: Slot, made: EpisodeRecord) -> None:
        return None

    monkeypatch.setattr(assessment, "run_episode_with_retry", episode)
    monkeypatch.setattr(assessment, "provenance", provenance)

    async def run() -> AssessmentResult:
        return summarized(await run_assessment(config, AGENT, lambda s, sc: _nobody, keep))

    return anyio.run(run)


def _written(result: AssessmentResult, out: Path) -> Path:
    """The result written as `netdojo run` writes it."""
    listed = [
        {"episode_id": r.episode_id, "trajectory": r.trajectory.model_dump(mode="json")}
        for r in result.episodes
        if r.trajectory is not None
    ]
    write_results(out, result, listed)
    return out


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Path]]:
    """The folders of three shards of one assessment."""
    folder = tmp_path_factory.mktemp("shards")
    with pytest.MonkeyPatch.context() as monkeypatch:
        yield [_written(_assess(_shard(i), monkeypatch), folder / f"shard-{i}") for i in range(3)]


def _without_ids(records: Sequence[EpisodeRecord]) -> list[dict[str, Any]]:
    """The records but for their random ids (which the agent's answer echoes)."""
    return [r.model_dump(exclude={"episode_id": True, "verdict": {"detail"}}) for r in records]


def test_shards_merge_into_the_run_of_the_whole_schedule(
    shards: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = _assess(_config(), monkeypatch)
    parts = load_runs(shards)
    assert [len(run.result.episodes) for run in parts] == [4, 3, 3]
    out = tmp_path / "merged"
    done = runner.invoke(app, ["merge", *map(str, reversed(shards)), "--out", str(out)])
    assert done.exit_code == 0, done.output
    merged = load_run(out)
    assert merged.result.summary == whole.summary, "the summary is recomputed over every episode"
    assert merged.summary == summarize(whole.episodes)
    assert merged.result.summary.trials is not None and merged.result.summary.excluded
    assert _without_ids(merged.result.episodes) == _without_ids(whole.episodes)
    assert merged.result.config.model_dump() == whole.config.model_dump()
    assert (merged.result.config.shard_index, merged.result.config.num_shards) == (0, 1)
    assert merged.result.participant == AGENT
    assert merged.result.provenance.instances == whole.provenance.instances
    assert [len(p.instances) for p in merged.result.provenance.shards] == [4, 3, 3]
    assert set(merged.trajectories) == {r.episode_id for run in parts for r in run.result.episodes}
    for name in ("summary.md", "report.html"):
        assert (out / name).is_file()
    alone = Run(path=tmp_path / "whole", result=whole)
    assert compare_runs(alone, merged).pairs == whole.summary.counted
    board = leaderboard([merged]).entries[0]
    assert (board.agent, board.episodes) == ("heuristic", whole.summary.counted)
    for command in (["report", str(out)], ["leaderboard", str(out), "--json"],
                    ["export", str(out), "--format", "sft"]):  # fmt: skip
        assert runner.invoke(app, command).exit_code == 0, command


def _changed(run: Run, **update: Any) -> Run:
    return Run(path=run.path, result=run.result.model_copy(update=update), trajectories={})


def _refused(runs: Sequence[Run], message: str, out: Path = Path("/nowhere/merged")) -> None:
    with pytest.raises(MergeError, match=message):
        merge_runs(runs, out)


def test_a_missing_or_repeated_shard_is_refused(shards: list[Path]) -> None:
    runs = load_runs(shards)
    _refused(runs[:1] + runs[2:], r"shards \[1\] of 3 are missing: give the folder of every shard")
    _refused([*runs, runs[1]], r"shard 1 of 3 is given twice: .*shard-1, .*shard-1")
    _refused([], "give the folder of every shard")


def test_a_missing_repeated_or_stray_slot_is_refused(shards: list[Path]) -> None:
    runs = load_runs(shards)
    episodes = runs[1].result.episodes
    _refused([runs[0], _changed(runs[1], episodes=episodes[1:]), runs[2]],
             r"shard-1 lacks slots \[1\]: finish a shard with `netdojo run --resume")  # fmt: skip
    _refused([runs[0], _changed(runs[1], episodes=[*episodes, episodes[0]]), runs[2]],
             r"slot 1 is recorded twice in .*shard-1")  # fmt: skip
    stray = runs[0].result.episodes[0]
    _refused([runs[0], _changed(runs[1], episodes=[*episodes, stray]), runs[2]],
             r"shard-1: slot 0 is not shard 1's but shard 0's")  # fmt: skip
    beyond = stray.model_copy(update={"slot": 21})
    _refused([runs[0], runs[1], _changed(runs[2], episodes=[beyond])],
             r"slot 21 is outside the schedule of 10")  # fmt: skip
    unplaced = stray.model_copy(update={"slot": None})
    _refused([_changed(runs[0], episodes=[unplaced]), *runs[1:]], r"names no schedule slot")


def test_mixed_configs_agents_or_builds_are_refused(shards: list[Path]) -> None:
    runs = load_runs(shards)
    other = _changed(runs[2], config=_shard(2, time_budget_s=60.0))
    _refused([*runs[:2], other], r"shard-2 ran another config .*time_budget_s 600.0 vs 60.0")
    split = _changed(runs[1], config=_shard(1, count=2))
    _refused([*runs[:1], split, runs[2]], r"split the schedule different ways")
    vandal = _changed(runs[1], participant="vandal (http://127.0.0.1:9010)")
    _refused([runs[0], vandal, runs[2]], r"different agents: heuristic in .*vandal in")
    provenance = runs[2].result.provenance
    newer = _changed(runs[2], provenance=provenance.model_copy(update={"netdojo": "0.2.0"}))
    _refused([*runs[:2], newer], r"different netdojo versions \(0.1.0 in .*0.2.0 in")
    instance = provenance.instances[0]
    twin = [r for r in runs[0].result.provenance.instances if r.scenario_id == instance.scenario_id]
    assert twin, "a two-trial instance lies in two shards"
    forged = provenance.model_copy(
        update={"instances": [instance.model_copy(update={"digest": "0" * 16})]}
    )
    _refused([*runs[:2], _changed(runs[2], provenance=forged)], r"generated differently")
    copied = runs[1].result.episodes[0].model_copy(update={"slot": 2})
    twice = _changed(runs[2], episodes=[copied, *runs[2].result.episodes[1:]])
    _refused([*runs[:2], twice], r"episode id .* is in .*shard-1 and .*shard-2")


def test_shards_reached_at_their_own_urls_merge_under_the_agents_name(shards: list[Path]) -> None:
    runs = load_runs(shards)
    elsewhere = _changed(runs[1], participant="heuristic (http://10.0.0.2:9010)")
    merged = merge_runs([runs[0], elsewhere, runs[2]], Path("/nowhere/merged"))
    assert merged.result.participant == "heuristic" and merged.agent == "heuristic"


def test_shards_with_explicit_seeds_need_not_share_the_drawn_seed(tmp_path: Path) -> None:
    runs = []
    for index in range(2):
        config = _config(episodes=None, seeds=[5, 6], trials=1, seed=None,
                         shard_index=index, num_shards=2)  # fmt: skip
        episodes = [record(f"e{s.index}", "solved").model_copy(update={"slot": s.index})
                    for s in schedule(config)]  # fmt: skip
        result = AssessmentResult(
            participant=AGENT, config=config, episodes=episodes, summary=summarize(episodes),
            provenance=Provenance(netdojo="0", kathara="0", mcp="0", python="3", host="test"),
        )  # fmt: skip
        runs.append(Run(path=tmp_path / f"s{index}", result=result))
    assert runs[0].result.config.seed != runs[1].result.config.seed
    assert len(merge_runs(runs, tmp_path / "merged").result.episodes) == 8


def test_the_merged_run_goes_to_a_folder_of_its_own(shards: list[Path], tmp_path: Path) -> None:
    runs = load_runs(shards)
    _refused(runs, r"--out .*shard-0 is one of the shards", out=shards[0])
    (tmp_path / "results.json").write_text("{}")
    _refused(runs, r"already holds a run \(results.json\)", out=tmp_path)
    unfinished = tmp_path / "unfinished"
    unfinished.mkdir()
    (unfinished / EPISODES).write_text("")
    with pytest.raises(RunError, match=r"unfinished run .*netdojo run --resume .*unfinished"):
        load_run(unfinished)
    done = runner.invoke(app, ["merge", str(shards[0]), "--out", str(tmp_path / "m")])
    assert isinstance(done.exception, MergeError) and "missing" in str(done.exception)
