"""Rollout benchmark: what the warm pool saves a training loop on the step environment.

reset       from `reset` to the first observation, median over a few resets of static-routing
            level 1: cold (deploy and stage on the reset's path, the last lab torn down on it)
            and warm (`NetworkEnvironment(warm=...)`, each reset taken when a warm episode is
            ready); the ratio warm/cold
steps       steps per second of cheap read tools (`topology`, `show`) on a cold and a warm
            episode: a warm lab answers as fast as a fresh one (ratio warm/cold ≈ 1)
throughput  episodes per hour of a scripted policy (the reference solution through `step`,
            as the oracle applies it in calibration, then `submit`): the same episodes one by
            one on one cold environment, then on N environments at once, cold and warm

Results go to ``benchmarks/out/rollouts-<time>.json``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import anyio
from rich.console import Console

from _output import Column, rows_table, save
from netdojo.judges.environment import NetworkEnvironment
from netdojo.judges.pool import EpisodePool
from netdojo.judges.steps import Observation
from netdojo.scenarios.generate import generate
from netdojo.scenarios.model import ToolCall

FAMILY, LEVEL = "static-routing", 1
SUBMIT = ToolCall(tool="submit", arguments={"summary": "applied the fix"})
console = Console(width=120)


async def _warm_one(pool: EpisodePool, seed: int | None = None) -> None:
    while pool.warm(FAMILY, LEVEL, seed) < 1:
        await anyio.sleep(0.1)


async def resets(env: NetworkEnvironment, count: int) -> tuple[list[float], Observation]:
    """Seconds from `reset` to the observation, ``count`` times (warm ones taken when ready),
    and the last observation."""
    seconds = []
    pool = env.pool
    if pool is not None:
        pool.expect(FAMILY, LEVEL)
    for _ in range(count):
        if pool is not None:
            await _warm_one(pool)
        started = time.monotonic()
        observation = await env.reset(FAMILY, LEVEL)
        seconds.append(time.monotonic() - started)
    return seconds, observation


async def steps_per_second(
    env: NetworkEnvironment, observation: Observation, count: int
) -> dict[str, float]:
    """Steps per second of each cheap read tool on the open episode."""
    router = next(d.name for d in observation.topology.devices if d.role == "router")
    calls = {
        "topology": ToolCall(tool="topology", arguments={}),
        "show": ToolCall(tool="show", arguments={"device": router, "command": "show ip route"}),
    }
    rates = {}
    for name, call in calls.items():
        started = time.monotonic()
        for _ in range(count):
            step = await env.step(call)
            assert not step.is_error, step.error
        rates[name] = count / (time.monotonic() - started)
    return rates


async def reset_and_steps(warm: int, count: int, steps: int) -> dict[str, Any]:
    async with NetworkEnvironment(warm=warm) as env:
        seconds, observation = await resets(env, count)
        rates = await steps_per_second(env, observation, steps)
    return {"median_s": statistics.median(seconds), "resets_s": seconds, "steps_per_s": rates}


async def solve(env: NetworkEnvironment, seed: int) -> bool:
    """One episode of ``seed`` by its reference solution; whether it was solved."""
    await env.reset(FAMILY, LEVEL, seed)
    for call in generate(FAMILY, LEVEL, seed).hidden.solution:
        await env.step(call)
    last = await env.step(SUBMIT)
    return last.info.ending is not None and last.info.ending.outcome == "solved"


async def rollouts(seeds: list[int], envs: int, warm: int) -> dict[str, Any]:
    """``seeds`` dealt in turn to ``envs`` environments run at once; each warms its next
    seeds in order when ``warm``."""
    solved: list[bool] = []

    async def one(share: list[int]) -> None:
        async with NetworkEnvironment(warm=warm) as env:
            pool = env.pool
            if pool is not None:
                for seed in share:
                    pool.expect(FAMILY, LEVEL, seed)
            for seed in share:
                solved.append(await solve(env, seed))

    started = time.monotonic()
    async with anyio.create_task_group() as group:
        for index in range(envs):
            group.start_soon(one, seeds[index::envs])
    wall = time.monotonic() - started
    return {
        "environments": envs,
        "warm": warm,
        "episodes": len(seeds),
        "wall_s": round(wall, 1),
        "episodes_per_hour": round(len(seeds) / wall * 3600, 1),
        "solved": sum(solved),
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    cold = await reset_and_steps(0, args.resets, args.steps)
    warm = await reset_and_steps(args.warm, args.resets, args.steps)
    seeds = list(range(1, args.episodes + 1))
    rates = [
        await rollouts(seeds, 1, 0),
        await rollouts(seeds, args.envs, 0),
        await rollouts(seeds, args.envs, args.warm),
    ]
    return {"cold": cold, "warm": warm, "throughput": rates, "warm_size": args.warm}


def report(results: dict[str, Any]) -> None:
    cold, warm = results["cold"], results["warm"]
    console.print(
        f"reset → observation, median: cold {cold['median_s']:.3f}s, warm {warm['median_s']:.3f}s, "
        f"ratio warm/cold {warm['median_s'] / cold['median_s']:.3f}"
    )
    for tool, rate in cold["steps_per_s"].items():
        hot = warm["steps_per_s"][tool]
        console.print(
            f"{tool}: cold {rate:.1f} steps/s, warm {hot:.1f} steps/s, ratio {hot / rate:.2f}"
        )
    columns = (
        Column("environments", "environments"),
        Column("warm", "warm"),
        Column("episodes", "episodes"),
        Column("wall s", "wall_s", "{:.1f}".format),
        Column("episodes/hour", "episodes_per_hour", "{:.0f}".format),
        Column("solved", "solved"),
    )
    rows = results["throughput"]
    console.print(rows_table("the reference solution through step", columns, rows))
    base = rows[0]["episodes_per_hour"]
    for row in rows[1:]:
        ratio = row["episodes_per_hour"] / base
        console.print(
            f"{row['environments']} at once, warm {row['warm']}: {ratio:.2f}x one by one, cold"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resets", type=int, default=5, help="resets timed per mode")
    parser.add_argument("--steps", type=int, default=20, help="steps timed per read tool")
    parser.add_argument("--warm", type=int, default=2, help="the pool's size")
    parser.add_argument("--episodes", type=int, default=8, help="episodes per throughput run")
    parser.add_argument("--envs", type=int, default=2, help="environments at once")
    args = parser.parse_args()
    results = anyio.run(run, args)
    report(results)
    console.print(f"results: {save('rollouts', results)}")


if __name__ == "__main__":
    main()
