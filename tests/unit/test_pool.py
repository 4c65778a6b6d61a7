"""The warm pool before any lab: it fills in the background up to its bound, hands a warm
episode out without opening anything on the way, opens cold what is not warm, keeps a failed
open for the next take and tries again, never hands an episode out twice, and tears down
everything it holds when it closes."""

from __future__ import annotations

import anyio
import gymnasium
import pytest

from netdojo.judges.environment import NetworkEnvironment
from netdojo.judges.episode import Episode, ResetFailed
from netdojo.judges.pool import EpisodePool, PoolNotRunning
from netdojo.scenarios.model import Scenario, ToolCall
from netdojo.scenarios.registry import ScenarioError
from netdojo.servers.gym_env import ENV_ID, NetworkEnv
from netdojo.tools.lab_tools import ToolLimits

from .fake_episodes import AbsentLab, Openings

pytestmark = pytest.mark.anyio
FAMILY, LEVEL = "static-routing", 1
LOTS_MIB = 1 << 20


class Gated(Openings):
    """Openings that wait for ``gate`` once it is closed; ``asked`` counts every call."""

    def __init__(self, failing: int = 0) -> None:
        super().__init__(failing=failing)
        self.asked: list[Scenario] = []
        self.gate: anyio.Event | None = None

    async def __call__(self, scenario: Scenario, episode_id: str, limits: ToolLimits) -> Episode:
        self.asked.append(scenario)
        if self.gate is not None:
            await self.gate.wait()
        return await super().__call__(scenario, episode_id, limits)


class BrokenLab(AbsentLab):
    async def health(self) -> list[str]:
        return ["device r1 is exited"]


def _pool(openings: Openings, size: int = 2, available_mib: int = LOTS_MIB) -> EpisodePool:
    return EpisodePool(openings, size=size, seed=1, available_mib=available_mib)


async def test_it_fills_in_the_background_up_to_its_size() -> None:
    openings = Gated()
    async with _pool(openings, size=2) as pool:
        pool.expect(FAMILY, LEVEL)
        await anyio.wait_all_tasks_blocked()
        assert len(openings.asked) == 2 and pool.warm(FAMILY, LEVEL) == 2
        await anyio.sleep(0.05)
        assert len(openings.asked) == 2, "no more than its size"


async def test_memory_bounds_it_below_its_size() -> None:
    openings = Gated()
    async with _pool(openings, size=3, available_mib=1) as pool:
        pool.expect(FAMILY, LEVEL)
        await anyio.wait_all_tasks_blocked()
        assert len(openings.asked) == 1


async def test_a_warm_take_opens_nothing_on_the_way() -> None:
    openings = Gated()
    async with _pool(openings) as pool:
        pool.expect(FAMILY, LEVEL)
        await anyio.wait_all_tasks_blocked()
        openings.gate = anyio.Event()  # every open from here on waits forever
        with anyio.fail_after(1):
            taken = await pool.take(FAMILY, LEVEL)
        assert taken.warm and taken.episode is openings.opened[0]
        await anyio.wait_all_tasks_blocked()
        assert len(openings.asked) == 3, "the pool refills in the background"


async def test_a_seed_that_is_not_warm_is_opened_cold() -> None:
    openings = Gated()
    async with _pool(openings) as pool:
        pool.expect(FAMILY, LEVEL)
        await anyio.wait_all_tasks_blocked()
        taken = await pool.take(FAMILY, LEVEL, seed=5)
        assert not taken.warm and taken.episode.scenario.seed == 5
        assert pool.warm(FAMILY, LEVEL) == 2, "the warm ones are for any seed"


async def test_a_given_seed_can_be_warmed() -> None:
    openings = Gated()
    async with _pool(openings) as pool:
        pool.expect(FAMILY, LEVEL, seed=5)
        await anyio.wait_all_tasks_blocked()
        assert [s.seed for s in openings.asked] == [5], "a given seed is opened once"
        taken = await pool.take(FAMILY, LEVEL, seed=5)
        assert taken.warm and taken.episode.scenario.seed == 5


async def test_a_take_waits_for_an_open_under_way_rather_than_open_another() -> None:
    openings = Gated()
    openings.gate = anyio.Event()
    async with _pool(openings, size=1) as pool:
        pool.expect(FAMILY, LEVEL)
        await anyio.wait_all_tasks_blocked()
        taken = []

        async def take() -> None:
            taken.append(await pool.take(FAMILY, LEVEL))

        async with anyio.create_task_group() as group:
            group.start_soon(take)
            await anyio.wait_all_tasks_blocked()
            assert len(openings.asked) == 1
            openings.gate.set()
        assert taken[0].episode is openings.opened[0] and not taken[0].warm
        await anyio.wait_all_tasks_blocked()
        assert len(openings.opened) == 2, "then it refilled"


