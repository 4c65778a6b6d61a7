"""Find netdojo's labs in Docker and remove those whose owner process is gone.

Docker is the source of truth: every container and network of a netdojo lab carries the
owner label, so leftovers are found after any crash. Labs of live owners, persistent labs
and labs that netdojo did not create are never touched.
"""

from __future__ import annotations

import subprocess
from collections import defaultdict
from pathlib import Path

from pydantic import BaseModel

from netdojo.labs.kathara_backend import LAB_LABEL, OWNER_LABEL, docker_client, manager, owner_alive
from netdojo.labs.paths import sub_dir

BRIDGE_PREFIX = "kt-"


class LabInfo(BaseModel):
    name: str
    lab_hash: str
    owner: str
    alive: bool
    devices: list[str]
    networks: int


class ReapReport(BaseModel):
    labs: list[str] = []
    containers: int = 0
    networks: int = 0
    bridges: list[str] = []
    rules: int = 0


def netdojo_labs() -> list[LabInfo]:
    """Every lab netdojo created that still has a container or a network."""
    client = docker_client()
    selector = {"label": [OWNER_LABEL, "app=kathara"]}
    devices: dict[str, list[str]] = defaultdict(list)
    networks: dict[str, int] = defaultdict(int)
    meta: dict[str, tuple[str, str]] = {}
    for container in client.containers.list(all=True, filters=selector):
        labels = container.labels
        devices[labels["lab_hash"]].append(labels["name"])
        meta[labels["lab_hash"]] = (labels.get(LAB_LABEL, ""), labels[OWNER_LABEL])
    for network in client.networks.list(filters=selector):
        labels = network.attrs.get("Labels") or {}
        lab_hash = labels.get("lab_hash", "")
        networks[lab_hash] += 1
        meta.setdefault(lab_hash, (labels.get(LAB_LABEL, ""), labels[OWNER_LABEL]))
    return [
        LabInfo(
            name=name,
            lab_hash=lab_hash,
            owner=owner,
            alive=owner_alive(owner),
            devices=sorted(devices[lab_hash]),
            networks=networks[lab_hash],
        )
        for lab_hash, (name, owner) in sorted(meta.items(), key=lambda item: item[1][0])
    ]


def remove_lab(info: LabInfo) -> None:
    """Undeploy a lab by hash, then remove any network Kathará left behind."""
    manager().undeploy_lab(lab_hash=info.lab_hash)
    selector = {"label": [OWNER_LABEL, f"lab_hash={info.lab_hash}"]}
    for network in docker_client().networks.list(filters=selector):
        network.remove()
    if info.name:
        (sub_dir("labs") / f"{info.name}.json").unlink(missing_ok=True)


def reap() -> ReapReport:
    report = ReapReport()
    for info in netdojo_labs():
        if info.alive:
            continue
        remove_lab(info)
        report.labs.append(info.name or info.lab_hash)
        report.containers += len(info.devices)
        report.networks += info.networks
    report.bridges, report.rules = _orphan_bridges()
    return report


LAB_CHAINS = (("filter", "FORWARD"), ("filter", "INPUT"), ("raw", "PREROUTING"))


def _orphan_bridges() -> tuple[list[str], int]:
    """Remove ``kt-`` bridges and their host rules whose Docker network no longer exists."""
    live = {n.id[:12] for n in docker_client().networks.list()}

    def orphan(name: str) -> bool:
        return name.startswith(BRIDGE_PREFIX) and name[len(BRIDGE_PREFIX) :] not in live

    bridges = [path.name for path in Path("/sys/class/net").iterdir() if orphan(path.name)]
    for bridge in bridges:
        subprocess.run(["ip", "link", "del", bridge], capture_output=True, check=False)
    rules = 0
    for table, chain in LAB_CHAINS:
        listing = subprocess.run(
            ["iptables", "-w", "-t", table, "-S", chain], capture_output=True, text=True
        )
        for line in listing.stdout.splitlines():
            parts = line.split()
            if parts[:1] == ["-A"] and "-i" in parts and orphan(parts[parts.index("-i") + 1]):
                subprocess.run(
                    ["iptables", "-w", "-t", table, "-D", *parts[1:]], capture_output=True
                )
                rules += 1
    return bridges, rules
