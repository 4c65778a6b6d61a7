"""An assessment's progress as the green agent streams it: episodes under way and done, and the
time since it began, sent as a status update whenever nothing else was sent for `HEARTBEAT_S`.

A client reading the stream with an HTTP client's default read timeout (a few seconds) so never
waits in silence while episodes run, however long one takes.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio

T = TypeVar("T")

HEARTBEAT_S = 2.0


class Progress:
    """Counts an assessment's episodes as they start and end, and when anything was last sent."""

    def __init__(self, total: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.total = total
        self.clock = clock
        self.began = clock()
        self.last_sent = self.began
        self.started = 0
        self.done = 0

    def episode_started(self) -> None:
        self.started += 1

    def episode_done(self) -> None:
        self.done += 1

    def sent(self) -> None:
        """Something reached the client now."""
        self.last_sent = self.clock()

    @property
    def running(self) -> int:
        return self.started - self.done

    @property
    def elapsed_s(self) -> float:
        return self.clock() - self.began

    def line(self) -> str:
        minutes, seconds = divmod(int(self.elapsed_s), 60)
        return (
            f"{self.running} episode{'s' if self.running != 1 else ''} running, "
            f"{self.done}/{self.total} done, {minutes}m{seconds:02d}s elapsed"
        )

    def metadata(self) -> dict[str, Any]:
        return {
            "progress": {
                "running": self.running,
                "done": self.done,
                "total": self.total,
                "elapsed_s": round(self.elapsed_s, 1),
            }
        }


async def heartbeat(
    progress: Progress,
    beat: Callable[[], Awaitable[None]],
    every_s: float = HEARTBEAT_S,
    sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
) -> None:
    """Call ``beat`` whenever ``every_s`` passed since ``progress`` last sent anything; runs
    until cancelled. ``sleep`` waits in the time of ``progress``'s clock (a test that steps
    that clock passes a sleep it wakes itself)."""
    while True:
        quiet = progress.clock() - progress.last_sent
        if quiet >= every_s:
            await beat()
            progress.sent()
            quiet = 0.0
        await sleep(every_s - quiet)


async def beating(
    progress: Progress,
    beat: Callable[[], Awaitable[None]],
    work: Awaitable[T],
    every_s: float = HEARTBEAT_S,
) -> T:
    """``work``'s result, with the `heartbeat` going while it runs; its error is raised as
    itself, not as a group of one."""
    done: list[T] = []
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(heartbeat, progress, beat, every_s)
            done.append(await work)
            group.cancel_scope.cancel()
    except BaseExceptionGroup as failed:
        if len(failed.exceptions) == 1:
            raise failed.exceptions[0] from None
        raise
    return done[0]
