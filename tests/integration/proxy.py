"""A stream proxy for staging outages: it forwards connections to a target, and on demand cuts
the open ones and refuses new ones (`down`) until `up`.

On a Unix socket in front of ``/var/run/docker.sock`` it stands in for a Docker engine that
stops for a while, seen by one process only; on TCP in front of an agent, for a network that
drops.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import anyio
from anyio.abc import ByteStream, Listener, TaskGroup

Opener = Callable[[], Awaitable[ByteStream]]
DOCKER_SOCKET = "/var/run/docker.sock"
GONE = (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError)


class Proxy:
    def __init__(self, listen: Callable[[], Awaitable[Listener[ByteStream]]], target: Opener):
        self._listen = listen
        self._target = target
        self._group: TaskGroup | None = None
        self._serving: anyio.CancelScope | None = None
        self._connections: set[anyio.CancelScope] = set()
        self.accepted = 0

    async def _pump(self, source: ByteStream, sink: ByteStream) -> None:
        with contextlib.suppress(*GONE):
            async for chunk in source:
                await sink.send(chunk)
        with contextlib.suppress(*GONE):
            await sink.aclose()

    async def _handle(self, client: ByteStream) -> None:
        self.accepted += 1
        with anyio.CancelScope() as scope:
            self._connections.add(scope)
            try:
                async with (
                    client,
                    await self._target() as upstream,
                    anyio.create_task_group() as tg,
                ):
                    tg.start_soon(self._pump, client, upstream)
                    tg.start_soon(self._pump, upstream, client)
            except OSError:
                pass
            finally:
                self._connections.discard(scope)

    async def _serve(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        listener = await self._listen()
        with anyio.CancelScope() as scope:
            self._serving = scope
            task_status.started()
            async with listener:
                await listener.serve(self._handle)

    def cut(self) -> None:
        """Close every open connection, as a broken network would."""
        for scope in list(self._connections):
            scope.cancel()

    async def up(self) -> None:
        assert self._group is not None
        await self._group.start(self._serve)

    def down(self) -> None:
        """Stop listening (new connections are refused) and cut the open ones."""
        if self._serving is not None:
            self._serving.cancel()
            self._serving = None
        self.cut()


@asynccontextmanager
async def running(proxy: Proxy) -> AsyncIterator[Proxy]:
    async with anyio.create_task_group() as group:
        proxy._group = group
        await proxy.up()
        try:
            yield proxy
        finally:
            proxy.down()
            group.cancel_scope.cancel()


def tcp_proxy(port: int, target_port: int) -> Proxy:
    return Proxy(
        lambda: anyio.create_tcp_listener(local_host="127.0.0.1", local_port=port),
        lambda: anyio.connect_tcp("127.0.0.1", target_port),
    )


def docker_proxy(path: str) -> Proxy:
    """A stand-in for the Docker engine's socket at ``path`` (use ``DOCKER_HOST=unix://path``)."""

    async def listen() -> Listener[ByteStream]:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        return await anyio.create_unix_listener(path)

    return Proxy(listen, lambda: anyio.connect_unix(DOCKER_SOCKET))
