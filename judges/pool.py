"""A warm pool of episodes: the next labs deploy and stage in the background while agents work.

Opening an episode (deploy, stage) takes seconds, and a training loop resets often. An
`EpisodePool` keeps up to ``size`` episodes open ahead, fewer when memory is short (bounded by
`memory_bound` for the largest lab, as an assessment bounds its episodes), for the instances
it is asked for: a family and level with any seed (drawn from the pool's own generator, one
per family and level) or with a given seed. `take` hands out a warm episode when one is
ready, waits for one that is opening, and otherwise opens one cold. An episode is handed out
once and is then the taker's; `give_back` tears it down in the background. Nothing is reused.
A background open that fails is kept and raised (`ResetFailed`) by the next `take` of its
instance, and the pool then tries again.

Warm labs are started as any lab is: owned by this process, so the reaper removes them if it
dies without closing the pool. `close` (or leaving ``async with``) stops the opens under way,
waits for the teardowns given back and tears every warm lab down.
"""

from __future__ import annotations

import logging
import random
import time
from collections import deque
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any, Literal, Self

import anyio
from anyio.abc import TaskGroup, TaskStatus

from netdojo.errors import NetdojoError, describe
from netdojo.judges.assessment import available_memory_mib, memory_bound
from netdojo.judges.episode import (
    Episode,
    Opener,
    ResetFailed,
    Taken,
    instance_name,
    open_cold,
    open_episode,
)
from netdojo.reports.records import SEED_BOUND, Timings, drawn_seed
from netdojo.scenarios.generate import generate
from netdojo.scenarios.model import Scenario
from netdojo.tools.lab_tools import ToolLimits

logger = logging.getLogger(__name__)

Key = tuple[str, int, int | None]
"""What is asked for: family, level and seed (None: any seed)."""


class PoolNotRunning(NetdojoError):
    """A warm pool asked for an episode outside ``async with``."""


@dataclass
class _Warm:
    """What the pool holds and owes for one key."""

    rng: random.Random | None
    keep: bool = False
    """Any seed: kept warm once asked for."""
    queued: int = 0
    """A given seed: warm opens still to start."""
    drawn: Scenario | None = None
    """The instance to open next, drawn already."""
    opening: list[Scenario] = field(default_factory=list)
    done: deque[Taken | ResetFailed] = field(default_factory=deque)

    def next_scenario(self, key: Key) -> Scenario:
        if self.drawn is None:
            family, level, seed = key
            if seed is None:
                assert self.rng is not None
                seed = self.rng.randrange(SEED_BOUND)
            self.drawn = generate(family, level, seed)
        return self.drawn

    def wants_more(self) -> bool:
        failed = any(isinstance(item, ResetFailed) for item in self.done)
        return (self.keep or self.queued > 0) and not failed

    def ready(self) -> list[Taken]:
        return [item for item in self.done if isinstance(item, Taken)]

    def held(self) -> list[Scenario]:
        return [*self.opening, *(taken.episode.scenario for taken in self.ready())]


