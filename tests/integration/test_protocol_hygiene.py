"""Malformed A2A requests to the green agent and malformed MCP messages to an episode's HTTP
endpoint, over real sockets: each gets the protocol's error, and the server serves a valid
request afterwards."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from starlette.applications import Starlette
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route

from netdojo.labs.runtime import LiveLab, deploy_lab
from netdojo.labs.samples import ospf_ring
from netdojo.servers.apps import green_app
from netdojo.servers.endpoints import Endpoint, EndpointHost
from netdojo.servers.mcp_server import evaluation_server
from netdojo.servers.serving import free_port, serve_uvicorn
from netdojo.tools.lab_tools import LabTools
from netdojo.tools.trajectory import Trajectory

from .public import public_half

pytestmark = pytest.mark.anyio
PARSE, INVALID_REQUEST, NO_METHOD, INVALID_PARAMS, INTERNAL = -32700, -32600, -32601, -32602, -32603
A2A_HEADERS = {"A2A-Version": "1.0", "Content-Type": "application/json"}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
HUGE = 8 * 2**20  # twice the request limit of either server
NESTED = b'{"jsonrpc": "2.0", "id": 1, "params": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
NO_VERSION = json.dumps({"id": 1, "method": "tools/list"}).encode()
SHAPE = {INVALID_REQUEST, INVALID_PARAMS}  # the MCP SDK answers a wrong shape with either


def _rpc(method: Any, params: Any = None, **extra: Any) -> bytes:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": 7, "method": method, **extra}
    if params is not None:
        body["params"] = params
    return json.dumps(body).encode()


def _message(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": list(parts)}}


A2A_CASES: list[tuple[str, bytes, set[int]]] = [
    ("not json", b"{participants", {PARSE}),
    ("empty body", b"", {PARSE}),
    ("a bare number", b"42", {INVALID_REQUEST}),
    ("an empty batch", b"[]", {INVALID_REQUEST}),
    ("a batch of garbage", b"[1, 2, 3]", {INVALID_REQUEST}),
    ("no jsonrpc member", NO_VERSION, {INVALID_REQUEST}),
    ("jsonrpc 1.0", _rpc("SendMessage", _message({"text": "x"}), jsonrpc="1.0"), {INVALID_REQUEST}),
    ("a numeric method", _rpc(5), {INVALID_REQUEST}),
    ("an unknown method", _rpc("DeleteEverything", {}), {NO_METHOD}),
    ("params as a list", _rpc("SendMessage", [1, 2]), {INVALID_PARAMS}),
    ("no message", _rpc("SendMessage", {}), {INVALID_PARAMS}),
    ("a message without parts", _rpc("SendMessage", _message()), {INVALID_PARAMS}),
    (
        "wrong types in the message",
        _rpc("SendMessage", {"message": {"messageId": 5, "role": 7, "parts": "x"}}),
        {INVALID_PARAMS},
    ),
    ("an unknown task", _rpc("GetTask", {"id": "no-such-task"}), {-32001}),
    # Python's parser gives up on this nesting; the SDK answers an internal error, and lives.
    ("nesting past the parser", NESTED, {INTERNAL}),
]  # fmt: skip


@pytest.fixture(scope="module")
async def green() -> AsyncIterator[str]:
    port = free_port()
    async with serve_uvicorn(green_app("127.0.0.1", port), "127.0.0.1", port):
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
async def lab() -> AsyncIterator[LiveLab]:
    async with deploy_lab(ospf_ring(2, 0, name="proto")) as live:
        yield live


async def _jsonrpc_url(http: httpx.AsyncClient, green: str) -> str:
    card = (await http.get(f"{green}/.well-known/agent-card.json")).json()
    return next(i["url"] for i in card["supportedInterfaces"] if i["protocolBinding"] == "JSONRPC")


async def _assessment_is_rejected(http: httpx.AsyncClient, url: str, request: Any) -> str:
    """Send a well-formed message carrying ``request``; the task's state and its text."""
    sent = await http.post(
        url, content=_rpc("SendMessage", _message({"data": request})), headers=A2A_HEADERS
    )
    status = sent.json()["result"]["task"]["status"]
    text = "".join(p.get("text", "") for p in status["message"]["parts"])
    assert status["state"] == "TASK_STATE_REJECTED", status
    return text


async def test_malformed_a2a_requests_get_json_rpc_errors(green: str) -> None:
    async with httpx.AsyncClient(timeout=60) as http:
        url = await _jsonrpc_url(http, green)
        for case, body, codes in A2A_CASES:
            answer = await http.post(url, content=body, headers=A2A_HEADERS)
            assert answer.status_code == 200, (case, answer.text[:300])
            reply = answer.json()
            assert reply["jsonrpc"] == "2.0" and "result" not in reply, case
            assert reply["error"]["code"] in codes, (case, reply["error"])
            assert "Traceback" not in answer.text, case
        text = await _assessment_is_rejected(http, url, {"participants": {}})
        assert "exactly one participant" in text, "the server still serves a valid request"


