"""Lab lifecycle benchmark: netdojo's lab runtime against baselines measured in the same run.

For labs of N devices (``ospf_ring(routers=N-2, hosts=2)``: FRR routers in an OSPF ring plus two
hosts) each repeat measures three things back to back, so they share the machine's state:

netdojo (``netdojo.labs.runtime``)
    deploy      ``start_lab`` in total: Kathará's deploy plus the wait for every startup chain
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
import os
import platform
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

import anyio
from docker.models.containers import Container
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from netdojo.labs.image import device_image
from netdojo.labs.kathara_backend import docker_client
from netdojo.labs.kathara_lab import resolve_image
from netdojo.labs.kathara_settings import SETTINGS_FILE, settings_dir
from netdojo.labs.runtime import LiveLab, start_lab, stop_lab
from netdojo.labs.samples import host_address, ospf_converged, ospf_ring
from netdojo.labs.spec import LabSpec

DEFAULT_SIZES = (5, 20, 50)
DEFAULT_REPEATS = 3
DEFAULT_OUT = Path(__file__).resolve().parent / "out" / "lab_lifecycle.json"
EXEC_SAMPLES = 30
CLI_EXEC_SAMPLES = 3
READY_DEADLINE_S = 180.0
SETTLE_S = 2.0
"""Pause between measurements, so one's teardown does not run into the next."""
FLOOR_LABEL = "app=netdojo-bench"
RUN_LABEL = f"netdojo-bench.run={secrets.token_hex(4)}"
MIB = 2**20

Stage = Callable[[str], None]
"""Reports what a measurement is doing now (shown in the progress display)."""


class BenchError(RuntimeError):
    """A step of the benchmark failed; the run stops."""


@dataclass
class NetdojoRun:
    deploy_s: float
    containers_s: float
    startup_s: float
    ready_s: float
    converge_s: float
    ping_s: float
    exec_ms: float
    exec_in_thread_ms: float
    undeploy_s: float
    router_mib: float
    host_mib: float


@dataclass
class CliRun:
    lstart_s: float
    exec_ms: float
    lclean_s: float


@dataclass
class FloorRun:
    run_s: float
    exec_run_ms: float
    rm_s: float


@dataclass(frozen=True)
class Target:
    key: str
    label: str
    limit: float
    unit: str
    sizes: frozenset[int] | None = None
    """The lab sizes the target applies to; None for all."""


TARGETS = (
    Target("deploy_vs_floor", "deploy / docker run floor", 2.0, "x"),
    Target("deploy_vs_cli", "deploy / Kathará CLI lstart", 0.75, "x"),
    Target("ready_s", "ready: OSPF + first ping", 2.0, "s", frozenset({5})),
    Target("undeploy_per_device_s", "undeploy per device", 0.4, "s"),
    Target("exec_vs_exec_run", "exec / docker-py exec_run", 1.3, "x"),
    Target("router_mib", "memory per router", 25.0, "MiB"),
)


@dataclass
class SizeResult:
    devices: int
    netdojo: list[NetdojoRun] = field(default_factory=list)
    kathara_cli: list[CliRun] = field(default_factory=list)
    docker_floor: list[FloorRun] = field(default_factory=list)

    def medians(self) -> dict[str, dict[str, float]]:
        return {
            "netdojo": _median_fields(self.netdojo),
            "kathara_cli": _median_fields(self.kathara_cli),
            "docker_floor": _median_fields(self.docker_floor),
        }

    def ratios(self) -> dict[str, float]:
        m = self.medians()
        own, cli, floor = m["netdojo"], m["kathara_cli"], m["docker_floor"]
        return {
            "deploy_vs_floor": own["deploy_s"] / floor["run_s"],
            "deploy_vs_cli": own["deploy_s"] / cli["lstart_s"],
            "ready_s": own["ready_s"],
            "undeploy_per_device_s": own["undeploy_s"] / self.devices,
            "exec_vs_exec_run": own["exec_ms"] / floor["exec_run_ms"],
            "router_mib": own["router_mib"],
        }

    def verdicts(self) -> dict[str, bool | None]:
        """Whether each target is met; None where it does not apply to this size."""
        ratios = self.ratios()
        return {
            t.key: None if t.sizes and self.devices not in t.sizes else ratios[t.key] <= t.limit
            for t in TARGETS
        }