class EpisodePool:
    """Episodes opened ahead, at most ``size`` at once (0: every take opens cold); it warms
    only inside ``async with``. ``seed`` seeds the draws of any-seed instances; it may be set
    until the first `take` or `expect`."""

    def __init__(
        self,
        opener: Opener = open_episode,
        limits: ToolLimits | None = None,
        *,
        size: int = 2,
        seed: int | None = None,
        available_mib: int | None = None,
    ) -> None:
        if size < 0:
            raise ValueError(f"a pool's size is at least 0, not {size}")
        self.opener = opener
        self.limits = limits or ToolLimits()
        self.size = size
        self.seed = drawn_seed() if seed is None else seed
        self._available_mib = available_mib
        self._keys: dict[Key, _Warm] = {}
        self._changed = anyio.Event()
        self._stack: AsyncExitStack | None = None
        self._scope: anyio.CancelScope | None = None
        self._stopped = anyio.Event()
        self._opens: TaskGroup | None = None
        self._state: Literal["new", "running", "closed"] = "new"

    async def __aenter__(self) -> Self:
        if self._state != "new":
            raise PoolNotRunning("a pool runs once; make another")
        if self._available_mib is None:
            self._available_mib = available_memory_mib()
        self._stack = AsyncExitStack()
        group = await self._stack.enter_async_context(anyio.create_task_group())
        await group.start(self._fill)
        self._state = "running"
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.close()
        if self._stack is not None:
            stack, self._stack = self._stack, None
            await stack.__aexit__(*exc_info)

    def warm(self, family: str, level: int = 1, seed: int | None = None) -> int:
        """How many episodes of this instance are ready now."""
        warm = self._keys.get((family, level, seed))
        return len(warm.ready()) if warm else 0

    def expect(self, family: str, level: int = 1, seed: int | None = None) -> None:
        """Warm this instance before it is asked for: any seed is then kept warm; a given seed
        is opened once more."""
        key = (family, level, seed)
        warm = self._want(key)
        warm.keep = warm.keep or seed is None
        warm.queued += seed is not None
        self._notify()

    async def take(self, family: str, level: int = 1, seed: int | None = None) -> Taken:
        """An opened episode of this instance: a warm one, one under way, or one opened cold.
        `ResetFailed` for a failed open (kept from the background or met here), or for a warm
        lab that broke while it waited; `ScenarioError` for an instance that does not exist."""
        if self._state == "closed" or (self.size and self._state == "new"):
            raise PoolNotRunning("a warm pool hands out episodes only inside `async with`")
        key = (family, level, seed)
        warm = self._want(key)
        if seed is None and not warm.keep:
            warm.keep = True
            self._notify()
        ready = bool(warm.done)
        while not warm.done and warm.opening:
            changed = self._changed
            await changed.wait()
            if self._state == "closed":
                raise PoolNotRunning("the pool was closed")
        if warm.done:
            item = warm.done.popleft()
            self._notify()
            return await _handed(item, ready)
        scenario = warm.next_scenario(key)
        warm.drawn = None
        return await open_cold(self.opener, scenario, self.limits)

    async def give_back(self, episode: Episode, timings: Timings | None = None) -> None:
        """Tear ``episode`` down: in the background while the pool runs, else here; its
        teardown time goes to ``timings``."""
        if self._opens is not None and self._state == "running":
            self._opens.start_soon(_teardown, episode, timings)
        else:
            await _teardown(episode, timings)

    async def close(self) -> None:
        """Stop the opens under way and tear down every episode the pool holds; closing again
        does nothing."""
        if self._state == "closed":
            return
        running, self._state = self._state == "running", "closed"
        with anyio.CancelScope(shield=True):
            if running and self._scope is not None:
                self._scope.cancel()
                await self._stopped.wait()
            held = [taken.episode for warm in self._keys.values() for taken in warm.ready()]
            for warm in self._keys.values():
                warm.done.clear()
            self._notify()
            async with anyio.create_task_group() as group:
                for episode in held:
                    group.start_soon(_teardown, episode, None)

    def _want(self, key: Key) -> _Warm:
        """The pool's record of ``key``, made (and its first instance drawn, which checks the
        family, level and seed) the first time."""
        warm = self._keys.get(key)
        if warm is None:
            family, level, seed = key
            rng = random.Random(f"pool/{self.seed}/{family}/{level}") if seed is None else None
            warm = _Warm(rng)
            warm.next_scenario(key)
            self._keys[key] = warm
        return warm

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def _fill(self, *, task_status: TaskStatus[None]) -> None:
        """Start opens whenever there is room, until `close` cancels them."""
        try:
            with anyio.CancelScope() as self._scope:
                async with anyio.create_task_group() as opens:
                    self._opens = opens
                    task_status.started()
                    while True:
                        changed = self._changed
                        for key, scenario in self._room():
                            opens.start_soon(self._open_warm, key, scenario)
                        await changed.wait()
        finally:
            self._opens = None
            self._stopped.set()

    def _room(self) -> list[tuple[Key, Scenario]]:
        """The opens to start now, within the size and the memory bound; each is counted as
        opening from here on."""
        started: list[tuple[Key, Scenario]] = []
        while True:
            held = [s for warm in self._keys.values() for s in warm.held()]
            key = self._next_key()
            if key is None or len(held) >= self.size:
                return started
            warm = self._keys[key]
            try:
                scenario = warm.next_scenario(key)
            except Exception as exc:  # kept for the next take, never the caller's task
                warm.done.append(ResetFailed(f"{key} could not be generated: {describe(exc)}"))
                continue
            assert self._available_mib is not None
            if len(held) >= memory_bound(self.size, [*held, scenario], self._available_mib):
                return started
            warm.drawn = None
            warm.opening.append(scenario)
            if key[2] is not None:
                warm.queued -= 1
            started.append((key, scenario))

    def _next_key(self) -> Key | None:
        """Given seeds first, in the order asked; then the any-seed key that holds fewest."""
        wanting = [(key, warm) for key, warm in self._keys.items() if warm.wants_more()]
        given = [key for key, warm in wanting if key[2] is not None]
        if given:
            return given[0]
        fewest = sorted(wanting, key=lambda pair: len(pair[1].held()))
        return fewest[0][0] if fewest else None

    async def _open_warm(self, key: Key, scenario: Scenario) -> None:
        warm = self._keys[key]
        try:
            warm.done.append(await open_cold(self.opener, scenario, self.limits))
        except ResetFailed as exc:
            logger.warning("a warm episode did not open: %s", exc)
            warm.done.append(exc)
        finally:
            warm.opening = [s for s in warm.opening if s is not scenario]
            self._notify()


async def _handed(item: Taken | ResetFailed, ready: bool) -> Taken:
    """``item`` handed out: raised when it failed, or when its lab broke while it waited."""
    if isinstance(item, ResetFailed):
        raise ResetFailed(str(item)) from item.__cause__
    episode = item.episode
    try:
        broken = await episode.lab.health()
    except Exception as exc:
        broken = [describe(exc)]
    except BaseException:
        await _teardown(episode, None)
        raise
    if broken:
        await _teardown(episode, None)
        why = "; ".join(broken)
        raise ResetFailed(f"{instance_name(episode.scenario)}: its warm lab broke ({why})")
    return Taken(episode, warm=ready, open_s=item.open_s)


async def _teardown(episode: Episode, timings: Timings | None) -> None:
    started = time.monotonic()
    with anyio.CancelScope(shield=True):
        try:
            await episode.close()
        except Exception as exc:
            logger.warning("a lab was not torn down: %s (netdojo reap removes it)", describe(exc))
    if timings is not None:
        timings.teardown_s = round(time.monotonic() - started, 2)
