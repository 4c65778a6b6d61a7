"""The LLM agent loop against a scripted OpenAI-compatible server and an in-process MCP server."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import pytest
import uvicorn
from mcp import Client
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from netdojo.clients import llm
from netdojo.clients.agents import Task
from netdojo.clients.llm import LLMAgent, LLMConfig, LLMError, Usage
from netdojo.clients.session import ToolSession

pytestmark = pytest.mark.anyio

TOPOLOGY = {"devices": [{"name": "r1", "role": "router"}, {"name": "h1", "role": "host"}]}
BRIEF = "h1 cannot reach h2; find and fix the fault."


class ScriptedLLM:
    """Answers `/v1/chat/completions` from a script of (status, body) and records each request."""

    def __init__(self, script: list[tuple[int, dict[str, Any]]]) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []

    async def completions(self, request: Request) -> JSONResponse:
        self.requests.append(await request.json())
        self.headers.append(dict(request.headers))
        if not self.script:
            return JSONResponse({"error": {"message": "script exhausted"}}, status_code=500)
        status, body = self.script.pop(0)
        return JSONResponse(body, status_code=status)

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/chat/completions", self.completions, methods=["POST"])])

    def messages(self, index: int, role: str) -> list[dict[str, Any]]:
        return [m for m in self.requests[index]["messages"] if m["role"] == role]


@asynccontextmanager
async def serving(fake: ScriptedLLM) -> AsyncIterator[str]:
    """Serve the fake on a free loopback port; yields its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(fake.app(), log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, [sock])
        with anyio.fail_after(10):
            while not server.started:
                await anyio.sleep(0.01)
        try:
            yield f"http://127.0.0.1:{port}/v1"
        finally:
            server.should_exit = True
    sock.close()


def fake_lab(calls: list[str]) -> MCPServer:
    """Small stand-ins for the lab tools; `calls` records which ran."""
    server = MCPServer("fake-lab")

    @server.tool()
    def topology() -> dict[str, Any]:
        """Devices and links."""
        calls.append("topology")
        return TOPOLOGY

    @server.tool()
    def show(device: str, command: str) -> dict[str, Any]:
        """Read state."""
        calls.append("show")
        if device != "r1":
            raise ToolError(f"unknown device {device!r}; devices: r1, h1")
        return {"device": device, "text": "x" * 20_000 if command == "show log" else "ok"}

    @server.tool()
    def submit(summary: str) -> dict[str, Any]:
        """End the work."""
        calls.append("submit")
        return {"accepted": True}

    return server


def tool_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def completion(
    calls: list[dict[str, Any]] | None = None, content: str | None = None, usage: tuple = (0, 0)
) -> tuple[int, dict[str, Any]]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1]},
    }
    return 200, body


@dataclass
class Run:
    summary: str | None
    error: LLMError | None
    agent: LLMAgent
    fake: ScriptedLLM
    lab_calls: list[str]


async def run_agent(script: list[tuple[int, dict[str, Any]]], **config: Any) -> Run:
    """One episode; an `LLMError` is returned, not raised, to keep it out of exception groups."""
    fake, lab_calls = ScriptedLLM(script), list[str]()
    summary, error = None, None
    async with serving(fake) as base_url, Client(fake_lab(lab_calls)) as client:
        agent = LLMAgent(LLMConfig(base_url=base_url, model="test-model", **config))
        try:
            summary = await agent(ToolSession(client), Task(brief=BRIEF))
        except LLMError as exc:
            error = exc
    return Run(summary, error, agent, fake, lab_calls)


async def test_loop_runs_tools_sends_results_back_and_returns_the_submit_summary() -> None:
    script = [
        completion([tool_call("call_topo", "topology", "{}")], usage=(100, 10)),
        completion([tool_call("call_show", "show", '{"device": "r1",')], usage=(200, 20)),
        completion([tool_call("call_done", "submit", '{"summary": "fixed r1"}')], usage=(300, 30)),
    ]
    run = await run_agent(script, api_key="sk-test")
    fake = run.fake

    assert run.summary == "fixed r1"
    assert run.lab_calls == ["topology"]  # the bad call never ran; submit is left to the caller
    assert len(fake.requests) == 3
    first = fake.requests[0]
    assert first["model"] == "test-model"
    assert first["temperature"] == 0.0
    assert fake.messages(0, "user") == [{"role": "user", "content": BRIEF}]
    assert "submit" in fake.messages(0, "system")[0]["content"]
    functions = {tool["function"]["name"]: tool for tool in first["tools"]}
    assert set(functions) == {"topology", "show", "submit"}
    assert functions["show"]["type"] == "function"
    assert functions["show"]["function"]["description"] == "Read state."
    assert functions["show"]["function"]["parameters"]["required"] == ["device", "command"]

    [topology_result] = fake.messages(1, "tool")
    assert topology_result["tool_call_id"] == "call_topo"
    assert json.loads(topology_result["content"]) == TOPOLOGY
    assistant = fake.messages(1, "assistant")[0]
    assert assistant["tool_calls"][0]["id"] == "call_topo"

    bad_arguments = fake.messages(2, "tool")[-1]
    assert bad_arguments["tool_call_id"] == "call_show"
    assert "not valid JSON" in bad_arguments["content"]

    assert run.agent.usage == Usage(prompt_tokens=600, completion_tokens=60, turns=3)
    assert all(h["authorization"] == "Bearer sk-test" for h in fake.headers)


