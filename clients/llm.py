"""A purple agent driven by any OpenAI-compatible chat-completions endpoint.

`LLMAgent` is a `Policy`: it offers the session's tools to the model as functions, runs the calls
the model makes and sends the results back, until the model calls `submit` (its `summary` is
returned; the caller submits), answers in prose without calling a tool (that text is the
summary), or `max_turns` is spent. Open models often write their calls as text rather than as
`tool_calls` (see `netdojo.clients.textcalls`): those run too, and their results go back in the
shape the model used. A reply that is neither a call nor an answer (empty, cut off, JSON that
calls nothing) is never taken as the summary: the model is told how to call a tool. A call to
an unknown tool, or with unknown, missing or mistyped arguments, is not run; the model is told
what is valid. It speaks plain HTTP, so vLLM, Ollama, the llama.cpp servers and OpenAI work.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from netdojo.clients.llm_endpoint import Endpoint, LLMConfig, LLMError, endpoint
from netdojo.clients.session import Session, ToolCallError
from netdojo.clients.textcalls import Parsed, format_results, is_answer, parse, without_thinking
from netdojo.clients.toolschema import argument_problems, expected, openai_function
from netdojo.errors import describe
from netdojo.tools.contract import EpisodeView, ListedTool
from netdojo.tools.trajectory import ModelRecord, ModelTurn, RawCall, RejectedCall, Rejection, Usage

SYSTEM_PROMPT = """\
You are a network engineer working on a live network of FRR routers and Linux hosts through \
tools. Find and fix the problem described in the task.
- Inspect before you change anything: topology, interfaces, routes, protocol state, logs.
- Change as little as needed to fix the problem, on the devices that need it.
- Do not break other traffic: keep every flow that works today working.
- Verify the fix with ping (and traceroute where paths matter) between the affected endpoints.
- A report may be wrong: if nothing is broken, change nothing and say so.
- When done, call submit with a short summary of the cause and what you changed, and its \
diagnosis when you can name it (the devices at fault and the fault classes; class none if \
nothing is wrong)."""

TEXT_PROTOCOL = """
This endpoint takes no tool definitions: call a tool by answering with only a JSON object, \
{"name": "<tool>", "arguments": {...}}, one per line for several calls. The tools:
"""

TOOLS_REFUSED = re.compile(
    r"\btools?\b.{0,60}\b(not supported|unsupported|not allowed|not permitted|requires?)\b"
    r"|\b(support|unsupported|unknown|unrecognized|unexpected)\b.{0,40}\btools\b",
    re.IGNORECASE,
)
SUBMIT_TOOL = "submit"
MAX_RESULT_CHARS = 12_000
NEXT_STEP = "Call the next tool the same way, or call submit with your summary when done."

Message = dict[str, Any]


class Submitted(Exception):
    """The model called `submit` with a summary: the run ends with it."""

    def __init__(self, summary: str) -> None:
        super().__init__(summary)
        self.summary = summary


class LLMAgent:
    """A tool-calling loop. ``record`` holds the last run's turns and totals, also after the run
    raised; ``usage`` its totals."""

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self.record = ModelRecord()
        self.tools: dict[str, ListedTool] = {}
        self._payload: Message = {}

    @property
    def usage(self) -> Usage:
        return self.record.usage

    async def __call__(self, session: Session, task: EpisodeView) -> str:
        self.record = ModelRecord()
        try:
            return await self._run(session, task)
        except Exception as exc:
            self.record.error = describe(exc)
            raise

    async def _run(self, session: Session, task: EpisodeView) -> str:
        self.tools = {tool.name: tool for tool in await session.list_tools()}
        self._payload = {
            "model": self.config.model,
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
        }
        if self.tools:
            self._payload["tools"] = [openai_function(t) for t in self.tools.values()]
            self._payload["tool_choice"] = "auto"
        messages: list[Message] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": task.brief},
        ]
        async with endpoint(self.config) as ep:
            try:
                for index in range(self.config.max_turns):
                    await self._turn(ep, session, messages, index)
            except Submitted as submitted:
                return submitted.summary
        return f"stopped after {self.config.max_turns} turns without calling submit"

    async def _turn(
        self, ep: Endpoint, session: Session, messages: list[Message], index: int
    ) -> None:
        """One reply and what it asks for; raises `Submitted` when the run is over."""
        reply, turn = await self._complete(ep, messages, index)
        self.record.add(turn)
        if reply.get("tool_calls"):
            messages.append(reply)
            turn.form = "native"
            for call in reply["tool_calls"]:
                function = call.get("function") or {}
                name, raw = str(function.get("name", "")), function.get("arguments")
                turn.tool_calls.append(RawCall(name=name, arguments=raw, id=call["id"]))
                content = await self._execute(session, turn, name, decode_arguments(raw))
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})
            return
        text = turn.text
        parsed = parse(text, self.tools)
        messages.append({"role": "assistant", "content": text or "(empty reply)"})
        if parsed.found:
            messages.append(
                {"role": "user", "content": await self._text_calls(session, turn, parsed)}
            )
        elif turn.finish_reason != "length" and is_answer(text):
            raise Submitted(without_thinking(text).strip())
        else:
            messages.append({"role": "user", "content": self._how_to_call(turn)})

    async def _complete(
        self, ep: Endpoint, messages: list[Message], index: int
    ) -> tuple[Message, ModelTurn]:
        """One chat completion: the assistant message for the history and its record. An
        endpoint that refuses a request option is asked again without it."""
        started = time.monotonic()
        while True:
            try:
                body = await ep.complete({**self._payload, "messages": messages})
                break
            except LLMError as exc:
                if not self._adapt(exc, messages):
                    raise
        try:
            choice = body["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError):
            answer = json.dumps(body)[:300]
            raise LLMError(f"{self.config.url} answered without a message: {answer}") from None
        usage = body.get("usage") or {}
        turn = ModelTurn(
            index=index,
            text=str(message.get("content") or ""),
            finish_reason=choice.get("finish_reason"),
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            seconds=round(time.monotonic() - started, 3),
        )
        reply: Message = {"role": "assistant", "content": turn.text}
        calls = message.get("tool_calls") or []
        if calls:
            reply["tool_calls"] = [native_call(call, i) for i, call in enumerate(calls)]
        return reply, turn

    def _adapt(self, error: LLMError, messages: list[Message]) -> bool:
        """Drop or rename a request option a 400 answer names; False if there is none to."""
        text = str(error).lower()
        if error.status != 400:
            return False
        if ("tool_choice" in text or "tool choice" in text) and "tool_choice" in self._payload:
            del self._payload["tool_choice"]
        elif "max_completion_tokens" in text and "max_tokens" in self._payload:
            self._payload["max_completion_tokens"] = self._payload.pop("max_tokens")
        elif TOOLS_REFUSED.search(text) and "tools" in self._payload:
            del self._payload["tools"]
            self._payload.pop("tool_choice", None)
            messages[0] = {"role": "system", "content": SYSTEM_PROMPT + self._tool_list()}
        else:
            return False
        return True

    def _tool_list(self) -> str:
        lines = [
            f"- {t.name}: {t.description or ''} Arguments: {expected(t)}"
            for t in self.tools.values()
        ]
        return TEXT_PROTOCOL + "\n".join(lines)

    async def _text_calls(self, session: Session, turn: ModelTurn, parsed: Parsed) -> str:
        """Run the calls found in the text; their results in the shape the model wrote them."""
        assert parsed.form is not None
        turn.form = parsed.form
        results: list[tuple[str, Any]] = []
        for bad in parsed.malformed:
            error = f"error: your tool call could not be read: {bad.error}; {self._call_hint()}"
            self._reject(turn, "", "malformed", error)
            results.append(("", error))
        for call in parsed.calls:
            turn.tool_calls.append(RawCall(name=call.name, arguments=call.arguments))
            content = await self._execute(session, turn, call.name, call.arguments)
            results.append((call.name, readable(content)))
        return f"{format_results(parsed.form, results)}\n{NEXT_STEP}"

    async def _execute(
        self, session: Session, turn: ModelTurn, name: str, arguments: dict[str, Any] | str
    ) -> str:
        """Run one call; the text sent back: its JSON result, or an error the model can act
        on. A valid `submit` raises `Submitted`."""
        tool = self.tools.get(name)
        if tool is None:
            valid = ", ".join(self.tools) or "none"
            return self._reject(
                turn, name, "unknown_tool", f"error: unknown tool {name!r}; the tools are: {valid}"
            )
        if isinstance(arguments, str):
            error = f"error: {arguments}; call {name} again with a JSON object: {expected(tool)}"
            return self._reject(turn, name, "malformed", error)
        problems = argument_problems(tool, arguments)
        summary = arguments.get("summary")
        if (
            name == SUBMIT_TOOL
            and not problems
            and not (isinstance(summary, str) and summary.strip())
        ):
            problems.append("'summary' must say what you found and changed")
        if problems:
            error = f"error: {name}: {'; '.join(problems)}. Expected arguments: {expected(tool)}"
            return self._reject(turn, name, "invalid_arguments", error)
        if name == SUBMIT_TOOL:
            raise Submitted(str(summary))
        try:
            result = await session.call(name, arguments)
        except ToolCallError as exc:
            return f"error: {exc}"
        return truncate(json.dumps(result, ensure_ascii=False))

    def _reject(self, turn: ModelTurn, name: str, reason: Rejection, error: str) -> str:
        turn.rejected.append(RejectedCall(name=name, reason=reason, error=error))
        return error

    def _how_to_call(self, turn: ModelTurn) -> str:
        """What to tell a model whose reply is neither a call nor an answer."""
        if not turn.text.strip():
            problem = "Your reply was empty."
        elif turn.finish_reason == "length":
            problem = f"Your reply was cut off at {self.config.max_tokens} tokens; be brief."
        else:
            problem = "Your reply called no tool and is not a final answer."
        return f"{problem} {self._call_hint()}"

    def _call_hint(self) -> str:
        example = next((name for name in self.tools if name != SUBMIT_TOOL), "topology")
        via_api = "through the tools API, or " if "tools" in self._payload else ""
        return (
            f"Call a tool {via_api}by answering with a JSON object such as "
            f'{{"name": "{example}", "arguments": {{}}}}. When the task is done, call submit: '
            '{"name": "submit", "arguments": {"summary": "<the cause and what you changed>"}}. '
            f"The tools: {', '.join(self.tools) or 'none'}."
        )


def native_call(call: Message, index: int) -> Message:
    """A `tool_calls` entry as the endpoint takes it back in the history: typed, with an id,
    and its arguments as a JSON string (some servers send an object)."""
    function = dict(call.get("function") or {})
    if not isinstance(function.get("arguments"), str):
        function["arguments"] = json.dumps(function.get("arguments") or {})
    return {
        "type": "function",
        **call,
        "id": call.get("id") or f"call_{index}",
        "function": function,
    }


def decode_arguments(raw: Any) -> dict[str, Any] | str:
    """A native call's arguments: a JSON object in a string (OpenAI) or already decoded (some
    servers); the reason as text when they are not an object."""
    if isinstance(raw, dict):
        return raw
    try:
        arguments = json.loads(raw or "{}")
    except (json.JSONDecodeError, TypeError) as exc:
        return f"the arguments are not valid JSON ({exc}): {str(raw)[:200]!r}"
    if not isinstance(arguments, dict):
        return f"the arguments must be a JSON object, not {type(arguments).__name__}"
    return arguments


def readable(content: str) -> Any:
    """A result for a text-form answer: the decoded object, so it is not quoted twice."""
    if content.startswith("{"):
        try:
            return json.loads(content)
        except json.JSONDecodeError:
            pass
    return content


def truncate(text: str) -> str:
    if len(text) <= MAX_RESULT_CHARS:
        return text
    return (
        f"{text[:MAX_RESULT_CHARS]}\n[truncated: {MAX_RESULT_CHARS} of {len(text)} characters "
        "shown; ask for less, e.g. a narrower show command]"
    )