def _median_fields(runs: list[Any]) -> dict[str, float]:
    rows = [asdict(run) for run in runs]
    return {key: statistics.median(row[key] for row in rows) for key in rows[0]}


def _elapsed(started: float) -> float:
    return time.perf_counter() - started


# netdojo --------------------------------------------------------------------------------------


def _pings(address: str) -> Callable[[LiveLab], Awaitable[bool]]:
    async def predicate(lab: LiveLab) -> bool:
        result = await lab.exec("h1", ["ping", "-c", "1", "-W", "1", address], timeout=5)
        return result.ok

    return predicate


async def _exec_round_trips(lab: LiveLab) -> tuple[float, float]:
    """Median wall time of ``lab.exec`` and of the part spent in the worker thread, in ms."""
    walls: list[float] = []
    inside: list[float] = []
    for _ in range(EXEC_SAMPLES):
        started = time.perf_counter()
        result = await lab.exec("r1", ["true"])
        walls.append(_elapsed(started))
        if not result.ok:
            raise BenchError(f"exec in r1 failed: {result.exit_code} {result.stderr}")
        inside.append(result.duration_s)
    return statistics.median(walls) * 1000, statistics.median(inside) * 1000


def _memory_mib(container: Container) -> float:
    """Memory in use as ``docker stats`` shows it on cgroup v1: usage minus page cache."""
    memory = container.stats(stream=False, one_shot=True)["memory_stats"]
    cache = memory.get("stats", {}).get("cache", 0)
    return float(memory["usage"] - cache) / MIB


def _memory_by_role(lab: LiveLab) -> dict[str, float]:
    roles = {dev.name: dev.role for dev in lab.spec.devices}
    selector = {"label": [f"lab_hash={lab.lab_hash}", "app=kathara"]}
    usage: dict[str, list[float]] = defaultdict(list)
    for container in docker_client().containers.list(filters=selector):
        usage[roles[container.labels["name"]]].append(_memory_mib(container))
    return {role: statistics.median(values) for role, values in usage.items()}


async def measure_netdojo(spec: LabSpec, stage: Stage) -> NetdojoRun:
    stage("netdojo: deploy")
    started = time.perf_counter()
    lab = await start_lab(spec)
    deploy_s = _elapsed(started)
    try:
        ready_from = time.perf_counter()
        stage("netdojo: waiting for OSPF")
        converge_s = await lab.wait_until(ospf_converged, deadline_s=READY_DEADLINE_S)
        stage("netdojo: first ping h1 → h2")
        ping = _pings(host_address(spec, "h2"))
        ping_s = await lab.wait_until(ping, deadline_s=READY_DEADLINE_S, interval_s=0.05)
        ready_s = _elapsed(ready_from)
        stage("netdojo: exec round trips")
        exec_ms, in_thread_ms = await _exec_round_trips(lab)
        stage("netdojo: memory")
        memory = await anyio.to_thread.run_sync(_memory_by_role, lab)
    finally:
        stage("netdojo: undeploy")
        with anyio.CancelScope(shield=True):
            await stop_lab(lab)
    return NetdojoRun(
        deploy_s=deploy_s,
        containers_s=lab.timings.deploy_s,
        startup_s=lab.timings.startup_s,
        ready_s=ready_s,
        converge_s=converge_s,
        ping_s=ping_s,
        exec_ms=exec_ms,
        exec_in_thread_ms=in_thread_ms,
        undeploy_s=lab.timings.undeploy_s,
        router_mib=memory["router"],
        host_mib=memory["host"],
    )


# Kathará CLI ----------------------------------------------------------------------------------


def write_lab_folder(spec: LabSpec, root: Path) -> None:
    """``spec`` as a Kathará lab folder: lab.conf, ``DEV.startup`` and ``DEV/<path>`` files."""
    lines: list[str] = []
    for dev in spec.devices:
        lines += [f"{dev.name}[{index}]={link}" for index, link in spec.interfaces(dev.name)]
        lines += [
            f"{dev.name}[image]={resolve_image(dev.image)}",
            f"{dev.name}[mem]={dev.limits.memory_mib}m",
            f"{dev.name}[cpus]={dev.limits.cpus}",
        ]
        (root / f"{dev.name}.startup").write_text("".join(f"{line}\n" for line in dev.startup))
        for path, content in dev.files.items():
            target = root / dev.name / path.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)
    (root / "lab.conf").write_text("".join(f"{line}\n" for line in lines))


