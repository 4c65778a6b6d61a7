"""Driving `netdojo lab …` as a user does, and reading what Docker holds of a lab."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import docker

from netdojo.labs.kathara_backend import DEPLOY_LABEL, LAB_LABEL

NETDOJO = str(Path(sys.executable).parent / "netdojo")
WIDE = {**os.environ, "COLUMNS": "240"}
"""Rich wraps tables and lines at 80 columns when it writes to a pipe."""


def netdojo(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [NETDOJO, *args], capture_output=True, text=True, timeout=timeout, env=WIDE
    )


@contextmanager
def lab_up(folder: Path, name: str, *more: str) -> Iterator[subprocess.CompletedProcess[str]]:
    """`netdojo lab up FOLDER --name NAME`, taken down afterwards whatever happened."""
    try:
        yield netdojo("lab", "up", str(folder), "--name", name, *more)
    finally:
        netdojo("lab", "down", name)


@dataclass
class LabObjects:
    containers: dict[str, str] = field(default_factory=dict)  # id -> "device:state"
    networks: dict[str, str] = field(default_factory=dict)  # id -> link
    deployments: set[str] = field(default_factory=set)

    @property
    def empty(self) -> bool:
        return not (self.containers or self.networks)


def lab_objects(name: str) -> LabObjects:
    """The containers and networks labelled with the deployed lab name ``name``."""
    client = docker.from_env()
    try:
        selector = {"label": [f"{LAB_LABEL}={name}"]}
        containers = client.api.containers(all=True, filters=selector)
        networks = client.api.networks(filters=selector)
    finally:
        client.close()
    return LabObjects(
        containers={c["Id"]: f"{c['Labels']['name']}:{c['State']}" for c in containers},
        networks={n["Id"]: n["Labels"]["name"] for n in networks},
        deployments={o["Labels"][DEPLOY_LABEL] for o in [*containers, *networks]},
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def write_lab(root: Path, files: dict[str, str]) -> Path:
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return root
