"""The arena's parts put together as the command line does: a policy run in process against
an in-memory MCP server, and a built-in purple agent served over A2A."""

from __future__ import annotations

from starlette.applications import Starlette

from netdojo.clients import inprocess
from netdojo.clients.agents import Policy
from netdojo.clients.catalogue import PURPLE_AGENTS, policy_factory
from netdojo.clients.purple import CallerContextBuilder, PurpleExecutor
from netdojo.servers.apps import purple_app
from netdojo.servers.mcp_server import episode_server
from netdojo.tools.contract import Agent


def in_process(policy: Policy) -> Agent:
    """``policy`` as an episode's agent, on the episode's tools served in memory."""
    return inprocess.in_process(policy, episode_server)


def builtin_purple(name: str, base_url: str, token: str | None = None) -> Starlette:
    """The built-in purple agent ``name`` over A2A, as `netdojo purple NAME` serves it."""
    executor = PurpleExecutor(policy_factory(name))
    builder = CallerContextBuilder()
    return purple_app(name, PURPLE_AGENTS[name], executor, base_url, token, builder)