def _kathara_cli(settings: Path, *args: str) -> float:
    """Run ``python -m kathara ARGS`` with its settings file at ``settings``; returns seconds."""
    boot = (
        "import runpy, Kathara.setting.Setting as s; "
        f"s.DEFAULT_SETTINGS_PATH = {str(settings)!r}; "
        "runpy.run_module('kathara', run_name='__main__', alter_sys=True)"
    )
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", boot, *args], capture_output=True, text=True, check=False
    )
    elapsed = _elapsed(started)
    if done.returncode != 0:
        output = (done.stdout + done.stderr).strip()[-800:]
        raise BenchError(f"kathara {args[0]} exited with {done.returncode}:\n{output}")
    return elapsed


def _remove_kathara_lab(lab_hash: str) -> None:
    """Remove whatever a Kathará lab left in Docker (nothing, once ``lclean`` succeeded)."""
    client = docker_client()
    selector = {"label": [f"lab_hash={lab_hash}", "app=kathara"]}
    for container in client.containers.list(all=True, filters=selector):
        container.remove(force=True)
    for network in client.networks.list(filters=selector):
        network.remove()


def measure_kathara_cli(spec: LabSpec, stage: Stage) -> CliRun:
    from Kathara import utils
    from Kathara.model.Lab import Lab

    with tempfile.TemporaryDirectory(prefix="netdojo-bench-") as tmp:
        settings = Path(tmp) / SETTINGS_FILE
        shutil.copyfile(settings_dir() / SETTINGS_FILE, settings)
        folder = Path(tmp) / "lab"
        folder.mkdir()
        write_lab_folder(spec, folder)
        directory = utils.get_absolute_path(str(folder))
        try:
            stage("Kathará CLI: lstart")
            lstart_s = _kathara_cli(settings, "lstart", "-d", directory, "--noterminals")
            stage("Kathará CLI: exec")
            exec_s = statistics.median(
                _kathara_cli(settings, "exec", "-d", directory, "r1", "--", "true")
                for _ in range(CLI_EXEC_SAMPLES)
            )
        finally:
            stage("Kathará CLI: lclean")
            try:
                lclean_s = _kathara_cli(settings, "lclean", "-d", directory)
            finally:
                _remove_kathara_lab(Lab(None, path=directory).hash)
    return CliRun(lstart_s=lstart_s, exec_ms=exec_s * 1000, lclean_s=lclean_s)


# Docker floor ---------------------------------------------------------------------------------


