"""The LLM agent in text mode: a purple executor handed the tool list, playing the tools by
messages with a caller that answers as the green agent does, against the scripted endpoint."""

from __future__ import annotations

import json
from typing import Any

import pytest
from a2a.helpers import get_data_parts, new_data_part, new_message, new_text_part
from a2a.server.agent_execution import RequestContext
from a2a.server.context import ServerCallContext
from a2a.types import Message, Role, SendMessageRequest
from mcp import Client

from netdojo.clients.llm import LLMAgent, LLMConfig
from netdojo.clients.purple import PurpleExecutor, TextSession
from netdojo.tools.contract import HANDOFF_KEY, RESULT_KEY, Handoff
from tests.llm_fakes import ScriptedLLM, completion, fake_lab, serving, tool_call

pytestmark = pytest.mark.anyio

EPISODE = "ep-text-1"


class Replies:
    """Collects what the executor answers (the event queue's one method it uses)."""

    def __init__(self) -> None:
        self.events: list[Message] = []

    async def enqueue_event(self, event: Message) -> None:
        self.events.append(event)


async def send(executor: PurpleExecutor, message: Message) -> dict[str, Any]:
    """One A2A turn in-process; the reply's data part."""
    request = SendMessageRequest(message=message)
    context = RequestContext(ServerCallContext(), request, context_id=EPISODE)
    replies = Replies()
    await executor.execute(context, replies)  # type: ignore[arg-type]
    [reply] = replies.events
    [data] = [part for part in get_data_parts(list(reply.parts)) if isinstance(part, dict)]
    return data


def user_message(text: str, data: dict[str, Any]) -> Message:
    return new_message(
        [new_text_part(text), new_data_part(data)], context_id=EPISODE, role=Role.ROLE_USER
    )


async def test_text_mode_lists_the_handoff_tools_runs_every_call_form_and_submits() -> None:
    script = [
        completion(content='<tool_call>{"name": "topology", "arguments": {}}</tool_call>'),
        completion([tool_call("c1", "show", '{"device": "r1", "command": "show ip route"}')]),
        completion(content='{"name": "invented", "arguments": {}}', usage=(7, 3)),
        completion([tool_call("c2", "submit", '{"summary": "route added on r1"}')], usage=(9, 4)),
    ]
    fake, lab_calls = ScriptedLLM(script), list[str]()
    async with serving(fake) as base_url, Client(fake_lab(lab_calls)) as tools:
        listed = [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in (await tools.list_tools()).tools
        ]
        config = LLMConfig(base_url=base_url, model="test-model")
        executor = PurpleExecutor(lambda: LLMAgent(config))
        handoff = {"episode_id": EPISODE, "mode": "text", "tools": listed}
        data = await send(executor, user_message("h1 cannot reach h2.", {HANDOFF_KEY: handoff}))
        actions = [data["action"]]
        while actions[-1]["tool"] != "submit":
            called = await tools.call_tool(actions[-1]["tool"], actions[-1]["arguments"])
            result = {"result": called.structured_content}
            data = await send(executor, user_message(json.dumps(result), {RESULT_KEY: result}))
            actions.append(data["action"])

    assert [a["tool"] for a in actions] == ["topology", "show", "submit"]
    assert actions[-1]["arguments"] == {"summary": "route added on r1"}
    assert lab_calls == ["topology", "show"]
    assert data["usage"]["prompt_tokens"] == 16
    assert data["usage"]["turns"] == 4
    assert data["usage"]["tool_calls"] == 2
    sent = {tool["function"]["name"] for tool in fake.requests[0]["tools"]}
    assert sent == {"topology", "show", "ping", "submit"}
    assert "unknown tool 'invented'" in fake.requests[3]["messages"][-1]["content"]


async def test_a_text_session_lists_the_tools_it_was_handed() -> None:
    given = {
        "episode_id": EPISODE,
        "mode": "text",
        "tools": [{"name": "topology", "description": "Devices.", "input_schema": {}}],
    }
    handoff = Handoff.model_validate(given)
    tools = await TextSession(handoff.tools).list_tools()

    assert [(t.name, t.description) for t in tools] == [("topology", "Devices.")]
    assert Handoff.model_validate({"episode_id": EPISODE, "mode": "text"}).tools == []
