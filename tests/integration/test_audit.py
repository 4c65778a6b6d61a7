"""`netdojo audit` on the command line (the audit of every family runs in
`test_every_family.py`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

NETDOJO = str(Path(sys.executable).parent / "netdojo")


def test_a_bad_level_is_refused_with_the_valid_choices() -> None:
    done = subprocess.run(
        [NETDOJO, "audit", "--families", "static-routing", "--seeds", "1", "--levels", "9"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode != 0
    assert "levels are" in done.stderr


def test_an_audit_on_the_command_line_reports_each_instance_as_json() -> None:
    done = subprocess.run(
        [NETDOJO, "audit", "--families", "static-routing", "--seeds", "1", "--json"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["failed"] == 0, done.stdout[-2000:]
    (record,) = report["instances"]
    assert (record["family"], record["level"], record["seed"]) == ("static-routing", 1, 1)
    assert record["ok"] and "fixed" in record["stages"]