def _docker(*args: str) -> str:
    done = subprocess.run(["docker", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise BenchError(f"docker {args[0]} exited with {done.returncode}: {done.stderr.strip()}")
    return done.stdout.strip()


def _exec_run_ms(container_id: str) -> float:
    container = docker_client().containers.get(container_id)
    samples: list[float] = []
    for _ in range(EXEC_SAMPLES):
        started = time.perf_counter()
        result = container.exec_run(["true"])
        samples.append(_elapsed(started))
        if result.exit_code != 0:
            raise BenchError(f"exec_run failed with {result.exit_code}")
    return statistics.median(samples) * 1000


def _remove_floor_containers() -> None:
    selector = {"label": [FLOOR_LABEL, RUN_LABEL]}
    for container in docker_client().containers.list(all=True, filters=selector):
        container.remove(force=True)


def measure_docker_floor(devices: int, image: str, stage: Stage) -> FloorRun:
    run = ["run", "-d", "--rm=false", "--network", "none"]
    run += ["--label", FLOOR_LABEL, "--label", RUN_LABEL, image, "sleep", "infinity"]
    try:
        stage(f"docker floor: {devices} x docker run")
        started = time.perf_counter()
        ids = [_docker(*run) for _ in range(devices)]
        run_s = _elapsed(started)
        stage("docker floor: exec_run")
        exec_run_ms = _exec_run_ms(ids[0])
        stage("docker floor: docker rm -f")
        started = time.perf_counter()
        _docker("rm", "-f", *ids)
        rm_s = _elapsed(started)
    finally:
        _remove_floor_containers()
    return FloorRun(run_s=run_s, exec_run_ms=exec_run_ms, rm_s=rm_s)


# run ------------------------------------------------------------------------------------------


def create_manager() -> float:
    """Create Kathará's manager, as every netdojo process does once; returns seconds.

    Done before any run, so the first netdojo deploy is not charged for it.
    """
    started = time.perf_counter()
    docker_client()
    return _elapsed(started)


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


# report ---------------------------------------------------------------------------------------

MEASUREMENTS: tuple[tuple[str, str, str, str], ...] = (
    ("netdojo", "deploy_s", "netdojo deploy (s)", "{:.2f}"),
    ("netdojo", "containers_s", "  of which Kathará deploy (s)", "{:.2f}"),
    ("netdojo", "startup_s", "  of which startup wait (s)", "{:.2f}"),
    ("netdojo", "ready_s", "netdojo ready (s)", "{:.2f}"),
    ("netdojo", "converge_s", "  of which OSPF converged (s)", "{:.2f}"),
    ("netdojo", "ping_s", "  of which first ping (s)", "{:.2f}"),
    ("netdojo", "exec_ms", "netdojo exec (ms)", "{:.1f}"),
    ("netdojo", "exec_in_thread_ms", "  of which in worker thread (ms)", "{:.1f}"),
    ("netdojo", "undeploy_s", "netdojo undeploy (s)", "{:.2f}"),
    ("netdojo", "router_mib", "memory per router (MiB)", "{:.1f}"),
    ("netdojo", "host_mib", "memory per host (MiB)", "{:.1f}"),
    ("kathara_cli", "lstart_s", "Kathará CLI lstart (s)", "{:.2f}"),
    ("kathara_cli", "exec_ms", "Kathará CLI exec (ms)", "{:.0f}"),
    ("kathara_cli", "lclean_s", "Kathará CLI lclean (s)", "{:.2f}"),
    ("docker_floor", "run_s", "docker run x N (s)", "{:.2f}"),
    ("docker_floor", "exec_run_ms", "docker-py exec_run (ms)", "{:.1f}"),
    ("docker_floor", "rm_s", "docker rm -f (s)", "{:.2f}"),
)


def measurements_table(results: list[SizeResult], repeats: int) -> Table:
    table = Table(title=f"Lab lifecycle, median of {repeats} run(s)")
    table.add_column("measurement")
    for result in results:
        table.add_column(f"{result.devices} devices", justify="right")
    medians = [result.medians() for result in results]
    for index, (group, key, label, fmt) in enumerate(MEASUREMENTS):
        if index and group != MEASUREMENTS[index - 1][0]:
            table.add_section()
        table.add_row(label, *(fmt.format(m[group][key]) for m in medians))
    return table


def targets_table(results: list[SizeResult]) -> Table:
    table = Table(title="Targets")
    table.add_column("ratio")
    table.add_column("target", justify="right")
    for result in results:
        table.add_column(f"{result.devices} devices", justify="right")
    for target in TARGETS:
        cells = []
        for result in results:
            value = f"{result.ratios()[target.key]:.2f}{target.unit}"
            verdict = result.verdicts()[target.key]
            if verdict is None:
                cells.append(f"[dim]{value}[/]")
            else:
                cells.append(f"{value} [green]pass[/]" if verdict else f"{value} [red]miss[/]")
        table.add_row(target.label, f"≤ {target.limit:g}{target.unit}", *cells)
    return table


def report(
    results: list[SizeResult], repeats: int, started: datetime, manager_s: float
) -> dict[str, Any]:
    return {
        "meta": {
            "started": started.isoformat(timespec="seconds"),
            "repeats": repeats,
            "kathara_manager_s": manager_s,
            "exec_samples": EXEC_SAMPLES,
            "cli_exec_samples": CLI_EXEC_SAMPLES,
            "image": device_image(),
            "docker_engine": docker_client().version().get("Version"),
            "kathara": version("kathara"),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
        },
        "targets": [{**asdict(t), "sizes": sorted(t.sizes) if t.sizes else None} for t in TARGETS],
        "results": {
            str(result.devices): {
                "devices": result.devices,
                "median": result.medians(),
                "ratios": result.ratios(),
                "verdicts": result.verdicts(),
                "runs": {
                    "netdojo": [asdict(run) for run in result.netdojo],
                    "kathara_cli": [asdict(run) for run in result.kathara_cli],
                    "docker_floor": [asdict(run) for run in result.docker_floor],
                },
            }
            for result in results
        },
    }


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
