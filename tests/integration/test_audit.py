"""The live audit: a rotating sample of families at each level, with seeds (and sampled
families) that change per run.

Set NETDOJO_AUDIT_SEED to replay a run; the seeds used are printed. A third of the families at
level 1 and a few at levels 2 and 3 (labs grow with the level: 6-12 routers at level 2, 15-30 at
level 3) keep the suite short while every family comes round over a few runs; `netdojo audit`
with no `--families` audits them all.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from netdojo.scenarios import registry

NETDOJO = str(Path(sys.executable).parent / "netdojo")
SAMPLE = {1: 0.3, 2: 3, 3: 1}  # families per level: a share of them, or a number


@pytest.mark.timeout(1800)
def test_audit_samples_every_family_and_level() -> None:
    run_seed = int(os.environ.get("NETDOJO_AUDIT_SEED", time.time_ns() % 2**31))
    rng = random.Random(run_seed)
    print(f"NETDOJO_AUDIT_SEED={run_seed}")
    records = []
    expected = 0
    for level in registry.LEVELS:
        seed = rng.randint(1, 10_000)
        names = sorted(registry.families())
        size = SAMPLE[level]
        count = round(size * len(names)) if isinstance(size, float) else size
        families = rng.sample(names, count)
        expected += len(families)
        done = subprocess.run(
            [NETDOJO, "audit", "--levels", str(level), "--seeds", str(seed),
             "--families", ",".join(families), "--concurrency", "2", "--json"],
            capture_output=True, text=True, timeout=1200,
        )  # fmt: skip
        report = json.loads(done.stdout)
        records += report["instances"]
        assert done.returncode == (0 if report["failed"] == 0 else 1)
    failed = [r for r in records if not r["ok"]]
    assert not failed, json.dumps(failed, indent=1)[:4000]
    assert len(records) == expected
    reactive = [
        "deploy", "baseline", "inject", "settle", "fault_active", "solve", "fixed", "integrity",
    ]  # fmt: skip
    constructive = ["deploy", "baseline", "unsolved", "solve", "fixed", "integrity"]
    healthy = ["deploy", "baseline", "solve", "fixed", "integrity"]  # nothing to inject
    for record in records:
        if record["healthy"]:
            expected = healthy
        elif registry.family(record["family"]).kind == "constructive":
            expected = constructive
        elif record["cascade"]:  # once the fault is seen, the masking fault repaired alone first
            expected = [*reactive[:5], "unmask", "unmasked", *reactive[5:]]
        else:
            expected = reactive
        assert list(record["stages"]) == expected


def test_a_bad_level_is_refused_with_the_valid_choices() -> None:
    done = subprocess.run(
        [NETDOJO, "audit", "--families", "static-routing", "--seeds", "1", "--levels", "9"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode != 0
    assert "levels are" in done.stderr
