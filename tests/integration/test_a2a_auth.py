"""Bearer tokens on the A2A servers, over real sockets on 127.0.0.1: a green agent and a
built-in purple agent that each require one refuse every other credential on every route of
both bindings (JSON-RPC methods of A2A 1.0 and 0.3 alike), serve their cards to anyone, and
take the right token; one `netdojo run`
against a purple agent that requires a token (and echoes it) writes that token nowhere."""

from __future__ import annotations

import base64
import contextlib
import json
import secrets
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, create_client
from a2a.client.errors import A2AClientError
from a2a.types import ListTasksRequest
from starlette.routing import Mount, Route

from netdojo.clients.assessor import assess
from netdojo.clients.purple import CallerContextBuilder, PurpleExecutor
from netdojo.clients.session import ToolCallError, ToolSession
from netdojo.errors import NetdojoError
from netdojo.servers.a2a_app import BASE_PATH, JSONRPC_PATH, a2a_app, a2a_routes, agent_card
from netdojo.servers.apps import green_app
from netdojo.servers.green import SKILL
from netdojo.servers.serving import free_port, serve_uvicorn
from netdojo.tools.contract import EpisodeView

from .arena import builtin_purple

pytestmark = pytest.mark.anyio
NETDOJO = str(Path(sys.executable).parent / "netdojo")
CARD = "/.well-known/agent-card.json"
HEADERS = {"A2A-Version": "1.0", "Content-Type": "application/json"}
GREEN_TOKEN = secrets.token_urlsafe(32)
PURPLE_TOKEN = secrets.token_urlsafe(32)
JSONRPC_METHODS = [
    "SendMessage", "SendStreamingMessage", "GetTask", "ListTasks", "CancelTask",
    "SubscribeToTask", "GetExtendedAgentCard", "CreateTaskPushNotificationConfig",
    "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs",
    "DeleteTaskPushNotificationConfig",
    # A2A 0.3
    "message/send", "message/stream", "tasks/get", "tasks/cancel", "tasks/resubscribe",
    "tasks/pushNotificationConfig/set", "tasks/pushNotificationConfig/get",
    "tasks/pushNotificationConfig/list", "tasks/pushNotificationConfig/delete",
    "agent/getAuthenticatedExtendedCard",
]  # fmt: skip
STREAMS = ("SendStreamingMessage", "message/stream")
CREDENTIALS = [
    "Bearer", "Bearer {token}x", "Bearer x{token}", "Token {token}", "{token}", "Basic {basic}",
    "Bearer {token} {token}", "Bearer {lower}",
]  # fmt: skip


@dataclass
class Served:
    url: str
    token: str


@pytest.fixture(scope="module")
async def servers() -> AsyncIterator[dict[str, Served]]:
    """The green agent and the built-in noop purple agent, each with a token of its own."""
    green_port, purple_port = free_port(), free_port()
    green = Served(f"http://127.0.0.1:{green_port}", GREEN_TOKEN)
    purple = Served(f"http://127.0.0.1:{purple_port}", PURPLE_TOKEN)
    async with (
        serve_uvicorn(
            green_app("127.0.0.1", green_port, token=green.token), "127.0.0.1", green_port
        ),
        serve_uvicorn(builtin_purple("noop", purple.url, purple.token), "127.0.0.1", purple_port),
    ):
        yield {"green": green, "purple": purple}


def _calls() -> list[tuple[str, str, bytes]]:
    """(method, path, body) for every A2A route the servers have, and every JSON-RPC method;
    REST routes also under a tenant."""
    card = agent_card("routes", "every route", "http://x", [SKILL])
    routes = a2a_routes(card, PurpleExecutor(lambda: _echo))
    calls: list[tuple[str, str, bytes]] = []
    for route in routes:
        inner = route.routes if isinstance(route, Mount) else [route]
        prefix = "/tenant-1" if isinstance(route, Mount) else ""
        for leaf in inner:
            assert isinstance(leaf, Route)
            path = prefix + leaf.path.replace("{id}", "task-1").replace("{push_id}", "push-1")
            for method in sorted(leaf.methods or ()):
                if method == "HEAD" or path == CARD:
                    continue
                if path in (JSONRPC_PATH, BASE_PATH):
                    calls += [(method, path, _rpc(name)) for name in JSONRPC_METHODS]
                else:
                    calls.append((method, path, b"{}" if method == "POST" else b""))
    return calls


