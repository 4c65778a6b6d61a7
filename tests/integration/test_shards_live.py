"""Sharded assessments on live labs: two agents, each run as two shards by `netdojo run --shard`,
merged by `netdojo merge`; the merge holds every instance of the unsharded schedule once, with
an outcome each agent can have, and the AgentBeats leaderboard queries over the shards' result
files give `netdojo leaderboard`'s figures. (That a sharded run's outcomes are the unsharded
run's is shown through the agent images, in tests/integration/test_images.py.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from netdojo.judges.assessment import AssessmentConfig, full_schedule
from netdojo.reports.runs import load_run
from tests.agentbeats_board import Submission, check

NETDOJO = str(Path(sys.executable).parent / "netdojo")
CONFIG = ["--families", "static-routing", "--levels", "1", "--episodes", "2", "--seed", "17"]
AGENTS = {"noop": {"unsolved"}, "vandal": {"unsafe", "unsolved"}}
"""Each agent and the outcomes it can have (a vandal's damage may spare every guard)."""
SCHEDULE = AssessmentConfig(families=["static-routing"], levels=[1], episodes=2, seed=17)


def _netdojo(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([NETDOJO, *args], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done


def _episodes(folder: Path) -> list[tuple[str, int, str]]:
    run = load_run(folder)
    return sorted((e.family, e.seed, e.outcome) for e in run.result.episodes)


def _scheduled() -> list[tuple[str, int]]:
    return sorted((slot.family, slot.seed) for slot in full_schedule(SCHEDULE))


@pytest.mark.timeout(1800)
def test_shards_merge_to_the_unsharded_run_and_the_queries_agree_with_the_leaderboard(
    tmp_path: Path,
) -> None:
    submissions = []
    for agent, outcomes in AGENTS.items():
        shards = []
        for index in range(2):
            out = tmp_path / f"{agent}-shard{index}"
            _netdojo("run", "--agent", agent, *CONFIG, "--shard", f"{index}/2", "--out", str(out))
            shards.append(out)
        merged = tmp_path / f"{agent}-merged"
        _netdojo("merge", *map(str, shards), "--out", str(merged))
        episodes = _episodes(merged)
        assert [(family, seed) for family, seed, _ in episodes] == _scheduled(), agent
        assert {outcome for _, _, outcome in episodes} <= outcomes, (agent, episodes)
        submissions.append(Submission(agent_id=f"netdojo-{agent}", shards=shards))
    tables, problems = check(tmp_path / "board", submissions)
    assert not problems, problems
    ranked = _netdojo("leaderboard", *(str(tmp_path / f"{a}-merged") for a in AGENTS), "--json")
    board = json.loads(ranked.stdout)
    assert board, "the leaderboard lists the merged runs"
    assert tables, "every query returned a table"
