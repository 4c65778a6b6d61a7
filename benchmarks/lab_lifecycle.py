"""Lab lifecycle benchmark: netdojo's lab runtime against baselines measured in the same run.

For labs of N devices (``ospf_ring(routers=N-2, hosts=2)``: FRR routers in an OSPF ring plus two
hosts) each repeat measures three things back to back, so they share the machine's state:

netdojo (``netdojo.labs.runtime``)
    deploy      ``start_lab`` in total: netdojo's deploy of Kathará's objects
                (`netdojo.labs.deploy`) plus the wait for every startup chain
    ready       from the end of deploy until OSPF has converged and h1 first pings h2
    exec        median wall time of ``lab.exec("r1", ["true"])``
    memory      median cgroup memory (usage minus page cache) per router and per host, once ready
    undeploy    ``stop_lab``

Kathará CLI (the same lab written as a lab folder)
    lstart, lclean and exec as whole commands, the way a user runs them. The CLI reads its
    settings from ``~/.config/kathara.conf`` of the passwd home (``$HOME`` does not matter) and
    writes a default file there when there is none, so it is started as ``python -m kathara``
    is, but with ``Setting.DEFAULT_SETTINGS_PATH`` pointed at a temporary copy of netdojo's
    ``kathara.conf``; the user's home is never written. ``lstart`` does not wait for startup
    commands, netdojo's deploy does.

Docker floor (the least any container runtime on this engine can cost)
    ``docker run -d --network none IMAGE sleep infinity`` N times in sequence, one
    ``docker rm -f`` of them all, and the median docker-py ``exec_run(["true"])``.

Ratios against targets answer whether netdojo's own layer is cheap: deploy ≤ 2x the floor and
≤ 0.75x the CLI, ready ≤ 2 s for 5 devices, undeploy ≤ 0.4 s per device, exec ≤ 1.3x a bare
``exec_run``, a router ≤ 25 MiB. Results are medians over the repeats; every run is kept in the
JSON. Every lab and container the benchmark creates is removed in ``finally`` blocks, Ctrl-C too.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import anyio
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

from _lifecycle_measures import (
    BenchError,
    measure_docker_floor,
    measure_kathara_cli,
    measure_netdojo,
    seconds_since,
)
from _lifecycle_results import SizeResult, measurements_table, report, targets_table
from netdojo.labs.image import device_image
from netdojo.labs.kathara_backend import docker_client
from netdojo.labs.samples import ospf_ring

DEFAULT_SIZES = (5, 20, 50)
DEFAULT_REPEATS = 3
DEFAULT_OUT = Path(__file__).resolve().parent / "out" / "lab_lifecycle.json"
SETTLE_S = 2.0
"""Pause between measurements, so one's teardown does not run into the next."""


def create_manager() -> float:
    """Create Kathará's manager, as every netdojo process does once; returns seconds.

    Done before any run, so the first netdojo deploy is not charged for it.
    """
    started = time.perf_counter()
    docker_client()
    return seconds_since(started)


def run_size(devices: int, repeats: int, progress: Progress) -> SizeResult:
    result = SizeResult(devices)
    task = progress.add_task("", total=3 * repeats)
    image = device_image()
    for repeat in range(1, repeats + 1):

        def stage(text: str, repeat: int = repeat) -> None:
            progress.update(task, description=f"{devices} devices, run {repeat}/{repeats}: {text}")

        spec = ospf_ring(routers=devices - 2, hosts=2, name=f"bench{devices}")
        result.netdojo.append(anyio.run(measure_netdojo, spec, stage))
        progress.advance(task)
        time.sleep(SETTLE_S)
        result.kathara_cli.append(measure_kathara_cli(spec, stage))
        progress.advance(task)
        time.sleep(SETTLE_S)
        result.docker_floor.append(measure_docker_floor(devices, image, stage))
        progress.advance(task)
        time.sleep(SETTLE_S)
        progress.console.print(_run_line(devices, repeat, result))
    progress.update(task, description=f"{devices} devices: done")
    return result


def _run_line(devices: int, repeat: int, result: SizeResult) -> str:
    own, cli, floor = result.netdojo[-1], result.kathara_cli[-1], result.docker_floor[-1]
    return (
        f"[dim]{devices} devices, run {repeat}:[/] netdojo deploy {own.deploy_s:.1f}s "
        f"ready {own.ready_s:.1f}s exec {own.exec_ms:.1f}ms undeploy {own.undeploy_s:.1f}s · "
        f"CLI lstart {cli.lstart_s:.1f}s lclean {cli.lclean_s:.1f}s · "
        f"docker run {floor.run_s:.1f}s rm {floor.rm_s:.1f}s exec_run {floor.exec_run_ms:.1f}ms"
    )


def _sizes(text: str) -> list[int]:
    sizes = [int(part) for part in text.split(",") if part.strip()]
    if not sizes or min(sizes) < 4:
        raise argparse.ArgumentTypeError(
            "sizes are device counts of at least 4 (2 routers + 2 hosts)"
        )
    return sizes


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--sizes",
        type=_sizes,
        default=list(DEFAULT_SIZES),
        help="comma-separated lab sizes in devices (default: 5,20,50)",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=DEFAULT_REPEATS,
        help=f"runs per size; medians are reported (default: {DEFAULT_REPEATS})",
    )
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"JSON output (default: {DEFAULT_OUT})"
    )
    return parser.parse_args()


def main() -> int:
    args = parse_args()
    console = Console()
    started = datetime.now(UTC)
    columns = (
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    manager_s = create_manager()
    console.print(f"Kathará manager created in {manager_s:.2f}s (once per process, not in deploy)")
    try:
        with Progress(*columns, console=console) as progress:
            results = [run_size(size, args.repeats, progress) for size in args.sizes]
    except KeyboardInterrupt:
        console.print("[yellow]interrupted; everything created so far was removed[/]")
        return 130
    except BenchError as exc:
        console.print(f"[red]benchmark failed:[/] {exc}")
        return 1
    console.print(measurements_table(results, args.repeats))
    console.print(targets_table(results))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    document = report(results, args.repeats, started, manager_s)
    args.out.write_text(json.dumps(document, indent=1) + "\n")
    console.print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
