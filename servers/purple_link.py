"""The green agent's side of a purple agent: who it is, its card, and one request, one reply.

The card is read once, when the assessment is admitted, with the SDK's reader, which also
takes an A2A 0.3 card (a top-level ``url``, ``protocolVersion``, ``security``) as a 0.3
interface. The client is made from that card: it speaks A2A 1.0 over JSON-RPC where the card
offers it, else 0.3 (``message/send``, 0.3 part shapes). A purple agent answers with a message,
or with a task whose reply is its final status message and its artifacts, as agents built on
AgentBeats' template do.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from a2a.client import ClientConfig, create_client
from a2a.client.card_resolver import parse_agent_card
from a2a.compat.v0_3.versions import is_legacy_version
from a2a.helpers import get_data_parts, get_message_text, new_message
from a2a.types import AgentCard, Message, Part, Role, SendMessageRequest, TaskState
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from netdojo.servers.bearer import check_token
from netdojo.tools.contract import AgentReport, Reply, ReplyUsage

CARD_TIMEOUT_S = 10.0
JSONRPC = "JSONRPC"


class Participant(BaseModel):
    """A purple agent: its A2A URL and, if it asks for one, the bearer token to call it with."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(description="the purple agent's A2A URL")
    token: SecretStr | None = Field(
        default=None, description="sent as `Authorization: Bearer <token>`; never recorded"
    )

    @field_validator("url")
    @classmethod
    def _http(cls, url: str) -> str:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"participant URL {url!r} must be http(s)")
        return url

    @field_validator("token")
    @classmethod
    def _form(cls, token: SecretStr | None) -> SecretStr | None:
        if token is not None:
            check_token(token.get_secret_value())
        return token

    def secrets(self) -> list[str]:
        return [self.token.get_secret_value()] if self.token else []


@dataclass(frozen=True)
class PurpleAgent:
    """A participant with the card it serves."""

    participant: Participant
    card: AgentCard

    @property
    def name(self) -> str:
        return self.card.name or "agent"

    @property
    def protocol(self) -> str:
        """The A2A version its client speaks: 1.0 where the card offers it, else 0.3."""
        versions = [
            i.protocol_version
            for i in self.card.supported_interfaces
            if i.protocol_binding == JSONRPC
        ]
        return "0.3" if all(is_legacy_version(v) for v in versions) else "1.0"

    def asks_for_credentials(self) -> bool:
        """Whether every way the card offers to call the agent names a security scheme."""
        requirements = list(self.card.security_requirements)
        return bool(requirements) and all(r.schemes for r in requirements)


async def read_card(participant: Participant) -> AgentCard:
    """The participant's card, of either protocol version; a ValueError saying what is wrong
    with it otherwise."""
    url = participant.url
    async with httpx.AsyncClient(timeout=CARD_TIMEOUT_S) as http:
        try:
            found = (await http.get(f"{url.rstrip('/')}{AGENT_CARD_WELL_KNOWN_PATH}")).json()
        except (httpx.HTTPError, json.JSONDecodeError) as exc:
            raise ValueError(f"cannot read the agent card at {url}: {exc}") from None
    if not isinstance(found, dict):
        raise ValueError(f"the agent card at {url} is not a JSON object")
    try:
        card = parse_agent_card(found)
    except Exception as exc:  # the SDK's and protobuf's parse errors share no base
        raise ValueError(f"the agent card at {url} is not an A2A card: {exc}") from None
    if not any(i.protocol_binding == JSONRPC and i.url for i in card.supported_interfaces):
        raise ValueError(f"the agent card at {url} offers no JSON-RPC interface")
    return card


@asynccontextmanager
async def a2a_client(purple: PurpleAgent, timeout_s: float) -> AsyncIterator[Any]:
    """A client for one episode, of the protocol version the card offers."""
    token = purple.participant.token
    headers = {"Authorization": f"Bearer {token.get_secret_value()}"} if token else None
    timeout = httpx.Timeout(timeout_s, connect=10.0)
    async with httpx.AsyncClient(headers=headers, timeout=timeout) as http:
        config = ClientConfig(streaming=False, httpx_client=http)
        async with await create_client(purple.card, client_config=config) as client:
            yield client


async def send(client: Any, message: Message) -> Message:
    """One request, one reply; a purple task that did not complete raises."""
    reply: Message | None = None
    async for response in client.send_message(SendMessageRequest(message=message)):
        kind = response.WhichOneof("payload")
        if kind == "message":
            reply = response.message
        elif kind == "task":
            task = response.task
            if task.status.state != TaskState.TASK_STATE_COMPLETED:
                state = TaskState.Name(task.status.state)
                raise RuntimeError(f"the purple agent's task ended {state}")
            parts: list[Part] = [*task.status.message.parts]
            for artifact in task.artifacts:
                parts.extend(artifact.parts)
            reply = new_message(parts, context_id=task.context_id, role=Role.ROLE_AGENT)
    if reply is None:
        raise RuntimeError("the purple agent sent no reply")
    return reply


def reply_data(reply: Message) -> Reply:
    """The reply's data part as the contract reads it: the first that reads; else empty."""
    for part in get_data_parts(list(reply.parts)):
        if isinstance(part, dict):
            try:
                data = Reply.model_validate(part)
            except ValidationError:
                continue
            if data.model_fields_set:
                return data
    return Reply()


def report_of(reply: Message, turns: int) -> AgentReport:
    """The agent's report from its reply: its answer or error, its effort (``turns`` counted
    here unless it counts them) and its model's record."""
    data = reply_data(reply)
    usage = data.usage or ReplyUsage()
    given: dict[str, Any] = {
        "status": "error" if data.error else "done",
        "detail": data.error or get_message_text(reply)[:2000],
        "turns": usage.turns or turns,
    }
    if usage.prompt_tokens:
        given["tokens_in"] = usage.prompt_tokens
    if usage.completion_tokens:
        given["tokens_out"] = usage.completion_tokens
    return AgentReport.of(data.model, **given)


def action_of(reply: Message) -> tuple[str, dict[str, Any]] | None:
    """The tool call a text-mode reply asks for: from its data part, else from its text as
    JSON (the whole text, or one of its text parts, the last first)."""
    action: Any = reply_data(reply).action
    if action is None:
        texts = [get_message_text(reply), *reversed([p.text for p in reply.parts if p.text])]
        action = next((found for t in texts if (found := _json(t)) is not None), None)
    if not isinstance(action, dict) or not isinstance(action.get("tool"), str):
        return None
    arguments = action.get("arguments") or {}
    return (action["tool"], arguments) if isinstance(arguments, dict) else None


PYTHON_BLOCK = re.compile(r"```(?:python|py)[ \t]*\n(.*?)```", re.S)


def code_of(reply: Message) -> str | None:
    """The Python a reply that is not an action carries, as a fenced ``python`` block: a
    single-turn agent's whole answer to a planning task."""
    found = PYTHON_BLOCK.search(get_message_text(reply))
    return found.group(1) if found and found.group(1).strip() else None


def _json(text: str) -> Any:
    try:
        return json.loads(text.strip())
    except json.JSONDecodeError:
        return None
