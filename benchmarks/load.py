"""Load benchmark: N episodes at once against the same N one by one, in one process.

Each episode runs the reference solution (the oracle, in process) while tcpdump listens on one
end of every link of its lab and the scenario's ping tests send traffic across it. Cross-talk
is any frame whose source MAC address belongs to no device of that lab: with one bridge per
link and labs that may share IP addresses, a frame from another lab (or from the host) would
show up so. Then the same instances run one by one, and every episode's outcome and hidden test
results must be identical. Printed: frames seen and foreign frames per lab, the comparison,
and wall time concurrent against sequential (the ratio, and episodes per hour each way).

Results go to ``benchmarks/out/load-<time>.json``.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from datetime import UTC, datetime
from pathlib import Path

import anyio
from pydantic import BaseModel
from rich.console import Console
from rich.table import Table

from netdojo.clients.agents import oracle
from netdojo.clients.inprocess import in_process
from netdojo.judges.assessment import AssessmentConfig, Slot, run_assessment
from netdojo.labs.footprint import settled
from netdojo.labs.runtime import LiveLab
from netdojo.reports.records import EpisodeRecord
from netdojo.scenarios.hidden_tests import PingTest
from netdojo.scenarios.model import Scenario
from netdojo.servers.mcp_server import episode_server
from netdojo.tools.contract import Agent, AgentReport, EpisodeView

CAPTURE_S = 4.0
PINGS = 8
SOURCE_MAC = re.compile(r"\s([0-9a-f]{2}(?::[0-9a-f]{2}){5}) > ")
console = Console(width=120)


class Capture(BaseModel):
    """What tcpdump saw on the links of one lab while its episode ran."""

    episode: str
    links: int
    frames: int
    foreign: list[str]
    foreign_frames: list[str] = []  # the first frame of each foreign source, where it was seen


class Run(BaseModel):
    concurrency: int
    wall_s: float
    episodes: list[EpisodeRecord]
    captures: list[Capture]


class LoadReport(BaseModel):
    family: str
    episodes: int
    concurrent: Run
    sequential: Run
    identical: bool
    differences: list[str]
    labs_left: int

    @property
    def cross_talk(self) -> int:
        return sum(len(c.foreign) for c in self.concurrent.captures + self.sequential.captures)

    @property
    def ratio(self) -> float:
        return self.concurrent.wall_s / self.sequential.wall_s


async def _own_macs(lab: LiveLab) -> set[str]:
    """Every interface MAC of the lab's devices; a device that cannot be read fails the run
    (its frames would otherwise count as foreign)."""
    macs: set[str] = set()
    for device in lab.devices:
        done = await lab.exec(device, ["ip", "-j", "link", "show"])
        if not done.ok:
            raise RuntimeError(f"{device}: `ip link show` failed: {done.stderr or done.exit_code}")
        macs |= {str(link.get("address", "")).lower() for link in json.loads(done.stdout)}
    return macs


async def _sources(lab: LiveLab, device: str, interface: str) -> list[tuple[str, str]]:
    """(source MAC, frame) of the frames ``device`` sees on ``interface`` for `CAPTURE_S`
    seconds."""
    argv = ["tcpdump", "-e", "-n", "-l", "-i", interface]
    done = await lab.exec(device, argv, timeout=CAPTURE_S, max_output=1 << 20)
    return [
        (match.group(1).lower(), f"{device} {interface}: {line}")
        for line in done.stdout.splitlines()
        if (match := SOURCE_MAC.search(line))
    ]


async def _traffic(lab: LiveLab, scenario: Scenario) -> None:
    """The scenario's own ping tests, repeated: frames on the links under watch."""
    hidden = scenario.hidden
    pings = [t for t in hidden.targets + hidden.guards if isinstance(t, PingTest)]
    async with anyio.create_task_group() as group:
        for probe in pings:
            argv = ["ping", "-c", str(PINGS), "-i", "0.3", "-W", "1", probe.params.target]
            group.start_soon(lab.exec, probe.device, argv, CAPTURE_S)


def watched(captures: list[Capture], scenario: Scenario) -> Agent:
    """The oracle on ``scenario``, with every link of its lab under capture while it works."""
    work = in_process(oracle, episode_server)

    async def agent(view: EpisodeView) -> AgentReport:
        assert view.handle is not None
        lab = view.handle.lab
        ends = [link.endpoints[0] for link in lab.spec.links]
        seen: list[list[tuple[str, str]]] = []
        own: set[str] = set()
        report = AgentReport()

        async def listen(device: str, index: int) -> None:
            seen.append(await _sources(lab, device, f"eth{index}"))

        async def act() -> None:
            nonlocal report
            own.update(await _own_macs(lab))
            await anyio.sleep(1.0)  # tcpdump is listening
            async with anyio.create_task_group() as group:
                group.start_soon(_traffic, lab, scenario)
                report = await work(view)

        async with anyio.create_task_group() as group:
            for device, index in ends:
                group.start_soon(listen, device, index)
            group.start_soon(act)
        own.update(await _own_macs(lab))
        frames = [frame for link in seen for frame in link]
        foreign = {mac: line for mac, line in reversed(frames) if mac not in own}
        captures.append(
            Capture(
                episode=view.episode_id,
                links=len(ends),
                frames=len(frames),
                foreign=sorted(foreign),
                foreign_frames=[foreign[mac] for mac in sorted(foreign)],
            )
        )
        return report

    return agent


