"""A policy as an episode's agent without A2A: it works through an in-process MCP client on the
server its caller builds from the episode's view, then submits. Its report carries the model's
record of a policy driven by one, also when the policy failed (the error then in one line).

Clients do not import servers: whoever composes the two passes the server builder in.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING

from mcp import Client

from netdojo.clients.agents import Policy, model_record
from netdojo.clients.session import ToolSession
from netdojo.errors import describe
from netdojo.tools.contract import Agent, AgentReport, EpisodeView

if TYPE_CHECKING:
    from mcp.server import MCPServer

ServerFor = Callable[[EpisodeView], "MCPServer"]


def in_process(policy: Policy, server_for: ServerFor) -> Agent:
    """``policy`` as an agent: each episode's tools served by ``server_for(view)`` in memory.
    The policy is given the view without the in-process handle: it works through MCP alone."""

    async def agent(view: EpisodeView) -> AgentReport:
        task = dataclasses.replace(view, handle=None)
        try:
            async with Client(server_for(view)) as client:
                session = ToolSession(client)
                summary = await policy(session, task)
                await session.finish(summary)
        except Exception as exc:  # the agent's failure: its cause in one line, its model's turns
            return AgentReport.of(model_record(policy), status="error", detail=describe(exc))
        record = model_record(policy)
        if record is None:
            return AgentReport(detail=summary, turns=1)
        return AgentReport.of(record, detail=summary)

    return agent
