"""The agents as container images, end to end: built on the device image without a registry,
started as AgentBeats' compose runner starts them (``--host``, ``--port``, ``--card-url`` on a
network of their own, the green agent with the host's Docker socket and no other privilege),
and a two-shard assessment through their endpoints that merges into the run the same config
makes in process. The green agent's labs are the host's like any netdojo lab: the host's reaper
leaves them alone while it runs, and nothing of the test is left afterwards."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from typer.testing import CliRunner

from netdojo.cli import app
from netdojo.clients.assessor import assess
from netdojo.clients.catalogue import policy_factory
from netdojo.errors import NetdojoError
from netdojo.image_commands import GREEN_PORT, PURPLE_PORT, Role, agent_spec
from netdojo.judges.assessment import AssessmentConfig, run_assessment
from netdojo.judges.journal import write_results
from netdojo.labs.engine import client
from netdojo.labs.image.agents import VENV_BIN, ImageBuild, build_agent_image
from netdojo.labs.reaper import netdojo_labs, reap
from netdojo.reports.merge import merge_runs
from netdojo.reports.records import AssessmentResult, EpisodeRecord
from netdojo.reports.runs import load_run, load_runs, save_run

from .arena import in_process
from .containers import agent_network, still_there
from .leftovers import leftovers, new_since

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(2400)]
PURPLE = "heuristic"
SHARDS = 2
CONFIG: dict[str, Any] = {"families": ["static-routing"], "levels": [1], "seed": 7, "episodes": 2}
WHERE_AM_I = (
    "from netdojo.labs.container import own_container; "
    "from netdojo.labs.host_read import can_enter; print(can_enter(), own_container())"
)
REAP_CHECKS = 2


@pytest.fixture(scope="module")
def images() -> dict[str, ImageBuild]:
    """Both images, built unless this netdojo's exist already."""
    built = {}
    for role, name in ((Role.green, None), (Role.purple, PURPLE)):
        build = build_agent_image(agent_spec(role, name))
        print(f"{build.action} {build.tag} in {build.seconds:.1f}s {build.stages}")
        built[role.value] = build
    return built


def test_the_images_are_amd64_and_the_command_finds_them_built(
    images: dict[str, ImageBuild],
) -> None:
    for build in images.values():
        attrs = client().images.get(build.tag).attrs
        assert attrs["Architecture"] == "amd64"
        assert attrs["Config"]["Healthcheck"]["Test"][0] == "CMD"
        assert attrs["Config"]["Entrypoint"][0] == f"{VENV_BIN}/netdojo"
    done = CliRunner().invoke(app, ["image", "build", "green"])
    assert done.exit_code == 0, done.output
    assert images["green"].tag in done.output and "cached" in done.output


async def test_a_green_agent_without_the_docker_socket_says_what_it_needs(
    images: dict[str, ImageBuild],
) -> None:
    with agent_network() as agents:
        green, url = agents.start(images["green"].tag, GREEN_PORT)
        card = agents.wait_for_card(green, url)
        request = {"participants": {"agent": "http://192.0.2.1:9"}, "config": {"episodes": 1}}
        with pytest.raises(NetdojoError, match="mount the Docker host's socket") as refused:
            await assess(url, request)
        ids = [*agents.containers, agents.network_id]
    assert "-v /var/run/docker.sock:/var/run/docker.sock" in card["description"]
    assert "labs cannot run" in str(refused.value)
    assert still_there(ids) == []


async def _reap_while_running(green: str, spared: list[str]) -> None:
    """Run the host's reaper while the green agent's labs are up: none of them may go."""
    while len(spared) < REAP_CHECKS:
        labs = await anyio.to_thread.run_sync(netdojo_labs)
        theirs = {lab.name: lab.alive for lab in labs if lab.owner.endswith(f"@{green}")}
        if theirs:
            assert all(theirs.values()), f"a running green agent's labs count as dead: {theirs}"
            report = await anyio.to_thread.run_sync(reap)
            assert not set(theirs) & set(report.labs), f"the reaper removed {report.labs}"
            spared.extend(theirs)
        await anyio.sleep(2.0)


def _outcomes(episodes: list[EpisodeRecord]) -> list[tuple[str, str, int, int, int, str]]:
    return sorted((e.scenario_id, e.family, e.level, e.seed, e.trial, e.outcome) for e in episodes)


async def _in_process() -> list[EpisodeRecord]:
    """The same config unsharded, the built-in agent run in this process."""
    make = policy_factory(PURPLE)

    async def nothing(*_: object) -> None:
        return None

    result = await run_assessment(
        AssessmentConfig.model_validate(CONFIG),
        PURPLE,
        lambda slot, scenario: in_process(make()),
        nothing,
    )
    return list(result.episodes)


async def test_two_shards_in_containers_merge_into_the_in_process_run(
    images: dict[str, ImageBuild], tmp_path: Path
) -> None:
    before = leftovers()
    results: list[dict[str, Any]] = [{} for _ in range(SHARDS)]
    spared: list[str] = []
    with agent_network() as agents:
        purple, purple_url = agents.start(images["purple"].tag, PURPLE_PORT)
        green, green_url = agents.start(images["green"].tag, GREEN_PORT, socket=True)
        try:
            agents.wait_for_card(purple, purple_url)
            card = agents.wait_for_card(green, green_url)
            assert card["url"].startswith(green_url)
            assert agents.wait_healthy(green) == "healthy"
            probe = ["curl", "-fsS", f"http://localhost:{GREEN_PORT}/.well-known/agent-card.json"]
            assert json.loads(agents.run_in(green, probe))["name"] == "netdojo-green", (
                "the compose runner's health check"
            )
            where = agents.run_in(green, [f"{VENV_BIN}/python", "-c", WHERE_AM_I]).split()
            assert where == ["False", green], "in a container, devices are read through Docker"

            async def shard(index: int) -> None:
                config = {**CONFIG, "shard_index": index, "num_shards": SHARDS}
                request = {"participants": {"agent": purple_url}, "config": config}
                results[index] = await assess(green_url, request)

            async with anyio.create_task_group() as watching:
                watching.start_soon(_reap_while_running, green, spared)
                async with anyio.create_task_group() as shards:
                    for index in range(SHARDS):
                        shards.start_soon(shard, index)
                watching.cancel_scope.cancel()
            theirs = [lab.name for lab in netdojo_labs() if lab.owner.endswith(f"@{green}")]
            assert theirs == [], "the green agent tears its labs down"
        finally:
            print(f"green agent's log:\n{agents.log(green)}")
        ids = [*agents.containers, agents.network_id]
    assert still_there(ids) == []
    assert spared, "the reaper ran while the green agent's labs were up"

    folders = []
    for index, artifacts in enumerate(results):
        folder = tmp_path / f"shard-{index}"
        result = AssessmentResult.model_validate(artifacts["results"])
        assert len(result.episodes) == CONFIG["episodes"] // SHARDS
        write_results(folder, result, artifacts["trajectories"]["trajectories"])
        folders.append(folder)
    save_run(merge_runs(load_runs(folders), tmp_path / "merged"))
    merged = load_run(tmp_path / "merged").result
    alone = await _in_process()
    print(json.dumps([o[-1] for o in _outcomes(merged.episodes)]))
    assert len(merged.episodes) == CONFIG["episodes"]
    assert _outcomes(merged.episodes) == _outcomes(alone)
    assert new_since(before) == {}