def _rpc(method: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": {}}).encode()


async def _echo(session: ToolSession, task: EpisodeView) -> str:
    return "unused"


def _credential(form: str, token: str) -> dict[str, str]:
    basic = base64.b64encode(f"netdojo:{token}".encode()).decode()
    value = form.format(token=token, basic=basic, lower=token.lower())
    return {"Authorization": value} if value else {}


@pytest.mark.parametrize("server", ["green", "purple"])
async def test_every_route_refuses_every_other_credential(
    servers: dict[str, Served], server: str
) -> None:
    """Every route without the token, with a wrong one and with it in the query; every other
    credential on a call of each kind (JSON-RPC on either path, its streams of either
    version, REST, REST under a tenant)."""
    served = servers[server]
    calls = _calls()
    assert len(calls) > 30
    kinds = [c for c in calls if c[2] in (_rpc("ListTasks"), *map(_rpc, STREAMS))]
    kinds += [c for c in calls if c[1].endswith("/a2a/rest/tasks")]
    assert len(kinds) == 8
    async with httpx.AsyncClient(base_url=served.url, timeout=30) as http:

        async def refused(call: tuple[str, str, bytes], form: str, query: bool = False) -> None:
            method, path, body = call
            headers = {**HEADERS, **_credential(form, served.token)}
            params = {"token": served.token, "access_token": served.token} if query else None
            answer = await http.request(method, path, content=body, headers=headers, params=params)
            assert answer.status_code == 401, (method, path, form, query, answer.text[:200])
            assert answer.headers["www-authenticate"].startswith("Bearer")

        for call in calls:
            await refused(call, "")
            await refused(call, "Bearer wrong-token-of-the-same-form")
            await refused(call, "", query=True)
        for call in kinds:
            for form in CREDENTIALS:
                await refused(call, form)
        for method, path, body in calls:  # the right token passes, whatever the call then gets
            headers = {**HEADERS, "Authorization": f"Bearer {served.token}"}
            answer = await http.request(method, path, content=body, headers=headers)
            assert answer.status_code != 401, (method, path, answer.text[:200])


@pytest.mark.parametrize("server", ["green", "purple"])
async def test_the_card_is_public_and_declares_the_bearer_scheme(
    servers: dict[str, Served], server: str
) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        answer = await http.get(f"{servers[server].url}{CARD}")
        card = await A2ACardResolver(http, servers[server].url).get_agent_card()
    assert answer.status_code == 200
    assert answer.json()["securityRequirements"] == [{"schemes": {"bearer": {}}}]
    scheme = card.security_schemes["bearer"].http_auth_security_scheme
    assert scheme.scheme == "Bearer"
    assert list(card.security_requirements[0].schemes) == ["bearer"]


async def test_the_right_token_works_on_both_bindings_and_the_stream(
    servers: dict[str, Served],
) -> None:
    green, purple = servers["green"], servers["purple"]
    with pytest.raises(A2AClientError, match="401"):
        await assess(green.url, {"participants": {}})
    with pytest.raises(NetdojoError, match="exactly one participant"):
        await assess(green.url, {"participants": {}}, token=green.token)
    unasked = {"participants": {"agent": purple.url}}
    with pytest.raises(NetdojoError, match="requires credentials"):
        await assess(green.url, unasked, token=green.token)
    unreachable = {"participants": {"agent": {"url": "http://127.0.0.1:1", "token": purple.token}}}
    with pytest.raises(NetdojoError, match="cannot read the agent card"):
        await assess(green.url, unreachable, token=green.token)
    auth = {"Authorization": f"Bearer {green.token}"}
    async with httpx.AsyncClient(headers=auth, timeout=30) as http:
        for binding in ("JSONRPC", "HTTP+JSON"):
            config = ClientConfig(httpx_client=http, supported_protocol_bindings=[binding])
            async with await create_client(green.url, client_config=config) as client:
                listed = await client.list_tasks(ListTasksRequest(include_artifacts=True))
            assert len(listed.tasks) >= 3, binding
            assert purple.token not in str(listed), "a participant's token is never stored"


async def test_a_run_against_an_agent_that_requires_a_token_writes_it_nowhere(
    tmp_path: Path,
) -> None:
    """`netdojo run --agent-token-file`: the purple agent requires the token and echoes it
    into a tool call and its answer; lowercase hex, so only its exact redaction keeps it out."""
    token = secrets.token_hex(24)

    async def echo(session: ToolSession, task: EpisodeView) -> str:
        with contextlib.suppress(ToolCallError):
            await session.call("show", {"device": "nowhere", "command": f"show {token}"})
        return f"did nothing; called with {token}"

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    card = agent_card("test-echo", "echoes its caller's token", url, [], streaming=False)
    executor = PurpleExecutor(lambda: echo)
    app = a2a_app(card, executor, token=token, context_builder=CallerContextBuilder())
    (tmp_path / "token").write_text(f"{token}\n")
    out = tmp_path / "run"
    argv = [NETDOJO, "run", "--agent", url, "--agent-token-file", str(tmp_path / "token"),
            "--families", "ospf-routing", "--seeds", "1", "--out", str(out)]  # fmt: skip
    async with serve_uvicorn(app, "127.0.0.1", port):
        with anyio.fail_after(240):
            done = await anyio.run_process(argv, check=False)
    printed = (done.stdout + done.stderr).decode()
    assert done.returncode == 0, printed[-3000:]
    (episode,) = json.loads((out / "results.json").read_text())["episodes"]
    assert episode["outcome"] == "unsolved", episode["verdict"]
    written = [p.read_text() for p in out.rglob("*") if p.is_file()]
    assert any("called with [redacted]" in text for text in written)
    assert any("show [redacted]" in text for text in written)
    assert not any(token in text for text in [*written, printed])
