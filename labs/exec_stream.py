"""Reading an exec's multiplexed output from the Docker API, capped."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from typing import Any

STDERR = 2  # the stream byte of an exec frame that carries standard error
KILL_WAIT_S = 3.0  # how long a capped exec's process id is waited for


def exec_frames(api: Any, exec_id: str) -> Iterator[tuple[int, bytes]]:
    """Start an exec and yield its (stream, bytes) frames until it ends.

    docker-py's ``exec_start`` reads the raw socket under the HTTP response, so whatever the
    response's buffer had already taken past the headers (up to 8 KiB of the command's first
    output, when it comes fast) is lost; this reads through that buffer instead.
    """
    response = api._post_json(
        api._url("/exec/{0}/start", exec_id),
        headers={"Connection": "Upgrade", "Upgrade": "tcp"},
        data={"Tty": False, "Detach": False},
        stream=True,
    )
    try:
        api._raise_for_status(response)
        reader = response.raw._fp.fp
        api._disable_socket_timeout(reader.raw)
        while len(header := reader.read(8)) == 8:
            size = int.from_bytes(header[4:8], "big")
            payload = reader.read(size)
            yield header[0], payload
            if len(payload) < size:
                return
    finally:
        response.close()


def read_capped(api: Any, exec_id: str, max_output: int) -> tuple[bytes, bytes, bool]:
    out, err = bytearray(), bytearray()
    truncated = False
    for stream, data in exec_frames(api, exec_id):
        if truncated:
            continue
        if stream == STDERR:
            err += data
        else:
            out += data
        if len(out) + len(err) > max_output:
            truncated = True
            _kill(api, exec_id)
    return bytes(out[:max_output]), bytes(err[: max(0, max_output - len(out))]), truncated


def _kill(api: Any, exec_id: str) -> None:
    """Kill a running exec with all it started. `timeout` leads its own process group; the
    engine may report the exec's process id only a moment after its first output."""
    deadline = time.monotonic() + KILL_WAIT_S
    while True:
        state = api.exec_inspect(exec_id)
        if state.get("Pid"):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(state["Pid"], signal.SIGKILL)
            return
        if not state.get("Running", True) or time.monotonic() > deadline:
            return
        time.sleep(0.05)
