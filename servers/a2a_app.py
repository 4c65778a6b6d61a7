"""An A2A agent as a Starlette app: the agent card and the JSON-RPC and REST bindings.

It speaks A2A 1.0 and 0.3 alike. The card lists a 0.3 JSON-RPC interface beside the 1.0 ones,
so it also carries the 0.3 fields (a top-level ``url``, ``protocolVersion``,
``preferredTransport``) that a 0.3 client requires; the JSON-RPC endpoint answers 0.3 methods
(``message/send``, ``message/stream``, ``tasks/get``, ...) beside the 1.0 ones, told apart by
the method's name, and it answers on the agent's base URL too, where 0.3 agents usually serve
it and where AgentBeats' gateway posts whatever the card says. REST is 1.0 only.

With a token, every request but for the public agent card needs ``Authorization: Bearer
<token>`` (401 otherwise), and the card declares the HTTP bearer scheme as required.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from a2a.server.agent_execution import AgentExecutor
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import (
    ServerCallContextBuilder,
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from starlette.applications import Starlette
from starlette.routing import BaseRoute, Mount
from starlette.types import ASGIApp, Lifespan

from netdojo import __version__
from netdojo.servers.bearer import BearerGuard

JSONRPC_PATH = "/a2a/jsonrpc"
BASE_PATH = "/"
REST_PATH = "/a2a/rest"
MAX_REQUEST_BYTES = 4 * 2**20
"""Larger requests get 413 (a JSON-RPC "payload too large" error), as the MCP transport does."""
BEARER_SCHEME = "bearer"


def agent_card(
    name: str, description: str, base_url: str, skills: list[AgentSkill], streaming: bool = True
) -> AgentCard:
    base = base_url.rstrip("/")
    return AgentCard(
        name=name,
        description=description,
        version=__version__,
        supported_interfaces=[
            AgentInterface(
                protocol_binding="JSONRPC", protocol_version="1.0", url=f"{base}{JSONRPC_PATH}"
            ),
            AgentInterface(
                protocol_binding="HTTP+JSON", protocol_version="1.0", url=f"{base}{REST_PATH}"
            ),
            AgentInterface(
                protocol_binding="JSONRPC", protocol_version="0.3.0", url=f"{base}{JSONRPC_PATH}"
            ),
        ],
        capabilities=AgentCapabilities(streaming=streaming, push_notifications=False),
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain", "application/json"],
        skills=skills,
    )


def requiring_bearer(card: AgentCard) -> AgentCard:
    """A copy of ``card`` that declares the HTTP bearer scheme and requires it for every call."""
    declared = AgentCard()
    declared.CopyFrom(card)
    declared.security_schemes[BEARER_SCHEME].CopyFrom(
        SecurityScheme(
            http_auth_security_scheme=HTTPAuthSecurityScheme(
                scheme="Bearer", description="the token the agent's operator hands out"
            )
        )
    )
    declared.security_requirements.append(
        SecurityRequirement(schemes={BEARER_SCHEME: StringList()})
    )
    return declared


def a2a_routes(
    card: AgentCard,
    executor: AgentExecutor,
    context_builder: ServerCallContextBuilder | None = None,
) -> list[Any]:
    """The card and both bindings; ``context_builder`` shapes each call's context."""
    handler = DefaultRequestHandler(
        agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card
    )
    jsonrpc = [
        route
        for path in (JSONRPC_PATH, BASE_PATH)
        for route in create_jsonrpc_routes(
            handler, rpc_url=path, context_builder=context_builder, enable_v0_3_compat=True
        )
    ]
    return [
        *create_agent_card_routes(card),
        *jsonrpc,
        *create_rest_routes(handler, path_prefix=REST_PATH, context_builder=context_builder),
    ]


def a2a_app(
    card: AgentCard,
    executor: AgentExecutor,
    *,
    token: str | None = None,
    context_builder: ServerCallContextBuilder | None = None,
    routes: Sequence[BaseRoute] = (),
    lifespan: Lifespan[Starlette] | None = None,
) -> Starlette:
    """The agent's app: ``routes`` (which guard themselves), then the card and both bindings.
    With a token, every request that reaches the bindings needs it; the card, which then
    declares it, stays public."""
    if token is not None:
        card = requiring_bearer(card)
    agent: ASGIApp = Starlette(routes=a2a_routes(card, executor, context_builder))
    if token is not None:
        agent = BearerGuard(agent, token, public={AGENT_CARD_WELL_KNOWN_PATH})
    return Starlette(
        routes=[*routes, Mount("", app=agent)], lifespan=lifespan, max_body_size=MAX_REQUEST_BYTES
    )
