"""What the lab lifecycle benchmark makes of its runs: medians per lab size, ratios against
the targets, the tables it prints and the JSON document it writes."""

from __future__ import annotations

import os
import platform
import statistics
from dataclasses import asdict, dataclass, field
from datetime import datetime
from importlib.metadata import version
from typing import Any

from rich.table import Table

from _lifecycle_measures import CLI_EXEC_SAMPLES, EXEC_SAMPLES, CliRun, FloorRun, NetdojoRun
from netdojo.labs.image import device_image
from netdojo.labs.kathara_backend import docker_client


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


MEASUREMENTS: tuple[tuple[str, str, str, str], ...] = (
    ("netdojo", "deploy_s", "netdojo deploy (s)", "{:.2f}"),
    ("netdojo", "containers_s", "  of which networks and containers (s)", "{:.2f}"),
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
