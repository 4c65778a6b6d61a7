"""The reaper removes labs whose owner died and never touches a live owner's lab."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from netdojo.labs.reaper import netdojo_labs
from netdojo.labs.runtime import LiveLab

from .leftovers import leftovers, new_since

NETDOJO = str(Path(sys.executable).parent / "netdojo")
ORPHAN_SCRIPT = """
import sys, anyio
from netdojo.labs.runtime import start_lab
from netdojo.labs.samples import ospf_ring

async def main():
    lab = await start_lab(ospf_ring(2, 1, name="orphan"))
    print(lab.name, flush=True)
    await anyio.sleep(600)

anyio.run(main)
"""


@pytest.mark.anyio
async def test_reap_removes_a_killed_owners_lab_only(triangle: LiveLab) -> None:
    before = leftovers()
    owner = subprocess.Popen(
        [sys.executable, "-c", ORPHAN_SCRIPT], stdout=subprocess.PIPE, text=True
    )
    try:
        assert owner.stdout is not None
        orphan = owner.stdout.readline().strip()
        assert orphan.startswith("orphan-"), "the owner process did not deploy its lab"
    finally:
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait()
    states = {info.name: info.alive for info in netdojo_labs()}
    assert states[orphan] is False
    assert states[triangle.name] is True

    reaped = subprocess.run([NETDOJO, "reap"], capture_output=True, text=True, timeout=120)
    assert reaped.returncode == 0, reaped.stderr
    assert orphan in reaped.stdout
    assert triangle.name not in reaped.stdout
    names = {info.name for info in netdojo_labs()}
    assert orphan not in names and triangle.name in names
    assert new_since(before) == {}
    still = await triangle.exec("r1", ["true"])
    assert still.ok
