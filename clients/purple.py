"""A purple agent over A2A: takes an episode from the green agent and runs a policy on it.

The green agent's message carries the brief as text and, in a data part, the `Handoff` of
`netdojo.tools.contract`: the episode's MCP endpoint and bearer token (``mode: "mcp"``), or the
tool list for an agent that works by messages (``mode: "text"``), which its session lists. In
MCP mode the policy works on the endpoint, calls `submit`, and the reply carries its summary,
token usage and model record. In text mode each reply is one action, ``{"tool": …,
"arguments": …}``, with the usage so far, and the green agent answers with the tool's result in
the same context until the policy submits. A policy that fails is answered with its error in one
line, with its usage and model record: the green agent records the episode as the agent's error.

A caller that goes away (the green agent's budget ran out, its process died, the connection
broke) stops the policy working for it, and so does a text-mode episode whose next message does
not come: nothing keeps running for nobody.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
from a2a.helpers import get_data_parts, get_message_text, new_data_part, new_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events import EventQueue
from a2a.server.routes import DefaultServerCallContextBuilder
from a2a.types import Message, Role
from pydantic import BaseModel, ValidationError
from starlette.requests import Request

from netdojo.clients.agents import Policy, model_record
from netdojo.clients.session import ToolCallError, ToolSession, connect
from netdojo.errors import describe
from netdojo.tools.contract import (
    HANDOFF_KEY,
    RESULT_KEY,
    EpisodeView,
    Handoff,
    ListedTool,
    Reply,
    ReplyUsage,
)

CALLER_KEY = "netdojo_caller"
CALLER_POLL_S = 0.5
TEXT_IDLE_S = 300.0  # a text-mode policy waits this long for the next tool result, no longer


class TextSession:
    """A tool session whose calls travel as A2A messages: each call is a reply, each result
    the green agent's next message; its tools are the ones the handoff lists."""

    def __init__(self, tools: list[ListedTool]) -> None:
        self.tools = tools
        self.actions: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.results: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.calls = 0

    async def call(self, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        self.calls += 1
        await self.actions.put({"tool": tool, "arguments": arguments or {}})
        if tool == "submit":  # the green agent judges at once and sends no result back
            return {"accepted": True}
        answer = await self.results.get()
        if answer.get("error"):
            raise ToolCallError(str(answer["error"]))
        return dict(answer.get("result") or {})

    async def list_tools(self) -> list[ListedTool]:
        return list(self.tools)


@dataclass
class TextEpisode:
    """A text-mode episode in progress: its session, its policy and the policy's run."""

    session: TextSession
    policy: Policy
    running: asyncio.Task[str]


def _data(message: Message, key: str) -> Any:
    for part in get_data_parts(list(message.parts)):
        if isinstance(part, dict) and key in part:
            return part[key]
    return None


def _reply(context: RequestContext, text: str, data: Reply) -> Message:
    return new_message(
        [new_text_part(text), new_data_part(data.data())],
        context_id=context.context_id,
        role=Role.ROLE_AGENT,
    )


class CallerContextBuilder(DefaultServerCallContextBuilder):
    """Keeps each call's HTTP request in its context, so the executor can tell when the caller
    has gone."""

    def build(self, request: Request) -> ServerCallContext:
        context = super().build(request)
        context.state[CALLER_KEY] = request
        return context


async def _caller_gone(context: RequestContext) -> None:
    """Return once the HTTP caller of this request has disconnected (never, without one)."""
    request = context.call_context.state.get(CALLER_KEY)
    if not isinstance(request, Request):
        await anyio.sleep_forever()
        return
    while not await request.is_disconnected():
        await anyio.sleep(CALLER_POLL_S)


class PurpleExecutor(AgentExecutor):
    """Runs a fresh policy from ``make_policy`` per episode."""

    def __init__(self, make_policy: Callable[[], Policy], text_idle_s: float = TEXT_IDLE_S) -> None:
        self.make_policy = make_policy
        self.text_idle_s = text_idle_s
        self._text: dict[str, TextEpisode] = {}
        self._idle: dict[str, asyncio.TimerHandle] = {}

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Answer the request, unless its caller goes away first: then the policy stops."""
        replies: list[Message] = []
        failures: list[Exception] = []
        async with anyio.create_task_group() as group:

            async def answer() -> None:
                try:
                    replies.append(await self._answer(context))
                except Exception as exc:  # raised below as itself, not as a group of one
                    failures.append(exc)
                group.cancel_scope.cancel()

            group.start_soon(answer)
            await _caller_gone(context)
            group.cancel_scope.cancel()
        if failures:
            raise failures[0]
        if not replies:
            self._drop(context)
            text = "stopped: the caller went away"
            replies.append(_reply(context, text, Reply(error=text)))
        await event_queue.enqueue_event(replies[0])

    async def _answer(self, context: RequestContext) -> Message:
        message = context.message
        assert message is not None
        if (context.context_id or "") in self._text:
            reply = await self._continue(context, _data(message, RESULT_KEY) or {})
        else:
            try:
                handoff = Handoff.model_validate(_data(message, HANDOFF_KEY))
            except ValidationError as exc:
                text = f"expected a netdojo episode under {HANDOFF_KEY!r}: {exc.errors()[:3]}"
                reply = _reply(context, text, Reply(error=text))
            else:
                task = EpisodeView.handed(get_message_text(message), handoff)
                if handoff.mode == "mcp":
                    reply = await self._work_on_endpoint(context, task)
                else:
                    reply = await self._start_text(context, task, handoff.tools)
        return reply

    async def _work_on_endpoint(self, context: RequestContext, task: EpisodeView) -> Message:
        policy = self.make_policy()
        session: ToolSession | None = None
        try:
            if not task.mcp_url or not task.token:
                raise ValueError("an MCP episode needs mcp_url and token")
            async with connect(task.mcp_url, task.token) as session:
                summary = await policy(session, task)
                await session.finish(summary)
        except Exception as exc:  # the green agent records it as the agent's error
            return _failure(context, policy, session.calls if session else 0, exc)
        data = Reply(usage=_usage(policy, session.calls), model=model_record(policy))
        return _reply(context, summary, data)

    async def _start_text(
        self, context: RequestContext, task: EpisodeView, tools: list[ListedTool]
    ) -> Message:
        session = TextSession(tools)
        policy = self.make_policy()
        running = asyncio.create_task(policy(session, task))  # type: ignore[arg-type]
        episode = TextEpisode(session, policy, running)
        self._text[context.context_id or ""] = episode
        return await self._next_action(context, episode)

    async def _continue(self, context: RequestContext, result: dict[str, Any]) -> Message:
        waiting = self._idle.pop(context.context_id or "", None)
        if waiting is not None:
            waiting.cancel()
        episode = self._text[context.context_id or ""]
        await episode.session.results.put(result)
        return await self._next_action(context, episode)

    async def _next_action(self, context: RequestContext, episode: TextEpisode) -> Message:
        session, running = episode.session, episode.running
        action = asyncio.ensure_future(session.actions.get())
        await asyncio.wait({action, running}, return_when=asyncio.FIRST_COMPLETED)
        if action.done():
            chosen = action.result()
            key = context.context_id or ""
            loop = asyncio.get_running_loop()
            self._idle[key] = loop.call_later(self.text_idle_s, self._abandon, key)
        else:
            action.cancel()
            del self._text[context.context_id or ""]
            try:
                summary = running.result()
            except Exception as exc:  # the green agent records it as the agent's error
                return _failure(context, episode.policy, session.calls, exc)
            chosen = {"tool": "submit", "arguments": {"summary": summary}}
            data = Reply(
                action=chosen,
                usage=_usage(episode.policy, session.calls),
                model=model_record(episode.policy),
            )
            return _reply(context, json.dumps(chosen), data)
        usage = _usage(episode.policy, session.calls)
        return _reply(context, json.dumps(chosen), Reply(action=chosen, usage=usage))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        self._drop(context)

    def _drop(self, context: RequestContext) -> None:
        self._abandon(context.context_id or "")

    def _abandon(self, key: str) -> None:
        """Stop a text-mode policy waiting in context ``key``, if any."""
        waiting = self._idle.pop(key, None)
        if waiting is not None:
            waiting.cancel()
        episode = self._text.pop(key, None)
        if episode is not None:
            episode.running.cancel()


def _failure(context: RequestContext, policy: Policy, calls: int, exc: Exception) -> Message:
    """The reply of a policy that failed: the cause in one line, its usage and model record."""
    error = describe(exc)
    data = Reply(error=error, usage=_usage(policy, calls), model=model_record(policy))
    return _reply(context, f"error: {error}", data)


def _usage(policy: Any, calls: int) -> ReplyUsage:
    """The tool calls made and, from a policy that counts them (``usage``), turns and tokens."""
    usage = getattr(policy, "usage", None)
    reported = usage.model_dump() if isinstance(usage, BaseModel) else {}
    return ReplyUsage.model_validate({**reported, "tool_calls": calls})
