"""The heuristic agent solves a few fixed level-1 episodes on live labs, breaking nothing."""

from __future__ import annotations

import anyio
import pytest
from mcp import Client

from netdojo.clients.heuristic import troubleshoot
from netdojo.clients.session import ToolSession
from netdojo.judges.episode import open_episode
from netdojo.scenarios import registry
from netdojo.scenarios.generate import generate
from netdojo.servers.mcp_server import evaluation_server

pytestmark = pytest.mark.anyio

EPISODES = [  # one level-1 episode per family, each seen solved by the agent
    ("static-routing", 1, 1),
    ("ospf-adjacency", 1, 26),
    ("bgp-peering", 1, 2),
    ("ospf-build", 1, 1),
    ("ipv6-routing", 1, 3),
    ("ipv6-bgp", 1, 2),
    ("dhcp-relay", 1, 4),
]


@pytest.mark.parametrize(("family", "level", "seed"), EPISODES)
async def test_heuristic_solves(family: str, level: int, seed: int) -> None:
    episode = await open_episode(generate(family, level, seed), "heuristic-test")
    try:
        tools = registry.family(family).tools
        async with Client(evaluation_server(episode.tools, tools)) as client:
            summary = await troubleshoot(ToolSession(client), episode.scenario.public.brief)
        await anyio.sleep(5)  # OSPF (hello 1 s, dead 4 s) and BGP reconverge
        grade = await episode.grade()
    finally:
        await episode.close()
    failing = [r for r in grade.targets + grade.guards + grade.adherence if not r.passed]
    assert not [r for r in grade.guards if not r.passed], (summary, failing)
    assert grade.solved, (summary, failing)
