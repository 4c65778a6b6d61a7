"""Running the front ends as servers: uvicorn under the caller's cancel scope, free loopback
ports, and waiting for a stop signal."""

from __future__ import annotations

import contextlib
import signal
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import uvicorn
from starlette.types import ASGIApp

GRACEFUL_S = 3  # requests still running at shutdown (a hung agent) are cut after this
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


async def until_signal() -> None:
    """Return at the first SIGTERM, SIGINT or SIGHUP."""
    with anyio.open_signal_receiver(*STOP_SIGNALS) as signals:
        async for _ in signals:
            return


class _QuietServer(uvicorn.Server):
    """uvicorn without signal handlers of its own: the caller's cancel scope stops it."""

    def capture_signals(self) -> contextlib.AbstractContextManager[None]:  # type: ignore[override]
        return contextlib.nullcontext()


@asynccontextmanager
async def serve_uvicorn(app: ASGIApp, host: str, port: int) -> AsyncIterator[None]:
    """Run ``app`` on ``host:port`` for the duration of the block (started when entered).

    Leaving the block, also by cancellation (a stop signal), shuts the server down the way
    uvicorn does on its own: requests still open get `GRACEFUL_S`, then the app's lifespan
    ends. Cancelling the server outright would leave its lifespan task to be killed when the
    event loop closes, which uvicorn reports with a traceback.
    """
    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=GRACEFUL_S
    )
    web = _QuietServer(config)

    async def serve() -> None:
        with anyio.CancelScope(shield=True):
            await web.serve()

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(serve)
            try:
                while not web.started:
                    if web.should_exit:
                        raise OSError(f"cannot listen on {host}:{port}")
                    await anyio.sleep(0.02)
                yield
            finally:
                web.should_exit = True
    except BaseExceptionGroup as failed:  # the caller's own error, not a group of one
        if len(failed.exceptions) == 1:
            raise failed.exceptions[0] from None
        raise
