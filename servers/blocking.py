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
    """Runs ``environment``'s coroutines from synchronous callers. The environment is entered
    (so a warm pool starts) on the first call, after ``on_start``; `close` tears it down."""

    def __init__(
        self, environment: NetworkEnvironment, on_start: Callable[[], None] | None = None
    ) -> None:
        self.environment = environment
        self._on_start = on_start
        self._threads = ExitStack()
        self._portal: BlockingPortal | None = None

    def run(self, work: Callable[..., Awaitable[Result]], *args: Any) -> Result:
        if self._portal is None:
            portal = self._threads.enter_context(start_blocking_portal())
            if self._on_start is not None:
                self._on_start()
            self._threads.enter_context(portal.wrap_async_context_manager(self.environment))
            self._portal = portal
        return self._portal.call(work, *args)

    def close(self) -> None:
        """Tear the lab down and stop the event loop; closing again does nothing."""
        if self._portal is not None:
            try:
                self._portal.call(self.environment.close)
            finally:
                self._portal = None
                self._threads.close()
