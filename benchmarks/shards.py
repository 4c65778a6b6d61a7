"""Shard benchmark: an assessment split into shards run at once, against the same assessment
run whole at the same concurrency, on this machine.

whole    ``netdojo run --concurrency N``: one process, N episodes at once
sharded  ``netdojo run --shard I/N`` for every I, the N processes at once, then ``netdojo merge``

Both run the same schedule (same seed); the ratio sharded/whole (target ≤ 1.1) is what running
shards as separate processes costs over one process. Every round runs both, in turn, in the
same conditions. Results go to ``benchmarks/out/shards-<time>.json``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console

from _output import Column, rows_table, save

NETDOJO = str(Path(sys.executable).parent / "netdojo")


def _run(argv: list[str]) -> None:
    done = subprocess.run([NETDOJO, *argv], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"netdojo {' '.join(argv)} failed:\n{done.stderr[-2000:]}")


def whole(config: list[str], shards: int, out: Path) -> float:
    started = time.monotonic()
    _run(["run", *config, "--concurrency", str(shards), "--out", str(out)])
    return time.monotonic() - started


def sharded(config: list[str], shards: int, out: Path) -> float:
    started = time.monotonic()
    folders = [out / f"shard-{index}" for index in range(shards)]
    processes = [
        subprocess.Popen(
            [NETDOJO, "run", *config, "--shard", f"{index}/{shards}", "--out", str(folder)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for index, folder in enumerate(folders)
    ]
    for process in processes:
        _, err = process.communicate()
        if process.returncode != 0:
            raise SystemExit(f"a shard failed:\n{err[-2000:]}")
    _run(["merge", *map(str, folders), "--out", str(out / "merged")])
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--agent", default="heuristic")
    parser.add_argument("--families", default="static-routing,ospf-adjacency")
    args = parser.parse_args()
    config = [
        "--agent", args.agent, "--families", args.families, "--levels", "1",
        "--episodes", str(args.episodes), "--seed", "11",
    ]  # fmt: skip
    console = Console()
    rows = []
    for index in range(args.rounds):
        with tempfile.TemporaryDirectory() as tmp:
            base = Path(tmp)
            one = whole(config, args.shards, base / "whole")
            split = sharded(config, args.shards, base / "sharded")
        rows.append({"round": index + 1, "whole_s": one, "sharded_s": split})
        console.print(f"round {index + 1}: whole {one:.1f}s, sharded {split:.1f}s")
    ratio = statistics.median(r["sharded_s"] / r["whole_s"] for r in rows)
    columns = [
        Column("round", "round"),
        Column("whole s", "whole_s", lambda v: f"{v:.1f}"),
        Column("sharded s", "sharded_s", lambda v: f"{v:.1f}"),
    ]
    title = f"{args.episodes} episodes, {args.shards} shards at once vs whole at concurrency"
    console.print(rows_table(title, columns, rows))
    console.print(f"median ratio sharded/whole: {ratio:.2f} (target ≤ 1.1)")
    path = save("shards", {"config": config, "shards": args.shards, "rows": rows, "ratio": ratio})
    console.print(f"results: {path}")


if __name__ == "__main__":
    main()