async def test_an_a2a_request_past_the_size_limit_is_refused_unread(green: str) -> None:
    body = _rpc("SendMessage", _message({"text": "x" * HUGE}))

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: the limit counts bytes
        for start in range(0, len(body), 2**20):
            yield body[start : start + 2**20]

    async with httpx.AsyncClient(timeout=60) as http:
        url = await _jsonrpc_url(http, green)
        declared = await http.post(url, content=body, headers=A2A_HEADERS)
        assert declared.status_code == 413
        streamed = await http.post(url, content=chunks(), headers=A2A_HEADERS)
        if streamed.status_code == 200:
            assert streamed.json()["error"]["code"] == INVALID_REQUEST
        else:
            assert streamed.status_code == 413
        text = await _assessment_is_rejected(http, url, {"participants": {}})
        assert "exactly one participant" in text


async def test_malformed_a2a_rest_requests_get_http_errors(green: str) -> None:
    rest = f"{green}/a2a/rest"
    async with httpx.AsyncClient(timeout=60) as http:
        for body in (b"{not json", b"[]", json.dumps({"message": {"parts": "x"}}).encode()):
            answer = await http.post(f"{rest}/message:send", content=body, headers=A2A_HEADERS)
            assert 400 <= answer.status_code < 500, (body, answer.status_code, answer.text)
            assert "Traceback" not in answer.text
        missing = await http.get(f"{rest}/tasks/no-such-task", headers=A2A_HEADERS)
        assert missing.status_code == 404
        assert (await http.get(f"{green}/.well-known/agent-card.json")).status_code == 200


async def test_a_participant_with_a_hostile_card_is_rejected_clearly(green: str) -> None:
    """The green agent reads each participant's card: one that is not a JSON object gets the
    request rejected with the reason."""

    async def list_card(request: Any) -> JSONResponse:
        return JSONResponse(["not", "an", "object"])

    async def text_card(request: Any) -> PlainTextResponse:
        return PlainTextResponse("<html>not a card</html>")

    hostile = Starlette(
        routes=[
            Route("/list/.well-known/agent-card.json", list_card),
            Route("/text/.well-known/agent-card.json", text_card),
        ]
    )
    port = free_port()
    async with (
        serve_uvicorn(hostile, "127.0.0.1", port),
        httpx.AsyncClient(timeout=60) as http,
    ):
        url = await _jsonrpc_url(http, green)
        for kind in ("list", "text"):
            participant = {"agent": f"http://127.0.0.1:{port}/{kind}"}
            text = await _assessment_is_rejected(http, url, {"participants": participant})
            assert "bad assessment request" in text and "agent card" in text, text


MCP_CASES: list[tuple[str, bytes, int, set[int]]] = [
    ("not json", b"{jsonrpc", 400, {PARSE}),
    ("empty body", b"", 400, {PARSE}),
    ("a bare number", b"42", 400, SHAPE),
    ("an empty batch", b"[]", 400, SHAPE),
    ("a batch of garbage", b'[1, "x", null]', 400, SHAPE),
    ("jsonrpc 1.0", _rpc("tools/list", {}, jsonrpc="1.0"), 400, SHAPE),
    ("no jsonrpc member", NO_VERSION, 400, SHAPE),
    ("a numeric method", _rpc(5), 400, SHAPE),
    ("params as a list", _rpc("tools/call", [1, 2]), 400, SHAPE),
    ("nesting past the parser", NESTED, 400, {PARSE}),
    ("an unknown method", _rpc("tools/destroy", {}), 200, {NO_METHOD}),
    ("arguments as a list", _rpc("tools/call", {"name": "show", "arguments": [1]}), 200, SHAPE),
    ("a call without a name", _rpc("tools/call", {"arguments": {}}), 200, {INVALID_PARAMS}),
]  # fmt: skip


@pytest.fixture(scope="module")
async def endpoint(lab: LiveLab) -> AsyncIterator[tuple[Endpoint, LabTools]]:
    port = free_port()
    host = EndpointHost("127.0.0.1", port)
    tools = LabTools(lab, public_half(lab.spec), Trajectory(episode="protocol"))
    async with serve_uvicorn(host.app, "127.0.0.1", port):
        yield await host.add("protocol", evaluation_server(tools)), tools


async def _session(http: httpx.AsyncClient, endpoint: Endpoint) -> dict[str, str]:
    """Initialize an MCP session by hand; the headers that carry it."""
    auth = {**MCP_HEADERS, "Authorization": f"Bearer {endpoint.token}"}
    hello = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    answer = await http.post(endpoint.url, content=_rpc("initialize", hello), headers=auth)
    assert answer.status_code == 200, answer.text
    session = {**auth, "mcp-session-id": answer.headers["mcp-session-id"]}
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await http.post(endpoint.url, json=note, headers=session)).status_code == 202
    return session