async def test_a_failed_background_open_is_raised_by_the_next_take_then_tried_again() -> None:
    openings = Gated(failing=1)
    async with _pool(openings, size=1) as pool:
        pool.expect(FAMILY, LEVEL)
        await anyio.wait_all_tasks_blocked()
        assert len(openings.asked) == 1, "no retry before the failure is taken"
        with pytest.raises(ResetFailed, match="did not come up: RuntimeError: the engine"):
            await pool.take(FAMILY, LEVEL)
        await anyio.wait_all_tasks_blocked()
        assert len(openings.asked) == 2 and pool.warm(FAMILY, LEVEL) == 1
        assert (await pool.take(FAMILY, LEVEL)).warm


async def test_a_warm_lab_that_broke_while_it_waited_is_torn_down_and_raised() -> None:
    openings = Gated()
    async with _pool(openings, size=1) as pool:
        pool.expect(FAMILY, LEVEL)
        await anyio.wait_all_tasks_blocked()
        first = openings.opened[0]
        first.lab = BrokenLab()  # type: ignore[assignment]
        with pytest.raises(ResetFailed, match=r"its warm lab broke \(device r1 is exited\)"):
            await pool.take(FAMILY, LEVEL)
        assert first.closed == 1


async def test_no_episode_is_handed_out_twice() -> None:
    openings = Gated()
    async with _pool(openings) as pool:
        taken = []
        for _ in range(6):
            taken.append((await pool.take(FAMILY, LEVEL)).episode)
            await anyio.wait_all_tasks_blocked()
    assert len({id(episode) for episode in taken}) == 6
    assert len({e.trajectory.episode for e in taken}) == 6
    assert not any(e.closed for e in taken), "a handed-out episode is its taker's to close"


async def test_close_tears_down_every_warm_episode_once() -> None:
    openings = Gated()
    pool = _pool(openings)
    async with pool:
        handed = (await pool.take(FAMILY, LEVEL)).episode
        await anyio.wait_all_tasks_blocked()
        await pool.give_back(handed)
        await anyio.wait_all_tasks_blocked()
        assert handed.closed == 1
        openings.gate = anyio.Event()
        await pool.close()
        await pool.close()
    warm = [e for e in openings.opened if e is not handed]
    assert len(warm) == 2 and [e.closed for e in warm] == [1, 1]
    assert handed.closed == 1
    with pytest.raises(PoolNotRunning):
        await pool.take(FAMILY, LEVEL)


async def test_a_warm_pool_outside_async_with_refuses_and_a_bad_instance_raises() -> None:
    with pytest.raises(PoolNotRunning):
        await _pool(Gated()).take(FAMILY, LEVEL)
    async with _pool(Gated()) as pool:
        with pytest.raises(ScenarioError):
            await pool.take("no-such-family", LEVEL)
        with pytest.raises(ScenarioError):
            pool.expect(FAMILY, 99)


async def test_a_warm_environment_says_which_resets_were_warm() -> None:
    openings = Gated()
    async with NetworkEnvironment(warm=1, opener=openings) as env:
        await env.reset(FAMILY, LEVEL)
        assert not env.state().warm
        await anyio.wait_all_tasks_blocked()
        await env.reset(FAMILY, LEVEL)
        state = env.state()
        assert state.warm and state.reset_s < 1
        await anyio.wait_all_tasks_blocked()
        assert openings.opened[0].closed == 1, "the last episode is torn down in the background"
        step = await env.step(ToolCall(tool="topology", arguments={}))
        assert not step.is_error
    assert [e.closed for e in openings.opened] == [1, 1, 1]
    with pytest.raises(PoolNotRunning):
        await env.reset(FAMILY, LEVEL)


def test_the_gymnasium_environment_takes_warm() -> None:
    env = gymnasium.make(ENV_ID, warm=2)
    assert env.unwrapped.environment.warm == 2  # type: ignore[attr-defined]
    env.close()


def _warm_gym_seeds() -> tuple[list[bool], list[int]]:
    env = NetworkEnv()
    openings = Openings()
    env.environment = NetworkEnvironment(env.environment.budgets, warm=1, opener=openings)
    warm = [env.reset(seed=3)[1]["warm"]]
    for _ in range(3):
        env._blocking.run(anyio.wait_all_tasks_blocked)  # the pool opened what it will
        warm.append(env.reset()[1]["warm"])
    env.close()
    assert all(e.closed == 1 for e in openings.opened)
    return warm, [e.scenario.seed for e in openings.opened]


def test_a_warm_gymnasium_environment_draws_the_same_instances_from_the_same_first_seed() -> None:
    warm, seeds = _warm_gym_seeds()
    assert warm == [False, False, True, True]
    assert seeds[0] == 3 and (warm, seeds) == _warm_gym_seeds()
