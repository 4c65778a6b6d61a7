"""The lab lifecycle benchmark's three measurements of one lab: netdojo's lab runtime, the
Kathará CLI on the same lab written as a lab folder, and the Docker floor of bare containers.

Each removes whatever it created in ``finally`` blocks, Ctrl-C too.
"""

from __future__ import annotations

import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import anyio
from docker.models.containers import Container

from netdojo.labs.kathara_backend import docker_client
from netdojo.labs.kathara_lab import resolve_image
from netdojo.labs.kathara_settings import SETTINGS_FILE, settings_dir
from netdojo.labs.runtime import LiveLab, start_lab, stop_lab
from netdojo.labs.samples import host_address, ospf_converged
from netdojo.labs.spec import LabSpec

EXEC_SAMPLES = 30
CLI_EXEC_SAMPLES = 3
READY_DEADLINE_S = 180.0
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


def seconds_since(started: float) -> float:
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
        walls.append(seconds_since(started))
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
    deploy_s = seconds_since(started)
    try:
        ready_from = time.perf_counter()
        stage("netdojo: waiting for OSPF")
        converge_s = await lab.wait_until(ospf_converged, deadline_s=READY_DEADLINE_S)
        stage("netdojo: first ping h1 → h2")
        ping = _pings(host_address(spec, "h2"))
        ping_s = await lab.wait_until(ping, deadline_s=READY_DEADLINE_S, interval_s=0.05)
        ready_s = seconds_since(ready_from)
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
    elapsed = seconds_since(started)
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
        samples.append(seconds_since(started))
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
        run_s = seconds_since(started)
        stage("docker floor: exec_run")
        exec_run_ms = _exec_run_ms(ids[0])
        stage("docker floor: docker rm -f")
        started = time.perf_counter()
        _docker("rm", "-f", *ids)
        rm_s = seconds_since(started)
    finally:
        _remove_floor_containers()
    return FloorRun(run_s=run_s, exec_run_ms=exec_run_ms, rm_s=rm_s)
