"""An A2A agent as a Starlette app: the agent card and the JSON-RPC and REST bindings."""

from __future__ import annotations

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
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill

from netdojo import __version__

JSONRPC_PATH = "/a2a/jsonrpc"
REST_PATH = "/a2a/rest"
MAX_REQUEST_BYTES = 4 * 2**20
"""Larger requests get 413 (a JSON-RPC "payload too large" error), as the MCP transport does."""


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
        ],
        capabilities=AgentCapabilities(streaming=streaming, push_notifications=False),
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain", "application/json"],
        skills=skills,
    )


def a2a_routes(
    card: AgentCard,
    executor: AgentExecutor,
    context_builder: ServerCallContextBuilder | None = None,
) -> list[Any]:
    """The card and both bindings; ``context_builder`` shapes each call's context."""
    handler = DefaultRequestHandler(
        agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card
    )
    return [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, rpc_url=JSONRPC_PATH, context_builder=context_builder),
        *create_rest_routes(handler, path_prefix=REST_PATH, context_builder=context_builder),
    ]
