"""The live audit: a sample of every family at levels 1 and 2 and of some at level 3, with
seeds (and level-3 families) that change per run.

Set NETDOJO_AUDIT_SEED to replay a run; the seeds used are printed. Level-3 labs have 15-30
routers, so each run audits a rotating sample of families there to keep the suite short.
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

from netdojo.scenarios.families import FAMILIES, LEVELS

NETDOJO = str(Path(sys.executable).parent / "netdojo")
LEVEL3_SAMPLE = 4


@pytest.mark.timeout(1800)
def test_audit_samples_every_family_and_level() -> None:
    run_seed = int(os.environ.get("NETDOJO_AUDIT_SEED", time.time_ns() % 2**31))
    rng = random.Random(run_seed)
    print(f"NETDOJO_AUDIT_SEED={run_seed}")
    records = []
    expected = 0
    for level in LEVELS:
        seed = rng.randint(1, 10_000)
        families = sorted(FAMILIES) if level < 3 else rng.sample(sorted(FAMILIES), LEVEL3_SAMPLE)
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
    reactive = ["deploy", "baseline", "inject", "fault_active", "solve", "fixed"]
    constructive = ["deploy", "baseline", "unsolved", "solve", "fixed"]
    for record in records:
        expected = constructive if FAMILIES[record["family"]].kind == "constructive" else reactive
        assert list(record["stages"]) == expected


def test_a_bad_level_is_refused_with_the_valid_choices() -> None:
    done = subprocess.run(
        [NETDOJO, "audit", "--families", "static-routing", "--seeds", "1", "--levels", "9"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode != 0
    assert "levels are" in done.stderr
