"""`netdojo mcp --http` without a lab: where its token comes from (never the command line, never
printed), what a request without the right token is told, what an OAuth-minded client is told,
and a quiet stop on a signal. Practice mode starts no lab until a scenario is started."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import cast

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from typer.testing import CliRunner

from netdojo.cli import app
from netdojo.errors import NetdojoError
from netdojo.labs.runtime import LiveLab
from netdojo.mcp_command import TOKEN_ENV, http_token
from netdojo.scenarios.model import PublicHalf
from netdojo.servers.bearer import MISSING, NO_OAUTH, refusal_of
from netdojo.servers.endpoints import EndpointHost
from netdojo.servers.mcp_server import evaluation_server
from netdojo.servers.serving import free_port
from netdojo.tools.lab_tools import LabTools
from netdojo.tools.trajectory import Trajectory

TOKEN = "mcp-token-of-enough-length"
runner = CliRunner()


def _plain(output: str) -> str:
    """A command's error panel as one line of words, without its frame."""
    return " ".join(output.translate({ord(c): " " for c in "│╭╮╰╯─"}).split())


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("NETDOJO_HOME", str(tmp_path / "home"))
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    return tmp_path / "home"


def test_the_token_comes_from_a_file_then_the_environment_then_a_new_private_file(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = tmp_path / "token"
    file.write_text(f"  {TOKEN}\n")
    monkeypatch.setenv(TOKEN_ENV, "another-token-of-enough-length")
    assert http_token(file, 8765) == (TOKEN, f"read from {file}")
    assert http_token(None, 8765) == ("another-token-of-enough-length", f"read from ${TOKEN_ENV}")
    monkeypatch.delenv(TOKEN_ENV)
    made, source = http_token(None, 8765)
    written = home / "mcp" / "token-8765"
    assert source == f"new, in {written} (readable by you only)" and made not in source
    assert written.read_text() == f"{made}\n" and len(made) >= 32
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    written.chmod(0o644)
    again, _ = http_token(None, 8765)
    assert again != made and stat.S_IMODE(written.stat().st_mode) == 0o600


def test_a_bad_token_is_refused_naming_its_source(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TOKEN_ENV, "short")
    with pytest.raises(NetdojoError, match=rf"\${TOKEN_ENV}: a bearer token needs at least 16"):
        http_token(None, 8765)
    with pytest.raises(NetdojoError, match="cannot read the token file"):
        http_token(tmp_path / "missing", 8765)


@pytest.mark.parametrize("form", [["--token", TOKEN], [f"--token={TOKEN}"]])
def test_a_token_on_the_command_line_is_refused_without_echoing_it(
    home: Path, form: list[str]
) -> None:
    result = runner.invoke(app, ["mcp", "--http", *form])
    said = _plain(result.output)
    assert result.exit_code == 2
    assert "readable by every local user in the process list" in said
    assert "--token-file FILE" in said and TOKEN_ENV in said and TOKEN not in result.output


def test_the_command_refuses_token_mistakes_before_touching_anything(
    home: Path, tmp_path: Path
) -> None:
    file = tmp_path / "token"
    file.write_text(TOKEN)
    stdio = runner.invoke(app, ["mcp", "--token-file", str(file)])
    assert stdio.exit_code == 2 and "stdio needs none" in _plain(stdio.output)
    missing = runner.invoke(app, ["mcp", "--http", "--token-file", str(tmp_path / "nope")])
    assert isinstance(missing.exception, NetdojoError)
    assert "cannot read the token file" in str(missing.exception)
    assert not (home / "mcp").exists()


def test_the_command_line_refusal_reaches_a_shell_in_one_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "netdojo.cli", "mcp", "--http", "--token", TOKEN],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and TOKEN not in done.stderr + done.stdout
    assert "--token-file" in done.stderr and "Traceback" not in done.stderr


def _scope(authorization: str | None) -> dict[str, object]:
    headers = [] if authorization is None else [(b"authorization", authorization.encode())]
    return {"type": "http", "path": "/", "headers": headers}


