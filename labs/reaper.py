"""Find netdojo's labs in Docker and remove those whose owner process is gone.

Docker is the source of truth: every container and network of a netdojo lab carries the
owner label, so leftovers are found after any crash. Labs of live owners, persistent labs
and labs that netdojo did not create are never touched; an owner in a container (the green
agent's image) is checked through its container (`netdojo.labs.owners`). A lab is the objects
of one deployment: removing it removes exactly those, never others with the same Kathará lab
hash.
"""

from __future__ import annotations

import subprocess
import time
from collections import defaultdict
from pathlib import Path

from pydantic import BaseModel, Field

from netdojo.labs.deployment import remove_objects
from netdojo.labs.k8s.folders import remove_orphan_clusters
from netdojo.labs.kathara_backend import DEPLOY_LABEL, LAB_LABEL, OWNER_LABEL, docker_client
from netdojo.labs.owners import owner_alive
from netdojo.labs.paths import sub_dir
from netdojo.labs.ports import stop_relay

BRIDGE_PREFIX = "kt-"
ORPHAN_GRACE_S = 2.0


class LabInfo(BaseModel):
    name: str
    lab_hash: str
    deploy_id: str
    owner: str
    alive: bool
    devices: list[str]
    networks: int
    container_ids: list[str] = Field(default_factory=list, exclude=True)
    network_ids: list[str] = Field(default_factory=list, exclude=True)


class ReapReport(BaseModel):
    labs: list[str] = []
    containers: int = 0
    networks: int = 0
    bridges: list[str] = []
    rules: int = 0
    clusters: int = 0

    def line(self) -> str:
        clusters = f", {self.clusters} orphan cluster folder(s)" if self.clusters else ""
        return (
            f"reaped {len(self.labs)} lab(s) ({self.containers} containers, "
            f"{self.networks} networks), {len(self.bridges)} orphan bridge(s), "
            f"{self.rules} orphan rule(s){clusters}"
        )

    @property
    def empty(self) -> bool:
        return not (self.labs or self.bridges or self.rules or self.clusters)


def netdojo_labs() -> list[LabInfo]:
    """Every lab netdojo created that still has a container or a network, one per deployment."""
    client = docker_client()
    selector = {"label": [OWNER_LABEL, "app=kathara"]}
    devices: dict[tuple[str, str], list[str]] = defaultdict(list)
    containers: dict[tuple[str, str], list[str]] = defaultdict(list)
    networks: dict[tuple[str, str], list[str]] = defaultdict(list)
    meta: dict[tuple[str, str], tuple[str, str]] = {}
    # One listing call each, with no per-object inspect: other labs come and go meanwhile.
    for container in client.api.containers(all=True, filters=selector):
        labels = container["Labels"]
        key = (labels["lab_hash"], labels.get(DEPLOY_LABEL, ""))
        devices[key].append(labels["name"])
        containers[key].append(container["Id"])
        meta[key] = (labels.get(LAB_LABEL, ""), labels[OWNER_LABEL])
    for network in client.api.networks(filters=selector):
        labels = network.get("Labels") or {}
        key = (labels.get("lab_hash", ""), labels.get(DEPLOY_LABEL, ""))
        networks[key].append(network["Id"])
        meta.setdefault(key, (labels.get(LAB_LABEL, ""), labels[OWNER_LABEL]))
    return [
        LabInfo(
            name=name,
            lab_hash=key[0],
            deploy_id=key[1],
            owner=owner,
            alive=owner_alive(owner),
            devices=sorted(devices[key]),
            networks=len(networks[key]),
            container_ids=containers[key],
            network_ids=networks[key],
        )
        for key, (name, owner) in sorted(meta.items(), key=lambda item: item[1][0])
    ]


def remove_lab(info: LabInfo) -> None:
    """Remove the lab's relay, containers and networks: exactly the objects listed for it."""
    if info.deploy_id:
        stop_relay(info.deploy_id)
    remove_objects(info.container_ids, info.network_ids)
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
    report.clusters = remove_orphan_clusters()
    return report


LAB_CHAINS = (("filter", "FORWARD"), ("filter", "INPUT"), ("raw", "PREROUTING"))


def _lab_rules() -> list[tuple[str, str, list[str]]]:
    """Host rules naming a ``kt-`` bridge as input: (table, bridge, the rule's arguments)."""
    found = []
    for table, chain in LAB_CHAINS:
        listing = subprocess.run(
            ["iptables", "-w", "-t", table, "-S", chain], capture_output=True, text=True
        )
        for line in listing.stdout.splitlines():
            parts = line.split()
            if parts[:1] == ["-A"] and "-i" in parts:
                bridge = parts[parts.index("-i") + 1]
                if bridge.startswith(BRIDGE_PREFIX):
                    found.append((table, bridge, parts[1:]))
    return found


def _orphans() -> set[str]:
    """``kt-`` bridges, present or named by a rule, whose Docker network does not exist."""
    live = {n.id[:12] for n in docker_client().networks.list()}
    bridges = {p.name for p in Path("/sys/class/net").iterdir() if p.name.startswith(BRIDGE_PREFIX)}
    named = bridges | {bridge for _, bridge, _ in _lab_rules()}
    return {name for name in named if name[len(BRIDGE_PREFIX) :] not in live}


def _orphan_bridges() -> tuple[list[str], int]:
    """Remove ``kt-`` bridges and their host rules whose Docker network no longer exists.

    The network driver makes a bridge just before Docker lists its network, so a bridge counts
    as orphaned only when it is still without a network after a short grace: a lab being
    deployed meanwhile keeps its bridges.
    """
    suspects = _orphans()
    if not suspects:
        return [], 0
    time.sleep(ORPHAN_GRACE_S)
    orphans = suspects & _orphans()
    bridges = sorted(b for b in orphans if Path("/sys/class/net", b).exists())
    for bridge in bridges:
        subprocess.run(["ip", "link", "del", bridge], capture_output=True, check=False)
    rules = 0
    for table, bridge, rule in _lab_rules():
        if bridge in orphans:
            subprocess.run(["iptables", "-w", "-t", table, "-D", *rule], capture_output=True)
            rules += 1
    return bridges, rules
