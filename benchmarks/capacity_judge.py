"""Capacity judge benchmark: what judging a written-back level-3 plan model costs.

For a few seeds it draws a level-3 capacity task and writes its expected model as an agent
might (entities and relations shuffled, indented), with one port's capacity changed. It then
times, per seed: ``json.loads`` of that text (the floor: reading it at all), parsing it into a
`PlanModel`, the invariants check, the digests of both models, and `compare`. It prints the
medians and the judge's total (parse + invariants + digests + compare) as a ratio to the floor.
Results go to ``benchmarks/out/capacity_judge-<time>.json``. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console

from _output import Column, rows_table, save
from netdojo import __version__
from netdojo.scenarios.capacity import (
    PlanModel,
    broken_invariants,
    compare,
    digest,
    draw_task,
)

STAGES = ("floor", "parse", "invariants", "digests", "compare")


def _written_back(model: PlanModel, capacity_attr: str, rng: random.Random) -> str:
    data = json.loads(model.to_json())
    rng.shuffle(data["entities"])
    rng.shuffle(data["relations"])
    port = next(e for e in data["entities"] if capacity_attr in e["attrs"])
    port["attrs"][capacity_attr] *= 4
    return json.dumps(data, indent=2)


def _timed(run: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = run()
    return time.perf_counter() - start, result


def measure(seed: int) -> dict[str, Any]:
    task = draw_task(3, random.Random(seed))
    expected, schema = task.expected_model, task.plan_schema
    text = _written_back(expected, schema.capacity_attr, random.Random(seed))
    row: dict[str, Any] = {
        "seed": seed,
        "entities": len(expected.entities),
        "mib": len(text) / 2**20,
    }
    row["floor"], _ = _timed(lambda: json.loads(text))
    row["parse"], given = _timed(lambda: PlanModel.from_json(text))
    row["invariants"], problems = _timed(lambda: broken_invariants(given, schema))
    row["digests"], (a, b) = _timed(lambda: (digest(expected), digest(given)))
    row["compare"], lines = _timed(lambda: compare(expected, given))
    assert not problems and a != b and len(lines) == 1, (problems, lines)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=5, help="how many seeds (from 1)")
    args = parser.parse_args()
    rows = [measure(seed) for seed in range(1, args.seeds + 1)]
    medians = {stage: statistics.median(row[stage] for row in rows) for stage in STAGES}
    judge = sum(medians[stage] for stage in STAGES[1:])
    seconds = Column("", "", lambda v: f"{v * 1000:.0f} ms")
    columns = [Column("seed", "seed"), Column("entities", "entities")]
    columns += [Column(f"{stage}", stage, seconds.cell) for stage in STAGES]
    console = Console()
    console.print(rows_table("Judging a level-3 plan model", columns, rows))
    console.print(
        "medians: "
        + ", ".join(f"{stage} {medians[stage] * 1000:.0f} ms" for stage in STAGES)
        + f"; judge total {judge * 1000:.0f} ms = {judge / medians['floor']:.1f} x the floor"
    )
    path = save(
        "capacity_judge",
        {"version": __version__, "rows": rows, "medians": medians, "judge_s": judge},
    )
    console.print(f"results: {path}")


if __name__ == "__main__":
    main()
