"""What a lab can leave behind on the host: containers, networks, bridges, iptables rules."""

from __future__ import annotations

import subprocess
from pathlib import Path

import docker


def leftovers() -> dict[str, set[str]]:
    client = docker.from_env()
    try:
        selector = {"label": "app=kathara"}
        containers = {c.name for c in client.containers.list(all=True, filters=selector)}
        networks = {n.name for n in client.networks.list(filters=selector)}
    finally:
        client.close()
    bridges = {p.name for p in Path("/sys/class/net").iterdir() if p.name.startswith("kt-")}
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
        "rules": {line for line in rules.splitlines() if " kt-" in line},
    }


def new_since(before: dict[str, set[str]]) -> dict[str, set[str]]:
    now = leftovers()
    return {kind: items - before[kind] for kind, items in now.items() if items - before[kind]}