async def test_an_answer_without_tool_calls_is_the_summary_and_no_key_sends_no_header() -> None:
    run = await run_agent([completion(content="nothing to fix", usage=(5, 1))])

    assert run.summary == "nothing to fix"
    assert run.agent.usage == Usage(prompt_tokens=5, completion_tokens=1, turns=1)
    assert "authorization" not in run.fake.headers[0]


async def test_tool_errors_reach_the_model_and_long_results_are_truncated() -> None:
    script = [
        completion(
            [
                tool_call("call_bad", "show", '{"device": "r9", "command": "show ip route"}'),
                tool_call("call_log", "show", '{"device": "r1", "command": "show log"}'),
            ]
        ),
        completion(content="done"),
    ]
    run = await run_agent(script)

    assert run.summary == "done"
    assert run.lab_calls == ["show", "show"]
    error, log = run.fake.messages(1, "tool")
    assert error["tool_call_id"] == "call_bad"
    assert "unknown device 'r9'; devices: r1, h1" in error["content"]
    assert log["tool_call_id"] == "call_log"
    assert len(log["content"]) < llm.MAX_RESULT_CHARS + 200
    assert "[truncated: 12000 of" in log["content"]


async def test_the_loop_stops_after_max_turns() -> None:
    script = [completion([tool_call(f"call_{i}", "topology", "{}")]) for i in range(3)]
    run = await run_agent(script, max_turns=2)

    assert run.summary == "stopped after 2 turns without calling submit"
    assert len(run.fake.requests) == 2
    assert run.lab_calls == ["topology", "topology"]
    assert run.agent.usage.turns == 2


async def test_a_5xx_is_retried_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llm, "RETRY_DELAY_S", 0.0)
    overloaded = (503, {"error": {"message": "overloaded"}})

    run = await run_agent([overloaded, completion(content="ok")])
    assert (run.summary, len(run.fake.requests)) == ("ok", 2)

    run = await run_agent([overloaded, overloaded, completion(content="too late")])
    assert "HTTP 503: overloaded" in str(run.error)
    assert len(run.fake.requests) == 2


async def test_a_401_raises_llm_error_with_the_server_message() -> None:
    unauthorized = (401, {"error": {"message": "Incorrect API key provided", "type": "auth"}})
    run = await run_agent([unauthorized, completion(content="never")], api_key="wrong")
    assert run.summary is None
    assert "/v1/chat/completions answered HTTP 401: Incorrect API key provided" in str(run.error)
    assert len(run.fake.requests) == 1  # a 4xx is not retried
    assert run.fake.headers[0]["authorization"] == "Bearer wrong"


async def test_an_unreachable_endpoint_raises_llm_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llm, "RETRY_DELAY_S", 0.0)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, not listening: connections are refused
        config = LLMConfig(base_url=f"http://127.0.0.1:{port}/v1", model="m")
        async with Client(fake_lab([])) as client:
            with pytest.raises(LLMError, match="cannot reach"):
                await LLMAgent(config)(ToolSession(client), Task(brief=BRIEF))


ENV = ("NETDOJO_LLM_BASE_URL", "NETDOJO_LLM_MODEL", "NETDOJO_LLM_API_KEY", "OPENAI_API_KEY")


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_from_env_names_the_missing_variables(clean_env: pytest.MonkeyPatch) -> None:
    with pytest.raises(LLMError, match="NETDOJO_LLM_BASE_URL and NETDOJO_LLM_MODEL"):
        LLMConfig.from_env()
    clean_env.setenv("NETDOJO_LLM_BASE_URL", "http://127.0.0.1:8000/v1")
    with pytest.raises(LLMError, match="set NETDOJO_LLM_MODEL") as raised:
        LLMConfig.from_env()
    assert "set NETDOJO_LLM_BASE_URL" not in str(raised.value)


def test_from_env_reads_the_variables_with_fallback_key_and_overrides(
    clean_env: pytest.MonkeyPatch,
) -> None:
    clean_env.setenv("NETDOJO_LLM_BASE_URL", "http://127.0.0.1:8000/v1")
    clean_env.setenv("NETDOJO_LLM_MODEL", "qwen")
    assert LLMConfig.from_env().api_key == ""
    clean_env.setenv("OPENAI_API_KEY", "sk-openai")
    assert LLMConfig.from_env().api_key == "sk-openai"
    clean_env.setenv("NETDOJO_LLM_API_KEY", "sk-netdojo")
    config = LLMConfig.from_env(model="llama", max_turns=5)
    assert (config.base_url, config.model, config.api_key) == (
        "http://127.0.0.1:8000/v1",
        "llama",
        "sk-netdojo",
    )
    assert (config.max_turns, config.temperature, config.request_timeout_s) == (5, 0.0, 120.0)
