"""The 0.3 scripts as the tests run them: the client for one call, the agent for a block."""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx

from netdojo.servers.serving import free_port
from tests.a2a_v0_3.env import clean_env, python

HERE = Path(__file__).parent
START_S = 30.0


async def client(*args: str, timeout_s: float = 120.0) -> tuple[int, list[dict[str, Any]]]:
    """Run ``client.py`` with ``args``: its exit code and the JSON lines it printed."""
    with anyio.fail_after(timeout_s):
        done = await anyio.run_process(
            [str(python()), str(HERE / "client.py"), *args], check=False, env=clean_env()
        )
    lines = done.stdout.decode().splitlines()
    assert done.returncode in (0, 1), done.stderr.decode()[-2000:]
    return done.returncode, [json.loads(line) for line in lines if line.strip()]


@asynccontextmanager
async def agent(*args: str) -> AsyncIterator[str]:
    """Run ``agent.py`` with ``args`` on a free loopback port until the block ends; yields its
    base URL once its card answers."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    argv = [str(python()), str(HERE / "agent.py"), "--port", str(port), *args]
    quiet = subprocess.DEVNULL
    process = await anyio.open_process(
        argv, env=clean_env(), stdin=quiet, stdout=quiet, stderr=None
    )
    try:
        async with httpx.AsyncClient(timeout=2.0) as http:
            with anyio.fail_after(START_S):
                while True:
                    try:
                        if (await http.get(f"{url}/.well-known/agent-card.json")).is_success:
                            break
                    except httpx.TransportError:
                        pass
                    assert process.returncode is None, "the 0.3 agent exited at start"
                    await anyio.sleep(0.1)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
        with anyio.move_on_after(10):
            await process.wait()
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
        await process.aclose()
