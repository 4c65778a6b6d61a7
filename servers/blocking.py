"""A `NetworkEnvironment` driven from synchronous code, as the Gymnasium and OpenEnv adapters
are: the environment lives on an event loop of its own, in a thread started at first use."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import ExitStack
from typing import Any, TypeVar

from anyio.from_thread import BlockingPortal, start_blocking_portal

from netdojo.judges.environment import NetworkEnvironment

Result = TypeVar("Result")


class BlockingEnvironment:
    """Runs the coroutines of the environment ``current`` gives from synchronous callers. The
    environment is entered (so a warm pool starts) on the first call, after ``on_start``;
    `close` tears it down. ``current`` is asked at first use, so an adapter may swap its
    environment until then."""

    def __init__(
        self,
        current: Callable[[], NetworkEnvironment],
        on_start: Callable[[], None] | None = None,
    ) -> None:
        self._current = current
        self._entered: NetworkEnvironment | None = None
        self._on_start = on_start
        self._threads = ExitStack()
        self._portal: BlockingPortal | None = None

    def run(self, work: Callable[..., Awaitable[Result]], *args: Any) -> Result:
        if self._portal is None:
            portal = self._threads.enter_context(start_blocking_portal())
            if self._on_start is not None:
                self._on_start()
            self._entered = self._current()
            self._threads.enter_context(portal.wrap_async_context_manager(self._entered))
            self._portal = portal
        return self._portal.call(work, *args)

    def close(self) -> None:
        """Tear the lab down and stop the event loop; closing again does nothing."""
        if self._portal is not None and self._entered is not None:
            try:
                self._portal.call(self._entered.close)
            finally:
                self._portal = None
                self._threads.close()