def _reply(answer: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of a response: plain JSON, or the data of a server-sent event."""
    if answer.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:] for line in answer.text.splitlines() if line.startswith("data:")]
        return dict(json.loads(data[-1]))
    return dict(answer.json())


async def _still_serves(endpoint: Endpoint, lab: LiveLab) -> None:
    """A fresh client gets a real answer from the lab."""
    router = lab.devices[0]
    auth = {"Authorization": f"Bearer {endpoint.token}"}
    async with (
        httpx2.AsyncClient(headers=auth) as http,
        Client(streamable_http_client(endpoint.url, http_client=http)) as client,
    ):
        shown = await client.call_tool("show", {"device": router, "command": "show version"})
        assert not shown.is_error and "FRRouting" in shown.structured_content["text"]


async def test_malformed_mcp_messages_get_json_rpc_errors(
    endpoint: tuple[Endpoint, LabTools], lab: LiveLab
) -> None:
    served, _ = endpoint
    async with httpx.AsyncClient(timeout=60) as http:
        session = await _session(http, served)
        for case, body, status, codes in MCP_CASES:
            answer = await http.post(served.url, content=body, headers=session)
            assert answer.status_code == status, (case, answer.text[:300])
            reply = _reply(answer)
            assert reply["jsonrpc"] == "2.0" and reply["error"]["code"] in codes, (case, reply)
            assert "Traceback" not in answer.text, case
    await _still_serves(served, lab)


async def test_bad_tool_calls_are_tool_errors_that_name_the_problem(
    endpoint: tuple[Endpoint, LabTools], lab: LiveLab
) -> None:
    served, tools = endpoint
    recorded = len(tools.trajectory.steps)
    calls = {
        "no such tool": ({"name": "rm_rf", "arguments": {}}, "Unknown tool"),
        "wrong types": (
            {"name": "ping", "arguments": {"source": 5, "destination": ["x"], "count": "many"}},
            "source must be a string, not 5; destination must be a string, not ['x']; "
            "count must be an integer, not 'many'",
        ),
        "a missing argument": ({"name": "show", "arguments": {"device": "r1"}}, "command"),
        "out of bounds": (
            {"name": "capture", "arguments": {"device": "r1", "interface": "eth0", "seconds": 1e9}},
            "seconds must be from 0.5 to 30.0, not 1000000000.0",
        ),
    }
    async with httpx.AsyncClient(timeout=60) as http:
        session = await _session(http, served)
        for case, (params, reason) in calls.items():
            answer = await http.post(
                served.url, content=_rpc("tools/call", params), headers=session
            )
            result = _reply(answer)["result"]
            text = result["content"][0]["text"]
            assert result["isError"] and reason in text, (case, result)
            assert "pydantic" not in text and "validation error" not in text, (case, text)
    assert len(tools.trajectory.steps) == recorded, "a call the schema refuses never runs"
    await _still_serves(served, lab)


async def test_mcp_transport_errors_use_http_status_codes(
    endpoint: tuple[Endpoint, LabTools], lab: LiveLab
) -> None:
    served, _ = endpoint
    auth = {**MCP_HEADERS, "Authorization": f"Bearer {served.token}"}
    listing = _rpc("tools/list", {})
    async with httpx.AsyncClient(timeout=60) as http:
        session = await _session(http, served)
        answers = {
            "no session id": (await http.post(served.url, content=listing, headers=auth), 400),
            "an unknown session": (
                await http.post(
                    served.url, content=listing, headers={**auth, "mcp-session-id": "x"}
                ),
                404,
            ),
            "a body past the limit": (
                await http.post(served.url, content=b" " * HUGE + listing, headers=session),
                413,
            ),
            "text/plain": (
                await http.post(
                    served.url, content=listing, headers={**session, "Content-Type": "text/plain"}
                ),
                400,
            ),
            "no event stream accepted": (
                await http.post(
                    served.url, content=listing, headers={**session, "Accept": "text/html"}
                ),
                406,
            ),
            "a foreign Origin": (
                await http.post(
                    served.url,
                    content=listing,
                    headers={**session, "Origin": "http://evil.example"},
                ),
                403,
            ),
            "another port in Host": (
                await http.post(
                    served.url, content=listing, headers={**session, "Host": "127.0.0.1:1"}
                ),
                421,
            ),
        }
        for case, (answer, status) in answers.items():
            assert answer.status_code == status, (case, answer.status_code, answer.text[:200])
            assert "Traceback" not in answer.text
        ended = await http.delete(served.url, headers=session)
        assert ended.status_code == 200
        after = await http.post(served.url, content=listing, headers=session)
        assert after.status_code == 404, "an ended session is gone"
    await _still_serves(served, lab)


@pytest.mark.parametrize(
    "authorization",
    ["", "Bearer", "Token {token}", "Bearer {token}x", "Bearer x{token}", "{token}"],
)
async def test_an_endpoint_refuses_every_other_credential(
    endpoint: tuple[Endpoint, LabTools], authorization: str
) -> None:
    served, _ = endpoint
    headers = {**MCP_HEADERS, "Authorization": authorization.format(token=served.token)}
    async with httpx.AsyncClient(timeout=60) as http:
        refused = await http.post(
            f"{served.url}?token={served.token}", content=_rpc("tools/list", {}), headers=headers
        )
    assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer")
