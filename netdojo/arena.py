"""The arena's processes put together: the green agent's app and the built-in purple agents' apps.

Servers and clients do not import each other; this is where a purple policy meets the A2A
server plumbing and where the green agent's A2A routes meet its MCP endpoints.
"""

from __future__ import annotations

from collections.abc import Callable

from a2a.types import AgentSkill
from mcp import Client
from starlette.applications import Starlette

from netdojo.clients.agents import POLICIES, Policy, ScenarioRef, Task
from netdojo.clients.purple import CallerContextBuilder, PurpleExecutor
from netdojo.clients.session import ToolSession
from netdojo.judges.episode import Episode
from netdojo.judges.runner import Agent
from netdojo.labs.errors import NetdojoError
from netdojo.reports.records import AgentReport
from netdojo.servers.a2a_app import a2a_app, agent_card
from netdojo.servers.endpoints import EndpointHost
from netdojo.servers.green import SKILL, GreenExecutor
from netdojo.servers.mcp_server import evaluation_server

PURPLE_AGENTS = {
    "heuristic": "a deterministic troubleshooter: reads state, localises faults, fixes them",
    "llm": "a tool-calling loop over an OpenAI-compatible chat-completions endpoint",
    "oracle": "applies the reference solution (judge calibration only)",
    "noop": "does nothing",
    "vandal": "makes random harmful changes",
    "cheater": "fakes symptoms away and reads for leaked answers, to test the judge",
}


def policy_factory(name: str) -> Callable[[], Policy]:
    """A fresh policy per episode for a built-in purple agent."""
    if name in POLICIES:
        policy = POLICIES[name]
        return lambda: policy
    if name == "heuristic":
        from netdojo.clients.heuristic import troubleshoot

        async def heuristic(session: ToolSession, task: Task) -> str:
            return await troubleshoot(session, task.brief)

        return lambda: heuristic
    if name == "llm":
        from netdojo.clients.llm import LLMAgent, LLMConfig

        config = LLMConfig.from_env()
        return lambda: LLMAgent(config)
    raise NetdojoError(f"unknown agent {name!r}; built-in agents are: {', '.join(PURPLE_AGENTS)}")


def in_process(policy: Policy, calibration: bool = False) -> Agent:
    """A policy as an episode's agent without A2A: an in-process MCP client, then submit.
    Only a calibration run (the oracle's) is told which instance it works on."""

    async def agent(episode: Episode) -> AgentReport:
        scenario = episode.scenario
        ref = ScenarioRef(family=scenario.family, level=scenario.level, seed=scenario.seed)
        task = Task(brief=scenario.public.brief, scenario=ref if calibration else None)
        async with Client(evaluation_server(episode.tools)) as client:
            session = ToolSession(client)
            summary = await policy(session, task)
            await session.call("submit", {"summary": summary})
        return AgentReport(detail=summary, turns=1)

    return agent


def purple_app(name: str, base_url: str, token: str | None = None) -> Starlette:
    """A built-in purple agent; with ``token``, every call but for its card needs it."""
    make_policy = policy_factory(name)
    skill = AgentSkill(
        id=f"netdojo-{name}",
        name=f"netdojo {name}",
        description=PURPLE_AGENTS[name],
        tags=["networking"],
        examples=[],
    )
    card = agent_card(f"netdojo-{name}", PURPLE_AGENTS[name], base_url, [skill], streaming=False)
    executor = PurpleExecutor(make_policy)
    return a2a_app(card, executor, token=token, context_builder=CallerContextBuilder())


def green_app(
    host: str, port: int, public_url: str | None = None, token: str | None = None
) -> Starlette:
    """The green agent: A2A routes and, on the same server, the episodes' MCP endpoints. With
    ``token``, every A2A call but for the card needs it; each MCP endpoint has its own."""
    base = public_url or f"http://{host}:{port}"
    endpoints = EndpointHost(host, port, public_base_url=public_url)
    card = agent_card(
        "netdojo-green",
        "netdojo assessor: live network tasks judged by hidden tests",
        base,
        [SKILL],
    )
    return a2a_app(
        card,
        GreenExecutor(endpoints),
        token=token,
        # The endpoints go first: the A2A REST binding mounts a catch-all `/{tenant}`.
        routes=endpoints.routes,
        lifespan=endpoints.lifespan,
    )
