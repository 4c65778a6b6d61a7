"""Episode overhead benchmark: what an episode costs outside the agent, and episodes per hour.

Overhead, for level-1 scenarios of several families, one after another:

bare        ``start_lab`` then ``stop_lab`` of the scenario's lab (deploy, startup, undeploy)
episode     ``run_episode`` with an agent that submits at once: deploy and staging (baseline,
            injection, fault check), the start-of-turn tests, judging and teardown; the agent's
            own turn is subtracted

The ratio episode/bare (target ≤ 1.5) is what netdojo adds around a lab. Then throughput: the
heuristic agent on the same mix in process (no A2A) at concurrency 1 and 2, as episodes per
hour. Results go to ``benchmarks/out/episode_overhead-<time>.json``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import anyio
from rich.console import Console

from _output import Column, rows_table, save
from netdojo.clients.agents import noop
from netdojo.clients.catalogue import policy_factory
from netdojo.clients.inprocess import in_process
from netdojo.judges.assessment import AssessmentConfig, run_assessment
from netdojo.judges.runner import run_episode
from netdojo.labs.runtime import start_lab, stop_lab
from netdojo.reports.records import Budgets
from netdojo.reports.summary import summarize
from netdojo.scenarios.generate import generate
from netdojo.servers.mcp_server import episode_server

FAMILIES = ("static-routing", "ospf-adjacency", "host-config", "bgp-peering")
TARGET_RATIO = 1.5
console = Console(width=120)


async def overhead(seeds: list[int]) -> list[dict[str, Any]]:
    rows = []
    for family in FAMILIES:
        for seed in seeds:
            scenario = generate(family, 1, seed)
            started = time.monotonic()
            await stop_lab(await start_lab(scenario.hidden.lab))
            bare = time.monotonic() - started
            started = time.monotonic()
            record = await run_episode(
                scenario, in_process(noop, episode_server), Budgets(), f"bench-{seed}"
            )
            total = time.monotonic() - started
            episode = total - record.timings.agent_s
            rows.append(
                {
                    "family": family,
                    "seed": seed,
                    "bare_s": round(bare, 2),
                    "episode_s": round(episode, 2),
                    "ratio": round(episode / bare, 2),
                    "timings": record.timings.model_dump(),
                    "outcome": record.outcome,
                }
            )
    return rows


async def throughput(seeds: list[int], concurrency: int) -> dict[str, Any]:
    config = AssessmentConfig(
        families=list(FAMILIES), levels=[1], seeds=seeds, concurrency=concurrency
    )
    make = policy_factory("heuristic")

    async def nothing(*_: object) -> None:
        return None

    started = time.monotonic()
    result = await run_assessment(
        config, "heuristic", lambda s, sc: in_process(make(), episode_server), nothing
    )
    wall = time.monotonic() - started
    return {
        "concurrency": concurrency,
        "episodes": len(result.episodes),
        "wall_s": round(wall, 1),
        "episodes_per_hour": round(len(result.episodes) / wall * 3600, 1),
        "solved": summarize(result.episodes).solved.model_dump(),
    }


async def run(seeds: list[int]) -> dict[str, Any]:
    rows = await overhead(seeds)
    rates = [await throughput(seeds, c) for c in (1, 2)]
    return {"overhead": rows, "throughput": rates}


def _ratio(ratio: float) -> str:
    mark = "[green]" if ratio <= TARGET_RATIO else "[red]"
    return f"{mark}{ratio:.2f}"


COLUMNS = (
    Column("family", "family"),
    Column("seed", "seed"),
    Column("bare s", "bare_s", "{:.1f}".format),
    Column("episode s", "episode_s", "{:.1f}".format),
    Column("ratio", "ratio", _ratio),
    Column("outcome", "outcome"),
)


def report(results: dict[str, Any]) -> None:
    title = f"episode overhead outside the agent; target ≤ {TARGET_RATIO}x bare"
    console.print(rows_table(title, COLUMNS, results["overhead"]))
    median = statistics.median(r["ratio"] for r in results["overhead"])
    console.print(f"median ratio episode/bare: {median:.2f}")
    for rate in results["throughput"]:
        console.print(
            f"heuristic, concurrency {rate['concurrency']}: {rate['episodes']} episodes in "
            f"{rate['wall_s']}s = {rate['episodes_per_hour']} episodes/hour, "
            f"solved {rate['solved']['value']:.0%}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1,2", help="comma-separated level-1 seeds per family")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    results = anyio.run(run, seeds)
    report(results)
    path = save("episode_overhead", results)
    console.print(f"results: {path}")


if __name__ == "__main__":
    main()
