"""What this process holds on the host: its labs' containers, networks, bridges and rules, plus
its open file descriptors and resident memory, for soak runs and leak checks.

Other processes' labs are left out; bridges without any network (orphans, whoever made them)
are counted apart, since nobody should leave any.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import anyio
from pydantic import BaseModel

from netdojo.labs.kathara_backend import OWNER_LABEL, exec_client
from netdojo.labs.owners import owner_tag
from netdojo.labs.reaper import BRIDGE_PREFIX

RULE_TABLES = ("filter", "raw", "nat")


class Footprint(BaseModel):
    labs: int
    containers: int
    networks: int
    bridges: int
    rules: int
    orphan_bridges: int
    orphan_rules: int
    fds: int
    rss_mib: float

    @property
    def labs_left(self) -> int:
        """Objects of this process's labs still on the host."""
        return self.containers + self.networks + self.bridges + self.rules


def rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def footprint() -> Footprint:
    api = exec_client().api
    mine = {"label": f"{OWNER_LABEL}={owner_tag()}"}
    containers = api.containers(all=True, filters=mine)
    networks = api.networks(filters=mine)
    every_network = {n["Id"][:12] for n in api.networks()}
    present = {p.name for p in Path("/sys/class/net").iterdir()}
    ours = {f"{BRIDGE_PREFIX}{n['Id'][:12]}" for n in networks} & present
    orphans = {
        name
        for name in present
        if name.startswith(BRIDGE_PREFIX) and name[len(BRIDGE_PREFIX) :] not in every_network
    }
    rules = "".join(
        subprocess.run(
            ["iptables", "-w", "-t", table, "-S"], capture_output=True, text=True, check=True
        ).stdout
        for table in RULE_TABLES
    ).splitlines()
    hashes = {o["Labels"].get("lab_hash") for o in [*containers, *networks]}
    return Footprint(
        labs=len(hashes),
        containers=len(containers),
        networks=len(networks),
        bridges=len(ours),
        rules=_naming(rules, ours),
        orphan_bridges=len(orphans),
        orphan_rules=_naming(rules, orphans),
        fds=open_fds(),
        rss_mib=round(rss_mib(), 1),
    )


def _naming(rules: list[str], bridges: set[str]) -> int:
    return sum(any(f" {b} " in f"{line} " for b in bridges) for line in rules)


async def settled(deadline_s: float = 30.0) -> Footprint:
    """The footprint once this process's labs are gone, or as it is after ``deadline_s``."""
    deadline = time.monotonic() + deadline_s
    while True:
        now = await anyio.to_thread.run_sync(footprint)
        if now.labs_left == 0 or time.monotonic() > deadline:
            return now
        await anyio.sleep(1.0)
