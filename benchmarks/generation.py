"""Scenario generation benchmark: instances per second per family and level, this tree against a
baseline revision, both measured the same way in the same run.

The baseline is checked out with ``git worktree add`` into a temporary folder (removed at the
end). Each side is a worker process of its own that finds ``netdojo`` and its packages in its
tree, in the folders that tree's ``pyproject.toml`` maps them to, so the baseline's code runs
whatever netdojo is installed. Both workers generate one instance per family to warm up, then
the same cells (a family at a level, seeds 1..N), the two sides one right after the other for
each cell, in turn first, so that whatever else the machine does weighs on both alike. A cell's
time is the worker's own CPU time; each cell is measured ``--repeats`` times and the least time
kept, as other work only ever adds to it. The sha256 of every instance's JSON must be the same on
both sides: the benchmark exits 1 when one differs. Results go to
``benchmarks/out/generation-<time>.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.machinery
import importlib.util
import json
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
SIDES = ("baseline", "current")


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


def serve(root: Path) -> None:
    """A side's worker: generate with the code of ``root`` what each line of standard input
    asks (JSON: ``family``, ``level``, ``seeds``; or ``warm``: families), and answer each with a
    line: the CPU seconds the instances took and their digests."""
    sys.meta_path.insert(0, TreeFinder(root))
    from netdojo.scenarios import registry
    from netdojo.scenarios.generate import generate

    for line in sys.stdin:
        asked = json.loads(line)
        if "warm" in asked:
            for family in asked["warm"]:
                generate(family, registry.family(family).levels[0], 0)
            answer: dict[str, Any] = {}
        else:
            seeds = range(1, asked["seeds"] + 1)
            started = time.process_time()
            made = [generate(asked["family"], asked["level"], seed) for seed in seeds]
            seconds = time.process_time() - started
            digests = [hashlib.sha256(s.model_dump_json().encode()).hexdigest() for s in made]
            answer = {"seconds": seconds, "digests": digests}
        print(json.dumps(answer), flush=True)


class Worker:
    """A side's worker process, asked one request at a time."""

    def __init__(self, root: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            _, err = self.process.communicate()
            raise SystemExit(f"a worker failed:\n{err[-3000:]}")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.communicate()


def checkout(revision: str, folder: Path) -> None:
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(folder), revision],
        check=True,
        capture_output=True,
    )


def measure(roots: dict[str, Path], args: argparse.Namespace, console: Console) -> list[Any]:
    """Every cell on both sides: per cell, the least CPU seconds of each side and whether the
    digests agree."""
    workers = {side: Worker(root) for side, root in roots.items()}
    try:
        for worker in workers.values():
            worker.ask({"warm": args.families})
        rows = []
        for number, (family, level) in enumerate(
            (family, level) for family in args.families for level in args.levels
        ):
            best = dict.fromkeys(SIDES, float("inf"))
            digests = set()
            for repeat in range(args.repeats):
                for side in SIDES if (number + repeat) % 2 == 0 else reversed(SIDES):
                    answer = workers[side].ask(
                        {"family": family, "level": level, "seeds": args.seeds}
                    )
                    best[side] = min(best[side], answer["seconds"])
                    digests.add(tuple(answer["digests"]))
            rows.append((family, level, best, len(digests) == 1))
            console.print(
                f"[dim]{family} level {level}: {best['baseline'] / best['current']:.2f}x[/]"
            )
        return rows
    finally:
        for worker in workers.values():
            worker.close()


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
    parser.add_argument("--repeats", type=int, default=3, help="runs of each cell; least kept")
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)  # a side's worker
    return parser.parse_args()


def main() -> int:
    args = parse_args()
    if args.serve is not None:
        serve(args.serve)
        return 0
    args.families = args.families or routed_reactive_families()
    console = Console()
    with tempfile.TemporaryDirectory() as tmp:
        baseline = Path(tmp) / "baseline"
        checkout(args.baseline, baseline)
        try:
            measured = measure({"baseline": baseline, "current": ROOT}, args, console)
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(baseline)],
                check=False,
                capture_output=True,
            )
    rows = [
        {
            "family": family,
            "level": level,
            "baseline_per_s": args.seeds / best["baseline"],
            "current_per_s": args.seeds / best["current"],
            "baseline_s": best["baseline"],
            "current_s": best["current"],
            "ratio": best["baseline"] / best["current"],
            "identical": identical,
        }
        for family, level, best, identical in measured
    ]
    per_s = Column("", "", lambda v: f"{v:.1f}")
    columns = [
        Column("family", "family"),
        Column("level", "level"),
        Column("baseline /s", "baseline_per_s", per_s.cell),
        Column("current /s", "current_per_s", per_s.cell),
        Column("speed-up", "ratio", lambda v: f"{v:.2f}x"),
    ]
    title = f"Instances per second, {args.seeds} seeds per cell, least of {args.repeats} runs"
    console.print(rows_table(title, columns, rows))
    compared = args.seeds * len(rows)
    before_s = sum(row["baseline_s"] for row in rows)
    after_s = sum(row["current_s"] for row in rows)
    console.print(
        f"all {compared} instances: baseline {compared / before_s:.1f}/s, "
        f"current {compared / after_s:.1f}/s, speed-up {before_s / after_s:.2f}x "
        f"(baseline {args.baseline[:12]})"
    )
    differing = [f"{row['family']} level {row['level']}" for row in rows if not row["identical"]]
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