@pytest.mark.parametrize(
    ("authorization", "says", "names_error"),
    [
        (None, MISSING, False),
        ("Bearer ", MISSING, False),
        (f"Basic {TOKEN}", "the Authorization header holds no bearer token", False),
        ("Bearer not-the-token-at-all", "wrong bearer token: the token sent is not", True),
        (f"Bearer {TOKEN}x", "wrong bearer token", True),
    ],
)
def test_a_refusal_says_whether_the_token_is_missing_or_wrong(
    authorization: str | None, says: str, names_error: bool
) -> None:
    refused = refusal_of(cast(dict, _scope(authorization)), TOKEN)
    assert refused is not None and refused.status_code == 401
    assert says in refused.body.decode()
    challenge = refused.headers["www-authenticate"]
    assert challenge.startswith('Bearer realm="netdojo"') and "resource_metadata" not in challenge
    assert ('error="invalid_token"' in challenge) is names_error
    assert refusal_of(cast(dict, _scope(f"Bearer {TOKEN}")), TOKEN) is None


def _tools() -> LabTools:
    return LabTools(
        cast(LiveLab, None), PublicHalf(brief="b", devices=[], links=[]), Trajectory(episode="e")
    )


@pytest.fixture
async def host() -> AsyncIterator[tuple[EndpointHost, httpx2.AsyncClient]]:
    served = EndpointHost("127.0.0.1", 8765)
    async with served.lifespan(served.app):
        await served.add("practice", evaluation_server(_tools()), TOKEN)
        transport = httpx2.ASGITransport(app=served.app)
        async with httpx2.AsyncClient(
            transport=transport, base_url="http://127.0.0.1:8765"
        ) as http:
            yield served, http


@pytest.mark.anyio
async def test_an_endpoint_answers_a_missing_or_wrong_token_in_plain_words(
    host: tuple[EndpointHost, httpx2.AsyncClient],
) -> None:
    _, http = host
    url = "/episodes/practice/mcp"
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    none = await http.post(url, json=body)
    assert none.status_code == 401 and none.json() == {"error": MISSING}
    wrong = await http.post(url, json=body, headers={"Authorization": "Bearer x" * 3})
    assert wrong.json() == {"error": "wrong bearer token: the token sent is not this endpoint's"}


@pytest.mark.anyio
async def test_oauth_discovery_and_registration_are_answered_with_what_to_send(
    host: tuple[EndpointHost, httpx2.AsyncClient],
) -> None:
    _, http = host
    for path in (
        "/.well-known/oauth-protected-resource/episodes/practice/mcp",
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
    ):
        answer = await http.get(path)
        assert answer.status_code == 404 and answer.json() == {"error": NO_OAUTH}, path
    registered = await http.post("/register", json={"redirect_uris": ["http://x/cb"]})
    assert registered.status_code == 400
    assert registered.json() == {"error": "invalid_request", "error_description": NO_OAUTH}
    assert "Authorization: Bearer <token>" in NO_OAUTH


SERVE = textwrap.dedent(
    """
    import sys
    from functools import partial

    import anyio

    from netdojo.servers.mcp_hosting import host_mcp

    serve = partial(
        host_mcp, None, 1, 1, http=True, host="127.0.0.1", port=int(sys.argv[1]),
        token=sys.argv[2], idle_minutes=30, trajectory=None,
        say=lambda line: print(line, file=sys.stderr, flush=True),
    )
    anyio.run(serve)
    """
)


@pytest.mark.anyio
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
async def test_a_signal_stops_the_http_server_quietly_with_a_client_connected(
    stop: signal.Signals,
) -> None:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-c", SERVE, str(port), TOKEN],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ),
    )  # fmt: skip
    assert server.stderr is not None
    try:
        with anyio.fail_after(60):
            line = await anyio.to_thread.run_sync(server.stderr.readline)
        assert line.startswith("MCP endpoint: "), line
        url = line.removeprefix("MCP endpoint: ").strip()
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            assert (await client.list_tools()).tools
            server.send_signal(stop)
            with anyio.fail_after(20):
                await anyio.to_thread.run_sync(server.wait)
    finally:
        if server.poll() is None:
            server.kill()
    said = line + server.stderr.read()
    assert server.returncode == 0, said
    assert "Traceback" not in said and "CancelledError" not in said and "ERROR" not in said, said
    assert TOKEN not in said
