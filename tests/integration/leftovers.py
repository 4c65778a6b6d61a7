"""What a lab can leave behind on the host: containers, networks, bridges, iptables rules.

Labs of other live processes (another test run, someone's `netdojo run` on the same machine)
are not ours to count: objects whose owner is alive and is neither this process nor one of its
children are left out, with their bridges and rules.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

import docker

from netdojo.labs.kathara_backend import OWNER_LABEL
from netdojo.labs.owners import owner_alive, parse_owner
from netdojo.labs.reaper import netdojo_labs


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return int(stat.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _ours(pid: int) -> bool:
    here = os.getpid()
    seen = 0
    current: int | None = pid
    while current and seen < 64:
        if current == here:
            return True
        current, seen = _parent(current), seen + 1
    return False


def _ours_tag(tag: str) -> bool:
    """Whether the tag names this process or one of its children (a process of a container
    is another's)."""
    owner = parse_owner(tag)
    return owner is not None and owner.container is None and _ours(owner.pid)


def _foreign(labels: dict[str, Any]) -> bool:
    """Owned by a live process outside this test run."""
    owner = str(labels.get(OWNER_LABEL) or "")
    return parse_owner(owner) is not None and owner_alive(owner) and not _ours_tag(owner)


def our_labs() -> set[str]:
    """The names of the labs this process or one of its live children owns (a test's own,
    whatever other processes deploy meanwhile)."""
    return {lab.name for lab in netdojo_labs() if _ours_tag(lab.owner)}


def still_there(names: set[str]) -> set[str]:
    """Those of ``names`` that still have a container or a network."""
    return {lab.name for lab in netdojo_labs()} & names


def leftovers() -> dict[str, set[str]]:
    client = docker.from_env()
    try:
        selector = {"label": "app=kathara"}
        # One listing call each (no per-object inspect), so labs coming and going cannot race it.
        listed = client.api.containers(all=True, filters=selector)
        nets = client.api.networks(filters=selector)
    finally:
        client.close()
    containers = {c["Names"][0].lstrip("/") for c in listed if not _foreign(c["Labels"] or {})}
    networks = {n["Name"] for n in nets if not _foreign(n["Labels"] or {})}
    others = {f"kt-{n['Id'][:12]}" for n in nets if _foreign(n["Labels"] or {})}
    bridges = {
        p.name
        for p in Path("/sys/class/net").iterdir()
        if p.name.startswith("kt-") and p.name not in others
    }
    rules = "".join(
        subprocess.run(
            ["iptables", "-w", "-t", table, "-S"], capture_output=True, text=True, check=True
        ).stdout
        for table in ("filter", "raw", "nat")
    )
    return {
        "containers": containers,
        "networks": networks,
        "bridges": bridges,
        "rules": {
            line
            for line in rules.splitlines()
            if " kt-" in line and not any(f" {bridge} " in f"{line} " for bridge in others)
        },
    }


def new_since(before: dict[str, set[str]], settle_s: float = 3.0) -> dict[str, set[str]]:
    """What appeared since ``before`` and is still there ``settle_s`` later (a lab of another
    process being deployed or torn down meanwhile has bridges without a network for a moment).
    """
    first = _diff(before)
    if not first:
        return first
    time.sleep(settle_s)
    second = _diff(before)
    both = {kind: first[kind] & second.get(kind, set()) for kind in first}
    return {kind: items for kind, items in both.items() if items}


def _diff(before: dict[str, set[str]]) -> dict[str, set[str]]:
    now = leftovers()
    return {kind: items - before[kind] for kind, items in now.items() if items - before[kind]}
