"""The AgentBeats files: the scenarios name real commands and a valid config, and the
leaderboard queries give netdojo's own figures over gateway-shaped result files."""

from __future__ import annotations

import random
import shlex
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import typer

from netdojo.cli import app
from netdojo.clients.catalogue import PURPLE_AGENTS
from netdojo.judges.assessment import AssessmentConfig
from netdojo.reports.records import (
    NOT_THE_AGENTS,
    Assessment,
    ConfigRecord,
    Outcome,
    Provenance,
)
from netdojo.reports.summary import summarized
from tests.agentbeats_board import (
    COMPETITION,
    QUERIES,
    ROLE,
    Submission,
    artifacts,
    check,
    queries,
)

from .episodes import record, trajectory

LOCAL = COMPETITION / "scenario.toml"
LEADERBOARD = COMPETITION / "scenario.leaderboard.toml"
CONFIG_KEYS = {"families", "levels", "seed", "episodes"}


def _scenario(path: Path) -> dict[str, Any]:
    return tomllib.loads(path.read_text())


def _context(cmd: str) -> Any:
    """The netdojo command ``cmd`` names, parsed by the CLI itself (typer's click context): an
    unknown command, option or value raises."""
    program, name, *args = shlex.split(cmd)
    assert program == "netdojo", cmd
    commands = getattr(typer.main.get_command(app), "commands", {})
    assert name in commands, f"{cmd}: no command {name!r}"
    return commands[name].make_context(name, args)


def test_the_local_scenario_starts_agents_with_real_commands() -> None:
    scenario = _scenario(LOCAL)
    green = _context(scenario["green_agent"]["cmd"])
    assert green.command.name == "green"
    (participant,) = scenario["participants"]
    assert participant["role"] == ROLE
    purple = _context(participant["cmd"])
    assert purple.command.name == "purple"
    assert purple.params["name"] in PURPLE_AGENTS
    for context, endpoint in (
        (green, scenario["green_agent"]["endpoint"]),
        (purple, participant["endpoint"]),
    ):
        url = urlsplit(endpoint)
        assert (context.params["host"], context.params["port"]) == (url.hostname, url.port)


@pytest.mark.parametrize(
    ("cmd", "error"),
    [
        ("netdojo green --listen 0.0.0.0", "No such option"),
        ("netdojo purple heuristic --port x", "valid integer"),
        ("netdojo serve --port 9009", "no command"),
    ],
)
def test_a_command_the_cli_lacks_is_caught(cmd: str, error: str) -> None:
    with pytest.raises(Exception, match=error):
        _context(cmd)


def test_both_scenarios_hand_the_green_agent_a_valid_config() -> None:
    for path in (LOCAL, LEADERBOARD):
        config = _scenario(path)["config"]
        assert set(config) >= CONFIG_KEYS, path
        AssessmentConfig.model_validate(config)


def test_the_leaderboard_scenario_names_agents_by_agentbeats_id() -> None:
    scenario = _scenario(LEADERBOARD)
    assert set(scenario["green_agent"]) == {"agentbeats_id", "env"}
    (participant,) = scenario["participants"]
    assert set(participant) == {"name", "agentbeats_id", "env"}
    assert participant["name"] == ROLE
    for query in queries():
        assert f"participants.{ROLE}" in query["query"], query["name"]


OUTCOMES: list[Outcome] = [
    "solved", "partial", "unsolved", "unsafe", "agent_error", "timeout", *NOT_THE_AGENTS,
]  # fmt: skip
FAMILIES = ["static-routing", "host-config"]


