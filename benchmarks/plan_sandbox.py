"""Capacity-planning benchmark, on a level-3 model in its planner device.

sandbox     one run of the `python` tool's sandbox (unprivileged user, limits, clean
            environment) against a bare ``python3 -c`` in the same device, for a trivial
            program and for one that loads the model into networkx; median over ``--runs``
judge       the three planning checks of a submitted model (read, parse, canonical digest,
            invariants), median over ``--runs``; target under 1 s per query

Results go to ``benchmarks/out/plan_sandbox-<time>.json``. The lab is removed in a ``finally``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from rich.console import Console

from _output import Column, rows_table, save
from netdojo import __version__
from netdojo.judges.checks import run_tests
from netdojo.labs.runtime import LiveLab, start_lab, stop_lab
from netdojo.scenarios.capacity.lab import PLANNER
from netdojo.scenarios.generate import generate
from netdojo.scenarios.hidden_tests import PlanAnswerTest
from netdojo.tools.python_code import run_code, sandboxed

FAMILY = "capacity-planning"
JUDGE_TARGET_S = 1.0
TRIVIAL = "print(1)"
LOADING = (
    "import json, networkx as nx\n"
    "m = json.load(open('model.json'))\n"
    "g = nx.DiGraph()\n"
    "g.add_nodes_from((e['name'], e) for e in m['entities'])\n"
    "g.add_edges_from((r['source'], r['target']) for r in m['relations'])\n"
    "print(g.number_of_nodes())\n"
)
console = Console(width=120)


async def _median(runs: int, once: Callable[[], Awaitable[Any]]) -> float:
    seconds = []
    for _ in range(runs):
        started = time.perf_counter()
        await once()
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds)


async def _sandbox_rows(lab: LiveLab, runs: int) -> list[dict[str, Any]]:
    rows = []
    for name, code in (("trivial", TRIVIAL), ("load model", LOADING)):
        bare = await _median(runs, lambda c=code: lab.exec(PLANNER, ["python3", "-c", c], 60))
        boxed = await _median(runs, lambda c=code: run_code(lab, c, 60, 64 * 1024))
        rows.append({"program": name, "bare_s": bare, "sandbox_s": boxed, "ratio": boxed / bare})
    return rows


async def main(seed: int, runs: int) -> None:
    scenario = generate(FAMILY, 3, seed)
    lab = await start_lab(scenario.hidden.lab)
    try:
        rows = await _sandbox_rows(lab, runs)
        solution = scenario.hidden.solution
        for call in solution:
            done = await run_code(lab, call.arguments["code"], 60, 64 * 1024)
            assert done.ok, done.stderr
        tests = [t for t in scenario.hidden.targets + scenario.hidden.guards]
        judged = await _median(runs, lambda: run_tests(lab, tests, None))
        answers = sum(isinstance(t, PlanAnswerTest) for t in tests)
    finally:
        await stop_lab(lab)
    console.print(
        rows_table(
            f"Sandbox round trip, level-3 model ({len(sandboxed('', 1))} words of wrapper)",
            [
                Column("program", "program"),
                Column("bare python3", "bare_s", lambda v: f"{v:.3f}s"),
                Column("sandbox", "sandbox_s", lambda v: f"{v:.3f}s"),
                Column("ratio", "ratio", lambda v: f"{v:.2f}x"),
            ],
            rows,
        )
    )
    console.print(
        f"judge: {judged:.3f}s for {len(tests)} checks ({answers} answer) of a level-3 model "
        f"(target under {JUDGE_TARGET_S:g}s)"
    )
    path = save(
        "plan_sandbox",
        {"version": __version__, "seed": seed, "runs": runs, "sandbox": rows, "judge_s": judged},
    )
    console.print(f"saved {path}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    anyio.run(main, args.seed, args.runs)
