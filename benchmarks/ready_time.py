"""Ready-time benchmark: how long each family takes to hand an agent a staged instance, against
the static-routing family of the same size in the same run.

Ready time is everything before the agent's first call, as the judge runs it: the lab's deploy
(with its startup chains), the baseline (routing converged, every target and guard passing),
the injection and the checks that the fault is present and symptomatic. For each family and
level a faulted instance is drawn (the first seed from ``--seed`` that is not a healthy
control), and a static-routing instance with as many devices at the same level is staged right
after it, so both see the same machine. The ratio family/static (target: no family above 2x
without a stated reason) is printed per instance, with the stage times behind it. Results go to
``benchmarks/out/ready_time-<time>.json``.

    python benchmarks/ready_time.py --families rip-routing,isis-adjacency --levels 1,3
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import anyio
from rich.console import Console
from rich.progress import Progress

from _output import Column, rows_table, save
from netdojo.judges.staging import StageResult, stage_scenario
from netdojo.labs.runtime import deploy_lab
from netdojo.scenarios import registry
from netdojo.scenarios.generate import generate
from netdojo.scenarios.healthy import is_healthy_control
from netdojo.scenarios.model import PLANNING_TOOLS, Scenario

BASELINE = "static-routing"
TARGET_RATIO = 2.0
SEARCH = 400
"""Seeds searched for a static-routing instance of the same size."""
console = Console(width=140)


def faulted_seed(family: str, level: int, first: int) -> int:
    """The first seed from ``first`` whose instance is not a healthy control."""
    seed = first
    while is_healthy_control(family, level, seed):
        seed += 1
    return seed


def matching_baseline(level: int, devices: int) -> Scenario:
    """A faulted static-routing instance at ``level`` with ``devices`` devices, or the
    nearest size when none is found among the first seeds."""
    best: Scenario | None = None
    for seed in range(1, SEARCH):
        if is_healthy_control(BASELINE, level, seed):
            continue
        scenario = generate(BASELINE, level, seed)
        size = len(scenario.hidden.lab.devices)
        if size == devices:
            return scenario
        if best is None or abs(size - devices) < abs(len(best.hidden.lab.devices) - devices):
            best = scenario
    assert best is not None
    return best


async def ready(scenario: Scenario) -> dict[str, Any]:
    """Deploy and stage ``scenario`` as the judge does; each stage's seconds and the total."""
    stages: dict[str, StageResult] = {}
    started = time.monotonic()
    async with deploy_lab(scenario.hidden.lab) as lab:
        deployed = time.monotonic() - started
        staged = await stage_scenario(scenario, lab, stages)
        total = time.monotonic() - started
    return {
        "id": scenario.id,
        "devices": len(scenario.hidden.lab.devices),
        "ok": staged is not None,
        "ready_s": round(total, 2),
        "stages": {"deploy": round(deployed, 2)} | {k: v.seconds for k, v in stages.items()},
        "detail": "; ".join(v.detail for v in stages.values() if not v.ok),
    }


async def measure(families: list[str], levels: list[int], first: int) -> list[dict[str, Any]]:
    rows = []
    with Progress(console=console, transient=True) as progress:
        jobs = [(f, lv) for f in families for lv in levels if lv in registry.family(f).levels]
        task = progress.add_task("staging", total=len(jobs))
        for family, level in jobs:
            progress.update(task, description=f"{family} L{level}")
            scenario = generate(family, level, faulted_seed(family, level, first))
            own = await ready(scenario)
            base = await ready(matching_baseline(level, own["devices"]))
            ratio = own["ready_s"] / base["ready_s"] if base["ready_s"] else float("nan")
            rows.append(
                {
                    "family": family,
                    "level": level,
                    "devices": own["devices"],
                    "ready_s": own["ready_s"],
                    "static_devices": base["devices"],
                    "static_s": base["ready_s"],
                    "ratio": round(ratio, 2),
                    "within": ratio <= TARGET_RATIO,
                    "own": own,
                    "static": base,
                }
            )
            progress.advance(task)
    return rows


def _stages(row: dict[str, Any]) -> str:
    return " ".join(f"{k} {v:g}" for k, v in row["own"]["stages"].items())


COLUMNS = [
    Column("family", "family"),
    Column("level", "level"),
    Column("devices", "devices"),
    Column("ready s", "ready_s"),
    Column("static (devices)", "static_s"),
    Column("ratio", "ratio"),
    Column(f"within {TARGET_RATIO:g}x", "within", lambda ok: "yes" if ok else "NO"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--families", help="comma-separated; default every family with a lab")
    parser.add_argument("--levels", default="1,3", help="comma-separated levels")
    parser.add_argument("--seed", type=int, default=1, help="first seed tried per family")
    args = parser.parse_args()
    chosen = (
        args.families.split(",")
        if args.families
        else [n for n, f in registry.families().items() if f.tools != PLANNING_TOOLS]
    )
    levels = [int(x) for x in args.levels.split(",")]
    rows = anyio.run(measure, chosen, levels, args.seed)
    shown = [row | {"static_s": f"{row['static_s']} ({row['static_devices']})"} for row in rows]
    console.print(rows_table("ready time against static routing", COLUMNS, shown))
    for row in rows:
        console.print(f"{row['family']} L{row['level']}: {_stages(row)}")
        if not row["own"]["ok"]:
            console.print(f"  not staged: {row['own']['detail']}")
    console.print(f"saved {save('ready_time', rows)}")


if __name__ == "__main__":
    main()
