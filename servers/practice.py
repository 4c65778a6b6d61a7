"""A practice session: one scenario at a time on a fresh lab, graded on request.

What a session returns names the scenario only as the user chose it: the family, the level and
the seed they gave (none for a random instance, which `reset` replays).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any, Literal

import anyio
from pydantic import BaseModel, Field, create_model

from netdojo.errors import NetdojoError
from netdojo.judges.episode import Episode, new_episode_id, open_episode
from netdojo.reports.records import Grade
from netdojo.scenarios import registry
from netdojo.scenarios.generate import check_choice, generate
from netdojo.scenarios.model import Kind
from netdojo.tools.spec import ToolArguments
from netdojo.tools.topology import TopologyView, topology_view

Progress = Callable[[float, str], Awaitable[None]]
PROGRESS_EVERY_S = 5.0


class NoArguments(ToolArguments):
    pass  # a practice tool that takes no arguments (a docstring would reach its schema)


class StartArguments(ToolArguments):
    family: Annotated[str, Field(description="a family from list_families")]
    level: Annotated[int, Field(ge=1, le=3, description="difficulty and size, 1-3")] = 1
    seed: Annotated[int | None, Field(ge=0, description="omit for a random instance")] = None


def start_arguments(families: Sequence[str]) -> type[StartArguments]:
    """`StartArguments` whose ``family`` is one of these (an enum in its schema)."""
    named: Any = Literal[tuple(families)]  # type: ignore[valid-type]
    family: Any = Annotated[named, Field(description="a family from list_families")]
    model: type[StartArguments] = create_model(
        "StartArguments", __base__=StartArguments, family=(family, ...)
    )
    return model


class FamilyInfo(BaseModel):
    name: str
    kind: Kind
    summary: str
    levels: list[int]


class Families(BaseModel):
    families: list[FamilyInfo] = Field(description="every family, in the catalogue's order")


class BriefView(BaseModel):
    family: str
    level: int
    seed: int | None = Field(description="the seed given; none for a random instance")
    kind: Kind
    brief: str
    constraints: list[str]


class Started(BriefView):
    topology: TopologyView
    ready_s: float = Field(description="seconds to deploy the lab and bring it to its start state")


class EndResult(BaseModel):
    ended: str | None = Field(description="the family of the scenario whose lab was torn down")
    tool_calls: int = 0


class PracticeSession:
    """Holds at most one running episode; starting another tears the previous one down."""

    def __init__(self) -> None:
        self.episode: Episode | None = None
        self.seed_given = False
        self._lock = anyio.Lock()
        self.last_call = time.monotonic()

    def touch(self) -> None:
        """Note a client call (an HTTP client leaves no other sign of being there)."""
        self.last_call = time.monotonic()

    async def end_when_idle(self, idle_s: float, check_every_s: float = 10.0) -> None:
        """Run forever, ending the running scenario once no call has come for ``idle_s``."""
        while True:
            await anyio.sleep(min(check_every_s, idle_s))
            if self.episode is not None and time.monotonic() - self.last_call >= idle_s:
                await self.end()

    def families(self) -> Families:
        return Families(
            families=[
                FamilyInfo(name=f.name, kind=f.kind, summary=f.summary, levels=list(f.levels))
                for f in registry.families().values()
            ]
        )

    def _running(self) -> Episode:
        if self.episode is None:
            raise NetdojoError("no scenario is running; call start_scenario first")
        return self.episode

    async def start(self, family: str, level: int, seed: int | None, progress: Progress) -> Started:
        self.touch()
        given = seed is not None
        seed = secrets.randbelow(2**31) if seed is None else seed
        check_choice(family, level, seed)
        return await self._open(family, level, seed, given, progress)

    async def reset(self, progress: Progress) -> Started:
        self.touch()
        s = self._running().scenario
        return await self._open(s.family, s.level, s.seed, self.seed_given, progress)

    async def _open(
        self, family: str, level: int, seed: int, given: bool, progress: Progress
    ) -> Started:
        async with self._lock:
            await self._close()
            opened = open_episode(generate(family, level, seed), new_episode_id())
            self.episode = await _with_progress(opened, progress)
            self.seed_given = given
            return self._started(self.episode)

    async def brief(self) -> BriefView:
        self.touch()
        return _brief(self._running(), self.seed_given)

    async def grade(self) -> Grade:
        self.touch()
        return await self._running().grade()

    async def end(self) -> EndResult:
        self.touch()
        async with self._lock:
            episode = self.episode
            await self._close()
        if episode is None:
            return EndResult(ended=None)
        return EndResult(ended=episode.scenario.family, tool_calls=len(episode.trajectory.steps))

    async def close(self, detach: bool = False) -> None:
        """Tear down whatever runs (the client went away or the server stops)."""
        with anyio.CancelScope(shield=True):
            await self._close(detach)

    async def _close(self, detach: bool = False) -> None:
        episode, self.episode = self.episode, None
        if episode is not None:
            await episode.close(detach)

    def _started(self, episode: Episode) -> Started:
        return Started(
            **_brief(episode, self.seed_given).model_dump(),
            topology=topology_view(episode.scenario.public),
            ready_s=episode.ready_s,
        )


def _brief(episode: Episode, seed_given: bool) -> BriefView:
    """The brief with the scenario named as the user chose it, never by its id."""
    s = episode.scenario
    return BriefView(
        family=s.family,
        level=s.level,
        seed=s.seed if seed_given else None,
        kind=s.kind,
        brief=s.public.brief,
        constraints=s.public.constraints,
    )


async def _with_progress(work: Awaitable[Episode], progress: Progress) -> Episode:
    """Await ``work``, reporting elapsed time every few seconds so clients do not give up."""
    started = time.monotonic()
    result: list[Episode] = []

    async def run(scope: anyio.CancelScope) -> None:
        result.append(await work)
        scope.cancel()

    async with anyio.create_task_group() as group:
        group.start_soon(run, group.cancel_scope)
        while True:
            await progress(time.monotonic() - started, "deploying and staging the lab")
            await anyio.sleep(PROGRESS_EVERY_S)
    return result[0]
