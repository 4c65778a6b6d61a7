"""A Kathará lab folder written for the official images runs unchanged, from the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from .leftovers import leftovers, new_since

NETDOJO = str(Path(sys.executable).parent / "netdojo")
FIXTURE = Path(__file__).parent.parent / "fixtures" / "kathara_ospf"


def netdojo(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([NETDOJO, *args], capture_output=True, text=True, timeout=timeout)


def test_lab_up_exec_list_down() -> None:
    before = leftovers()
    name = "folder-test"
    try:
        up = netdojo("lab", "up", str(FIXTURE), "--name", name)
        assert up.returncode == 0, up.stdout + up.stderr
        listed = json.loads(netdojo("lab", "list", "--json").stdout)
        mine = next(info for info in listed if info["name"] == name)
        assert sorted(mine["devices"]) == ["pc1", "pc2", "r1", "r2", "r3"]
        assert mine["owner"] == "persistent" and mine["alive"]
        # The three startup idioms (systemctl, service, init.d) all started FRR.
        for router in ("r1", "r2", "r3"):
            ospfd = netdojo("lab", "exec", name, router, "--", "pgrep", "-x", "ospfd")
            assert ospfd.returncode == 0, f"{router}: ospfd not running"
        # `route add default gw` and `ifconfig` worked: pc1 reaches pc2 once OSPF converges.
        deadline = time.monotonic() + 60
        while True:
            ping = netdojo("lab", "exec", name, "pc1", "--", "ping", "-c", "1", "-W", "1",
                           "10.0.20.10")  # fmt: skip
            if ping.returncode == 0 or time.monotonic() > deadline:
                break
        assert ping.returncode == 0, ping.stdout + ping.stderr
        refused = netdojo("lab", "exec", name, "r7", "--", "true")
        assert refused.returncode != 0 and "r1" in refused.stderr
    finally:
        down = netdojo("lab", "down", name)
    assert down.returncode == 0, down.stderr
    assert new_since(before) == {}
