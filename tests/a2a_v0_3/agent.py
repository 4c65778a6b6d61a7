"""An A2A 0.3 purple agent built as AgentBeats' agent template builds one; run with the Python of
the 0.3 environment (`tests.a2a_v0_3.env`), never imported by the tests.

    agent.py --port P [--reply task|message] [--token T] [--log FILE]

It plays a netdojo episode in text mode: handed the episode, it asks for `topology`; handed the
result, it submits a summary naming the devices it saw. ``--reply task`` answers as the
template does (a task: working, then an artifact with the action as JSON text, then completed);
``--reply message`` answers with one message holding the action as text and as a data part.
``--token`` makes every call but for the card need ``Authorization: Bearer <token>``, declared
in the card. ``--log`` appends each message received as a JSON line, as the 0.3 SDK parsed it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentSkill,
    DataPart,
    HTTPAuthSecurityScheme,
    Part,
    SecurityScheme,
    TaskState,
    TextPart,
)
from a2a.utils import get_message_text, new_agent_parts_message, new_agent_text_message, new_task
from starlette.responses import JSONResponse

HANDOFF_KEY = "netdojo_episode"
RESULT_KEY = "netdojo_result"


def _data(parts: list[Part], key: str) -> Any:
    for part in parts:
        if isinstance(part.root, DataPart) and key in part.root.data:
            return part.root.data[key]
    return None


def next_action(parts: list[Part]) -> dict[str, Any]:
    """Topology first; then submit what it showed."""
    if _data(parts, HANDOFF_KEY) is not None:
        return {"tool": "topology", "arguments": {}}
    result = _data(parts, RESULT_KEY) or {}
    devices = [d.get("name") for d in (result.get("result") or {}).get("devices", [])]
    return {"tool": "submit", "arguments": {"summary": f"saw {', '.join(devices)}"}}


class TextModeExecutor(AgentExecutor):
    def __init__(self, reply: str, log: Path | None) -> None:
        self.reply = reply
        self.log = log

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        assert message is not None
        if self.log is not None:
            with self.log.open("a") as out:
                out.write(message.model_dump_json(by_alias=True, exclude_none=True) + "\n")
        action = next_action(message.parts)
        text = json.dumps(action)
        if self.reply == "message":
            parts = [Part(root=TextPart(text=text)), Part(root=DataPart(data={"action": action}))]
            await event_queue.enqueue_event(
                new_agent_parts_message(parts, context_id=message.context_id)
            )
            return
        task = context.current_task or new_task(message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        thinking = new_agent_text_message(f"Thinking about: {get_message_text(message)}")
        await updater.update_status(TaskState.working, thinking)
        await updater.add_artifact(parts=[Part(root=TextPart(text=text))], name="Action")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


def build(port: int, reply: str, token: str | None, log: Path | None) -> Any:
    card = AgentCard(
        name="v03-text-agent",
        description="an A2A 0.3 agent that plays netdojo's text mode",
        url=f"http://127.0.0.1:{port}/",
        version="1.0.0",
        default_input_modes=["text"],
        default_output_modes=["text"],
        capabilities=AgentCapabilities(streaming=True),
        skills=[AgentSkill(id="text", name="text", description="text mode", tags=[])],
    )
    if token is not None:
        scheme = HTTPAuthSecurityScheme(type="http", scheme="bearer")
        card.security_schemes = {"bearer": SecurityScheme(root=scheme)}
        card.security = [{"bearer": []}]
    handler = DefaultRequestHandler(
        agent_executor=TextModeExecutor(reply, log), task_store=InMemoryTaskStore()
    )
    app = A2AStarletteApplication(agent_card=card, http_handler=handler).build()
    return app if token is None else BearerOnly(app, token)


class BearerOnly:
    """Every HTTP request but for the card needs ``Authorization: Bearer <token>``."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        public = scope["type"] != "http" or scope["path"].startswith("/.well-known/")
        if public or dict(scope["headers"]).get(b"authorization") == self.expected:
            await self.app(scope, receive, send)
            return
        refused = JSONResponse({"error": "no or wrong bearer token"}, status_code=401)
        await refused(scope, receive, send)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--reply", choices=["task", "message"], default="task")
    parser.add_argument("--token")
    parser.add_argument("--log", type=Path)
    args = parser.parse_args()
    app = build(args.port, args.reply, args.token, args.log)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