async def run(config: AssessmentConfig) -> Run:
    captures: list[Capture] = []

    def agent_for(slot: Slot, scenario: Scenario) -> Agent:
        return watched(captures, scenario)

    async def nothing(slot: Slot, record: EpisodeRecord) -> None:
        return None

    started = time.monotonic()
    result = await run_assessment(config, "oracle", agent_for, nothing)
    return Run(
        concurrency=config.concurrency,
        wall_s=round(time.monotonic() - started, 1),
        episodes=result.episodes,
        captures=captures,
    )


def _signature(record: EpisodeRecord) -> tuple[str, list[tuple[str, bool]]]:
    tests = record.verdict.tests if record.verdict else None
    results = [(t.id, t.passed) for t in (tests.targets + tests.guards if tests else [])]
    return record.outcome, results


def compare(concurrent: Run, sequential: Run) -> list[str]:
    """Per schedule slot: outcome and each hidden test result, where they differ."""
    one_by_one = {r.slot: r for r in sequential.episodes}
    differences = []
    for record in concurrent.episodes:
        other = one_by_one.get(record.slot)
        if other is None or _signature(record) != _signature(other):
            theirs = _signature(other) if other else "missing"
            differences.append(f"slot {record.slot}: {_signature(record)} vs {theirs}")
    return differences


async def load(episodes: int, family: str = "static-routing", seed: int = 0) -> LoadReport:
    config = AssessmentConfig(
        families=[family],
        levels=[1],
        episodes=episodes,
        seed=seed,
        concurrency=episodes,
        calibration=True,
    )
    concurrent = await run(config)
    sequential = await run(config.model_copy(update={"concurrency": 1}))
    differences = compare(concurrent, sequential)
    left = await settled()
    return LoadReport(
        family=family,
        episodes=episodes,
        concurrent=concurrent,
        sequential=sequential,
        identical=not differences,
        differences=differences,
        labs_left=left.labs_left,
    )


def report(result: LoadReport) -> None:
    table = Table("slot", "seed", "outcome at once", "one by one", "frames", "foreign")
    by_slot = {r.slot: r for r in result.sequential.episodes}
    frames = {c.episode: c for c in result.concurrent.captures}
    for record in result.concurrent.episodes:
        capture = frames.get(record.episode_id)
        other = by_slot.get(record.slot)
        table.add_row(
            str(record.slot), str(record.seed), record.outcome,
            other.outcome if other else "-",
            str(capture.frames if capture else "-"),
            str(len(capture.foreign)) if capture else "-",
        )  # fmt: skip
    console.print(table)
    hour = 3600 / max(result.concurrent.wall_s, 1e-9) * result.episodes
    hour_seq = 3600 / max(result.sequential.wall_s, 1e-9) * result.episodes
    console.print(
        f"{result.episodes} episodes of {result.family}: at once {result.concurrent.wall_s:.0f}s "
        f"({hour:.0f}/hour), one by one {result.sequential.wall_s:.0f}s ({hour_seq:.0f}/hour); "
        f"ratio concurrent/sequential {result.ratio:.2f} (speed-up {1 / result.ratio:.2f}x)"
    )
    all_captures = result.concurrent.captures + result.sequential.captures
    console.print(
        f"cross-talk: {result.cross_talk} foreign source MACs in "
        f"{sum(c.frames for c in all_captures)} frames on {sum(c.links for c in all_captures)} "
        f"captured links"
    )
    same = "[green]identical[/]" if result.identical else f"[red]{result.differences}[/]"
    console.print(f"results at once vs one by one: {same}; labs left: {result.labs_left}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=8, help="episodes at once")
    parser.add_argument("--family", default="static-routing", help="a scenario family")
    parser.add_argument("--seed", type=int, default=0, help="the assessment seed")
    args = parser.parse_args()
    result = anyio.run(load, args.episodes, args.family, args.seed)
    report(result)
    out = Path(__file__).parent / "out"
    out.mkdir(exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = out / f"load-{stamp}.json"
    path.write_text(json.dumps(result.model_dump(mode="json"), indent=1))
    console.print(f"results: {path}")
    bad = result.cross_talk or not result.identical or result.labs_left
    raise SystemExit(1 if bad else 0)


if __name__ == "__main__":
    main()
