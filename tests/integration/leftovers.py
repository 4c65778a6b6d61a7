"""What a lab can leave behind on the host: containers, networks, bridges, iptables rules."""

from __future__ import annotations

import subprocess
from pathlib import Path

import docker


def leftovers() -> dict[str, set[str]]:
    client = docker.from_env()
    try:
        selector = {"label": "app=kathara"}
        # One listing call each (no per-object inspect), so labs coming and going cannot race it.
        listed = client.api.containers(all=True, filters=selector)
        containers = {c["Names"][0].lstrip("/") for c in listed}
        networks = {n["Name"] for n in client.api.networks(filters=selector)}
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
