"""Scenario generation benchmark: instances per second per family and level, this tree against a
baseline revision, both measured the same way in the same run.

The baseline is checked out with ``git worktree add`` into a temporary folder (removed at the
end). Each side runs in a subprocess of its own that finds ``netdojo`` and its packages in its
tree, in the folders that tree's ``pyproject.toml`` maps them to, so the baseline's code runs
whatever netdojo is installed. Both sides generate the same instances (families x levels x
seeds 1..N), after one warm-up instance per family, timed per family and level in CPU time
(the process's own, so other work on the machine does not count); they take turns for each
repeat and the median time of each cell is kept. The sha256 of every instance's
JSON must be the same on both sides: the benchmark exits 1 when one differs. Results go to
``benchmarks/out/generation-<time>.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.machinery
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Sequence
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType
from typing import Any

from rich.console import Console

from _output import Column, rows_table, save

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "b69a9cd5a2468d6b4b216825a46200da17cf232c"
"""The last revision before scenario generation was sped up."""
Cell = tuple[str, int]  # (family, level)


class TreeFinder(MetaPathFinder):
    """Finds ``netdojo`` and every package under it in one tree, as its ``pyproject.toml`` maps
    packages to folders; a module that tree lacks is missing, never taken from elsewhere."""

    def __init__(self, root: Path) -> None:
        setuptools = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
        self.folders = {name: root / folder for name, folder in setuptools["package-dir"].items()}

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname in self.folders:
            folder = self.folders[fullname]
            return importlib.util.spec_from_file_location(
                fullname, folder / "__init__.py", submodule_search_locations=[str(folder)]
            )
        if not fullname.startswith("netdojo."):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        return spec


def measure(root: Path, families: list[str], levels: list[int], seeds: int) -> dict[str, Any]:
    """Generate every instance with the code of ``root``: seconds and digests per cell."""
    sys.meta_path.insert(0, TreeFinder(root))
    from netdojo.scenarios import registry
    from netdojo.scenarios.generate import generate

    for family in families:
        generate(family, registry.family(family).levels[0], 0)
    cells = []
    for family in families:
        for level in levels:
            started = time.process_time()
            made = [generate(family, level, seed) for seed in range(1, seeds + 1)]
            seconds = time.process_time() - started
            digests = [hashlib.sha256(s.model_dump_json().encode()).hexdigest() for s in made]
            cells.append({"family": family, "level": level, "seconds": seconds, "digests": digests})
    return {"cells": cells}


def run_side(root: Path, args: argparse.Namespace) -> dict[Cell, dict[str, Any]]:
    argv = [sys.executable, __file__, "--measure", str(root), "--families", ",".join(args.families)]
    argv += ["--levels", ",".join(map(str, args.levels)), "--seeds", str(args.seeds)]
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"measuring {root} failed:\n{done.stderr[-3000:]}")
    cells = json.loads(done.stdout)["cells"]
    return {(cell["family"], cell["level"]): cell for cell in cells}


def checkout(revision: str, folder: Path) -> None:
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(folder), revision],
        check=True,
        capture_output=True,
    )


def routed_reactive_families() -> list[str]:
    from netdojo.scenarios import registry

    found = registry.families().items()
    return [name for name, spec in found if spec.kind == "reactive" and spec.build is None]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--baseline", default=BASELINE, help="git revision to compare against")
    parser.add_argument(
        "--families",
        type=lambda text: text.split(","),
        help="comma-separated families (default: every reactive family drawn on a network)",
    )
    parser.add_argument(
        "--levels", type=lambda text: [int(x) for x in text.split(",")], default=[1, 2, 3]
    )
    parser.add_argument("--seeds", type=int, default=10, help="seeds 1..N per family and level")
    parser.add_argument("--repeats", type=int, default=3, help="runs per side; medians kept")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)  # a side's subprocess
    return parser.parse_args()


def main() -> int:
    args = parse_args()
    if args.measure is not None:
        print(json.dumps(measure(args.measure, args.families, args.levels, args.seeds)))
        return 0
    args.families = args.families or routed_reactive_families()
    console = Console()
    runs: dict[str, list[dict[Cell, dict[str, Any]]]] = {"baseline": [], "current": []}
    with tempfile.TemporaryDirectory() as tmp:
        baseline = Path(tmp) / "baseline"
        checkout(args.baseline, baseline)
        try:
            for repeat in range(1, args.repeats + 1):
                for side, root in (("baseline", baseline), ("current", ROOT)):
                    started = time.perf_counter()
                    runs[side].append(run_side(root, args))
                    took = time.perf_counter() - started
                    console.print(f"[dim]run {repeat}/{args.repeats}: {side} {took:.1f}s[/]")
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(baseline)],
                check=False,
                capture_output=True,
            )
    rows, differing, compared = [], [], 0
    for cell in runs["current"][0]:
        family, level = cell
        before = statistics.median(run[cell]["seconds"] for run in runs["baseline"])
        after = statistics.median(run[cell]["seconds"] for run in runs["current"])
        digests = {tuple(run[cell]["digests"]) for side in runs.values() for run in side}
        compared += args.seeds
        if len(digests) != 1:
            differing.append(f"{family} level {level}")
        rows.append(
            {
                "family": family,
                "level": level,
                "baseline_per_s": args.seeds / before,
                "current_per_s": args.seeds / after,
                "baseline_s": before,
                "current_s": after,
                "ratio": before / after,
            }
        )
    per_s = Column("", "", lambda v: f"{v:.1f}")
    columns = [
        Column("family", "family"),
        Column("level", "level"),
        Column("baseline /s", "baseline_per_s", per_s.cell),
        Column("current /s", "current_per_s", per_s.cell),
        Column("speed-up", "ratio", lambda v: f"{v:.2f}x"),
    ]
    title = f"Instances per second, {args.seeds} seeds per cell, median of {args.repeats} runs"
    console.print(rows_table(title, columns, rows))
    before_s = sum(row["baseline_s"] for row in rows)
    after_s = sum(row["current_s"] for row in rows)
    console.print(
        f"all {compared} instances: baseline {compared / before_s:.1f}/s, "
        f"current {compared / after_s:.1f}/s, speed-up {before_s / after_s:.2f}x "
        f"(baseline {args.baseline[:12]})"
    )
    if differing:
        console.print(f"[red]instances differ from the baseline's:[/] {', '.join(differing)}")
    else:
        console.print(f"digests: all {compared} instances identical to the baseline's")
    summary = {"baseline": args.baseline, "seeds": args.seeds, "repeats": args.repeats}
    path = save("generation", {**summary, "rows": rows, "differing": differing})
    console.print(f"results: {path}")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
