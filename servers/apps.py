"""The arena's A2A apps: the green agent, with its episodes' MCP endpoints on the same server,
and any purple agent's executor served with its card.

Servers do not import clients: the command line hands a built-in purple agent's executor in.
"""

from __future__ import annotations

from a2a.server.agent_execution import AgentExecutor
from a2a.server.routes import ServerCallContextBuilder
from a2a.types import AgentSkill
from starlette.applications import Starlette

from netdojo.servers.a2a_app import a2a_app, agent_card
from netdojo.servers.endpoints import EndpointHost
from netdojo.servers.green import SKILL, GreenExecutor, Preflight

GREEN_DESCRIPTION = (
    "netdojo assessor: live network tasks judged by hidden tests. It deploys Kathará labs on a "
    "Docker engine prepared by `netdojo setup` (its device image and network plugin); run in a "
    "container, it needs the host's Docker socket mounted "
    "(-v /var/run/docker.sock:/var/run/docker.sock) and no extra privileges."
)


def green_app(
    host: str,
    port: int,
    public_url: str | None = None,
    token: str | None = None,
    preflight: Preflight | None = None,
) -> Starlette:
    """The green agent: A2A routes and, on the same server, the episodes' MCP endpoints. With
    ``token``, every A2A call but for the card needs it; each MCP endpoint has its own.
    ``preflight`` checks, before the first assessment, that labs can run here."""
    base = public_url or f"http://{host}:{port}"
    endpoints = EndpointHost(host, port, public_base_url=public_url)
    card = agent_card("netdojo-green", GREEN_DESCRIPTION, base, [SKILL])
    return a2a_app(
        card,
        GreenExecutor(endpoints, preflight=preflight),
        token=token,
        # The endpoints go first: the A2A REST binding mounts a catch-all `/{tenant}`.
        routes=endpoints.routes,
        lifespan=endpoints.lifespan,
    )


def purple_app(
    name: str,
    description: str,
    executor: AgentExecutor,
    base_url: str,
    token: str | None = None,
    context_builder: ServerCallContextBuilder | None = None,
) -> Starlette:
    """The purple agent ``netdojo-<name>`` run by ``executor``; with ``token``, every call but
    for its card needs it."""
    skill = AgentSkill(
        id=f"netdojo-{name}",
        name=f"netdojo {name}",
        description=description,
        tags=["networking"],
        examples=[],
    )
    card = agent_card(f"netdojo-{name}", description, base_url, [skill], streaming=False)
    return a2a_app(card, executor, token=token, context_builder=context_builder)