def _results(
    agent: str, seed: int, episodes: int, shards: int, weights: list[int]
) -> list[dict[str, Any]]:
    """One assessment of ``agent`` (two trials per instance) as ``shards`` shards, each shard's
    artifacts as the green agent ends with them."""
    rng = random.Random(seed)
    config = ConfigRecord(families=FAMILIES, levels=[1, 2], episodes=episodes // 2, trials=2)
    records = []
    for slot in range(episodes):
        outcome = rng.choices(OUTCOMES, weights)[0]
        name = f"{agent}-{seed}-{slot}"
        episode = record(
            name,
            outcome,
            family=FAMILIES[slot // 2 % 2],
            level=1 + slot // 4 % 2,
            instance=f"{agent}-{seed}-instance-{slot // 2}",
            trial=slot % 2,
            correct=outcome == "solved" or (outcome == "unsafe" and rng.random() < 0.5),
            safe=outcome != "unsafe" and not (outcome == "timeout" and rng.random() < 0.5),
            calls=rng.randint(1, 40),
            wall=rng.uniform(0.5, 300.0),
        )
        episode.slot = slot
        if episode.verdict is not None and agent == "llm" and outcome != "agent_error":
            effort = episode.verdict.effort
            effort.turns = rng.randint(1, 30)
            effort.tokens_in, effort.tokens_out = rng.randint(1, 90_000), rng.randint(1, 9_000)
        if slot % 3 == 0:
            episode.trajectory = trajectory(name)
        records.append(episode)
    provenance = Provenance(
        netdojo="0.1.0", kathara="3.8.3", mcp="2.3.0", python="3.11.7", host="Linux 6.1 x86_64"
    )
    return [
        artifacts(
            summarized(
                Assessment(
                    participant=f"{agent} (http://127.0.0.1:9019)",
                    config=config,
                    provenance=provenance,
                    episodes=records[index::shards],
                )
            )
        )
        for index in range(shards)
    ]


def _submissions() -> list[Submission]:
    """Four agents: shards merged in one file, shards in a file each, several submissions of
    one agent, a failed run, and an agent none of whose episodes count."""
    noop = _results("noop", 4, 12, 2, [0, 0, 8, 0, 1, 1, 1, 0, 0])
    return [
        Submission("id-heuristic", _results("heuristic", 1, 24, 3, [6, 2, 2, 1, 1, 1, 1, 1, 1])),
        Submission("id-heuristic", _results("heuristic", 2, 10, 1, [6, 2, 2, 1, 1, 1, 1, 1, 1])),
        Submission("id-heuristic", [], status="failed"),
        Submission("id-llm", _results("llm", 3, 16, 1, [4, 2, 2, 2, 2, 2, 1, 1, 0])),
        Submission("id-noop", noop[:1]),
        Submission("id-noop", noop[1:]),
        Submission("id-broken", _results("broken", 5, 4, 1, [0, 0, 0, 0, 0, 0, 1, 1, 1])),
    ]


def test_the_leaderboard_queries_give_netdojos_figures(tmp_path: Path) -> None:
    tables, problems = check(tmp_path, _submissions())
    assert problems == []
    assert set(tables) == {query["name"] for query in queries()}
    board = tables["Leaderboard"]
    assert [row["Rank"] for row in board] == [1, 2, 3, 4]
    assert {row["id"] for row in board} == {"id-heuristic", "id-llm", "id-noop", "id-broken"}
    broken = next(row for row in board if row["id"] == "id-broken")
    assert (broken["Episodes"], broken["Excluded"], broken["Score high %"]) == (0, 4, 100.0)
    effort = {row["id"]: row for row in tables["Effort"]}
    assert effort["id-llm"]["Tool calls low"] is not None  # one document: its interval is read
    assert effort["id-heuristic"]["Tool calls low"] is None  # four documents pooled
    assert effort["id-llm"]["Tokens in"] > 0 and effort["id-noop"]["Tokens in"] is None


def test_a_query_that_counts_the_harness_failures_is_caught(tmp_path: Path) -> None:
    counted = QUERIES.read_text().replace("'infra_error', 'judge_error', ", "'judge_error', ")
    assert counted != QUERIES.read_text()
    wrong = tmp_path / "leaderboard.json"
    wrong.write_text(counted)
    _, problems = check(tmp_path / "files", _submissions(), wrong)
    assert any("Excluded" in p for p in problems), problems
    assert any("Safe low %" in p for p in problems), problems
