"""Soak benchmark: many episodes one after another through the whole arena in one process.

The green agent, a built-in purple agent and the assessing client run in this process over
real A2A on loopback, as `netdojo run` does. After every episode the process's footprint is
sampled: its labs still on the host (at most the one being deployed next), open file
descriptors and resident memory. At the end, once the last lab is gone, nothing may be left:
no container, network, ``kt-`` bridge or host rule of this process, no new orphan bridge, and
no file descriptors beyond those held after the first episodes. Memory should be flat: the
mean RSS of the last quarter of episodes against the first quarter, and the slope of a line
fitted to the samples after the first quarter (warm-up), in MiB per 100 episodes. With
``--trace``, the Python allocations that grew most from the end of warm-up to the last episode
(tracemalloc) say where memory goes, if it goes anywhere.

Results go to ``benchmarks/out/soak-<time>.json``.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
import tracemalloc
from collections import Counter
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel
from rich.console import Console
from rich.table import Table

from netdojo.clients.assessor import assess
from netdojo.clients.catalogue import PURPLE_AGENTS, policy_factory
from netdojo.clients.purple import CallerContextBuilder, PurpleExecutor
from netdojo.labs.footprint import Footprint, footprint, settled
from netdojo.servers.apps import green_app, purple_app
from netdojo.servers.serving import free_port, serve_uvicorn

SETTLE_S = 30.0  # after the last episode: how long labs and bridges may take to disappear
console = Console(width=120)


class Sample(BaseModel):
    episode: int
    outcome: str
    seconds: float
    footprint: Footprint


class SoakReport(BaseModel):
    episodes: int
    family: str
    agent: str
    wall_s: float
    outcomes: dict[str, int]
    healthy_controls: int
    before: Footprint
    after: Footprint
    samples: list[Sample]
    most_labs_at_once: int
    fds_warm: int
    rss_first_quarter_mib: float
    rss_last_quarter_mib: float
    rss_ratio: float
    rss_slope_mib_per_100: float
    heap_growth: list[str] = []

    @property
    def leaks(self) -> dict[str, int]:
        """Anything of this process still on the host, and growth no episode should cause."""
        after, before = self.after, self.before
        found = {
            "containers": after.containers,
            "networks": after.networks,
            "bridges": after.bridges,
            "rules": after.rules,
            "orphan bridges": max(0, after.orphan_bridges - before.orphan_bridges),
            "orphan rules": max(0, after.orphan_rules - before.orphan_rules),
            "file descriptors": max(0, after.fds - self.fds_warm),
        }
        return {name: count for name, count in found.items() if count}


def _slope(points: list[tuple[int, float]]) -> float:
    if len(points) < 2:
        return 0.0
    return statistics.linear_regression(*zip(*points, strict=True)).slope


async def soak(
    episodes: int, family: str = "static-routing", agent: str = "noop", trace: bool = False
) -> SoakReport:
    before = await anyio.to_thread.run_sync(footprint)
    samples: list[Sample] = []
    snapshots: list[tracemalloc.Snapshot] = []
    warm_up = max(1, episodes // 4)
    if trace:
        tracemalloc.start(10)
    started = time.monotonic()

    def sample(update: dict[str, Any]) -> None:
        if trace and len(samples) + 1 in (warm_up, episodes):
            gc.collect()
            snapshots.append(tracemalloc.take_snapshot())
        samples.append(
            Sample(
                episode=len(samples) + 1,
                outcome=str(update["episode"]["outcome"]),
                seconds=round(time.monotonic() - started, 1),
                footprint=footprint(),
            )
        )

    config = {
        "families": [family],
        "levels": [1],
        "episodes": episodes,
        "concurrency": 1,
        "calibration": agent == "oracle",
    }
    async with AsyncExitStack() as stack:
        purple_port, green_port = free_port(), free_port()
        purple_url = f"http://127.0.0.1:{purple_port}"
        executor = PurpleExecutor(policy_factory(agent))
        app = purple_app(
            agent,
            PURPLE_AGENTS[agent],
            executor,
            purple_url,
            context_builder=CallerContextBuilder(),
        )
        await stack.enter_async_context(serve_uvicorn(app, "127.0.0.1", purple_port))
        green = green_app("127.0.0.1", green_port)
        await stack.enter_async_context(serve_uvicorn(green, "127.0.0.1", green_port))
        request = {"participants": {"agent": purple_url}, "config": config}
        artifacts = await assess(f"http://127.0.0.1:{green_port}", request, on_episode=sample)
        wall = time.monotonic() - started
        after = await settled(SETTLE_S)
    quarter = max(1, len(samples) // 4)
    rss = [s.footprint.rss_mib for s in samples]
    first, last = statistics.mean(rss[:quarter]), statistics.mean(rss[-quarter:])
    warm = [(s.episode, s.footprint.rss_mib) for s in samples[quarter:]]
    outcomes = Counter(e["outcome"] for e in artifacts["results"]["episodes"])
    return SoakReport(
        episodes=episodes,
        family=family,
        agent=agent,
        wall_s=round(wall, 1),
        outcomes=dict(outcomes),
        healthy_controls=sum(bool(e.get("healthy")) for e in artifacts["results"]["episodes"]),
        before=before,
        after=after,
        samples=samples,
        most_labs_at_once=max((s.footprint.labs for s in samples), default=0),
        fds_warm=max(s.footprint.fds for s in samples[:quarter]),
        rss_first_quarter_mib=round(first, 1),
        rss_last_quarter_mib=round(last, 1),
        rss_ratio=round(last / first, 3),
        rss_slope_mib_per_100=round(_slope(warm) * 100, 2),
        heap_growth=_growth(snapshots),
    )


def _growth(snapshots: list[tracemalloc.Snapshot], top: int = 10) -> list[str]:
    if len(snapshots) < 2:
        return []
    return [str(stat) for stat in snapshots[-1].compare_to(snapshots[0], "lineno")[:top]]


def report(result: SoakReport, every: int) -> None:
    table = Table("episode", "outcome", "s", "labs", "fds", "RSS MiB", title="soak samples")
    for sample in result.samples:
        if sample.episode % every == 0 or sample.episode in (1, result.episodes):
            fp = sample.footprint
            table.add_row(
                str(sample.episode), sample.outcome, f"{sample.seconds:.0f}", str(fp.labs),
                str(fp.fds), f"{fp.rss_mib:.1f}",
            )  # fmt: skip
    console.print(table)
    console.print(
        f"{result.episodes} episodes of {result.family} with {result.agent} in "
        f"{result.wall_s:.0f}s ({result.wall_s / max(1, result.episodes):.1f}s each); "
        f"outcomes {result.outcomes} ({result.healthy_controls} healthy controls); "
        f"at most {result.most_labs_at_once} lab(s) at once"
    )
    console.print(
        f"RSS: first quarter {result.rss_first_quarter_mib} MiB, last quarter "
        f"{result.rss_last_quarter_mib} MiB, ratio {result.rss_ratio}; slope after warm-up "
        f"{result.rss_slope_mib_per_100} MiB per 100 episodes"
    )
    console.print(
        f"file descriptors: {result.before.fds} before, {result.fds_warm} after warm-up, "
        f"{result.after.fds} at the end"
    )
    if result.heap_growth:
        console.print("Python allocations that grew most after warm-up:")
        for line in result.heap_growth:
            console.print(f"  {line}", markup=False, highlight=False)
    leaks = result.leaks
    verdict = "[green]none[/]" if not leaks else f"[red]{leaks}[/]"
    console.print(f"leaks: {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100, help="episodes in a row")
    parser.add_argument("--family", default="static-routing", help="a scenario family")
    parser.add_argument("--agent", default="noop", help="a built-in purple agent")
    parser.add_argument("--every", type=int, default=10, help="print a sample every N episodes")
    parser.add_argument("--trace", action="store_true", help="trace Python allocations")
    args = parser.parse_args()
    result = anyio.run(soak, args.episodes, args.family, args.agent, args.trace)
    report(result, args.every)
    out = Path(__file__).parent / "out"
    out.mkdir(exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = out / f"soak-{stamp}.json"
    path.write_text(json.dumps(result.model_dump(mode="json"), indent=1))
    console.print(f"results: {path}")
    raise SystemExit(1 if result.leaks else 0)


if __name__ == "__main__":
    main()
