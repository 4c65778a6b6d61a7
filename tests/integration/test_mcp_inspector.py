"""The official MCP Inspector's CLI against `netdojo mcp --http` (practice mode) with a bearer
header: it lists the tools with no schema portability warning in strict mode, calls one, reads
netdojo's own refusals, and is told plainly when its token is missing or wrong.

The Inspector comes from npm: the setup installs the pinned version into a cache directory when
it is not there yet, and fails with the reason when it cannot (this test is never skipped).
Practice mode starts no lab until a scenario is started, and nothing here starts one.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any

import pytest

from netdojo.scenarios import registry
from netdojo.servers.mcp_server import practice_tool_names
from netdojo.servers.serving import free_port

INSPECTOR = "@modelcontextprotocol/inspector"
VERSION = "2.12.0"  # its CLI has --header, --format json, --strict and --stored-auth-only
NETDOJO = str(Path(sys.executable).parent / "netdojo")
TOKEN = "inspector-test-token-0123456789"
PRACTICE_TOOLS = ["list_families", "start_scenario", "brief", "reset", "grade", "end"]
AUTH_REQUIRED, TOOL_ERROR = 3, 5  # the Inspector CLI's exit codes
STARTUP_S = 300  # netdojo mcp checks the machine's provisioning before it serves


def _cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "netdojo" / f"inspector-{VERSION}"


@pytest.fixture(scope="module")
def inspector() -> Path:
    """The Inspector's command, installed from npm into the cache when absent."""
    prefix = _cache()
    command = prefix / "node_modules" / ".bin" / "mcp-inspector"
    installed = prefix / "node_modules" / INSPECTOR / "package.json"
    if command.exists() and json.loads(installed.read_text()).get("version") == VERSION:
        return command
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        pytest.fail(f"the MCP Inspector test needs node and npm on PATH (npm={npm}, node={node})")
    prefix.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(
            [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
             "--ignore-scripts", f"{INSPECTOR}@{VERSION}"],
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail(f"npm install {INSPECTOR}@{VERSION} took more than 10 minutes")
    if done.returncode != 0 or not command.exists():
        version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout
        pytest.fail(
            f"cannot install {INSPECTOR}@{VERSION} with npm (node {version.strip()}, exit "
            f"{done.returncode}):\n{done.stderr[-3000:]}"
        )
    return command


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of `netdojo mcp --http` in practice mode, its token read from a file."""
    token_file = tmp_path_factory.mktemp("token") / "token"
    token_file.write_text(f"{TOKEN}\n")
    server = subprocess.Popen(
        [NETDOJO, "mcp", "--http", "--port", str(free_port()), "--token-file", str(token_file)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    said: list[str] = []
    with ThreadPoolExecutor(1) as reader:
        started = reader.submit(_endpoint_of, server, said)
        try:
            url = started.result(timeout=STARTUP_S)
        except FutureTimeout:
            server.kill()
            pytest.fail(f"netdojo mcp did not serve within {STARTUP_S}s:\n{''.join(said)}")
    assert server.stderr is not None
    try:
        yield url
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(60)
    stopped = "".join(said) + server.stderr.read()
    assert server.returncode == 0, stopped
    assert TOKEN not in stopped and "Traceback" not in stopped, stopped
    assert f"bearer token: read from {token_file}" in " ".join(stopped.split())


def _endpoint_of(server: subprocess.Popen[str], said: list[str]) -> str:
    """The URL the server prints once it serves; what it said before goes into ``said``."""
    assert server.stderr is not None
    while not any(line.startswith("MCP endpoint: ") for line in said):
        line = server.stderr.readline()
        assert line, f"netdojo mcp exited before serving:\n{''.join(said)}"
        said.append(line)
    return said[-1].removeprefix("MCP endpoint: ").strip()


def _inspect(
    inspector: Path, served: str, home: Path, *arguments: str, token: str | None = TOKEN
) -> tuple[int, Any, str]:
    """Run the Inspector's CLI once; its exit code, its JSON answer (or None) and its stderr.

    ``--stored-auth-only`` keeps it from starting an interactive OAuth login; its own state
    goes to a home of its own, and secrets stay in memory.
    """
    header = ["--header", f"Authorization: Bearer {token}"] if token is not None else []
    env = {**os.environ, "HOME": str(home), "MCP_INSPECTOR_SECRET_STORE": "memory"}
    done = subprocess.run(
        [str(inspector), "--cli", served, *arguments, *header, "--format", "json",
         "--stored-auth-only"],
        capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    answer = json.loads(done.stdout) if done.stdout.strip() else None
    return done.returncode, answer, done.stderr


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "inspector-home"


def test_the_inspector_lists_every_tool_with_a_title_and_portable_schemas(
    inspector: Path, served: str, home: Path
) -> None:
    code, answer, stderr = _inspect(inspector, served, home, "--method", "tools/list", "--strict")
    assert code == 0, stderr
    tools = {tool["name"]: tool for tool in answer["result"]["tools"]}
    assert list(tools) == [*practice_tool_names(), *PRACTICE_TOOLS]
    assert all(tool.get("title") for tool in tools.values())
    assert "Warning: tool" not in stderr and "Issue:" not in stderr, stderr
    family = tools["start_scenario"]["inputSchema"]["properties"]["family"]
    assert family["enum"] == list(registry.families())


def test_the_inspector_calls_list_families_and_gets_one_structured_result(
    inspector: Path, served: str, home: Path
) -> None:
    code, answer, stderr = _inspect(
        inspector, served, home, "--method", "tools/call", "--tool-name", "list_families"
    )
    assert code == 0, stderr
    result = answer["result"]
    assert not result.get("isError") and len(result["content"]) == 1
    names = [family["name"] for family in result["structuredContent"]["families"]]
    assert names == list(registry.families())


def test_the_inspector_reads_netdojos_own_refusals(
    inspector: Path, served: str, home: Path
) -> None:
    code, answer, stderr = _inspect(
        inspector, served, home, "--method", "tools/call", "--tool-name", "start_scenario",
        "--tool-args-json", '{"family": "nope", "level": 9}',
    )  # fmt: skip
    assert code == TOOL_ERROR, stderr
    text = answer["result"]["content"][0]["text"]
    assert "family must be one of static-routing, " in text and "not 'nope'" in text
    assert "level must be from 1 to 3, not 9" in text and "pydantic" not in text
    code, answer, stderr = _inspect(
        inspector, served, home, "--method", "tools/call", "--tool-name", "topology"
    )
    assert code == TOOL_ERROR, stderr
    assert (
        "no scenario is running; call start_scenario first"
        in answer["result"]["content"][0]["text"]
    )


@pytest.mark.parametrize(
    ("token", "says"),
    [(None, "no bearer token"), ("not-the-token-0123456789", "wrong bearer token")],
)
def test_the_inspector_is_told_plainly_when_its_token_is_missing_or_wrong(
    inspector: Path, served: str, home: Path, token: str | None, says: str
) -> None:
    code, _, stderr = _inspect(inspector, served, home, "--method", "tools/list", token=token)
    assert code == AUTH_REQUIRED, stderr
    assert says in stderr and TOKEN not in stderr, stderr
