"""The Docker engine: is a daemon answering, and start Debian's ``dockerd`` when none is."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import docker
from docker.errors import DockerException

from netdojo.labs.apt import apt_install
from netdojo.labs.errors import PrerequisiteError
from netdojo.labs.paths import sub_dir

SOCKET = Path("/var/run/docker.sock")
START_TIMEOUT_S = 60.0


def client(timeout: int = 120) -> docker.DockerClient:
    try:
        return docker.from_env(timeout=timeout)
    except DockerException as exc:
        raise PrerequisiteError(f"no Docker engine answers: {exc}; run `netdojo setup`") from None


def engine_version() -> str | None:
    """The daemon's version, or None when no daemon answers."""
    try:
        cli = docker.from_env(timeout=5)
        try:
            return str(cli.version().get("Version"))
        finally:
            cli.close()
    except DockerException:
        return None


def dockerd_binary() -> str | None:
    return shutil.which("dockerd") or (
        "/usr/sbin/dockerd" if Path("/usr/sbin/dockerd").exists() else None
    )


def start_dockerd() -> str:
    """Start ``dockerd`` in the background with a log and pid file; wait for its socket."""
    binary = dockerd_binary()
    if binary is None:
        raise PrerequisiteError("dockerd is missing")
    if os.geteuid() != 0:
        raise PrerequisiteError(f"the Docker daemon is not running; as root run: {binary} &")
    folder = sub_dir("dockerd")
    log_path = folder / "dockerd.log"
    pid_path = folder / "dockerd.pid"
    with log_path.open("ab") as log:
        proc = subprocess.Popen(
            [binary, "--pidfile", str(pid_path)],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log_path.read_text(errors="replace")[-1500:]
            raise PrerequisiteError(f"dockerd exited with {proc.returncode}; log tail:\n{tail}")
        if SOCKET.exists() and engine_version() is not None:
            return f"started dockerd (pid {proc.pid}, log {log_path})"
        time.sleep(0.2)
    raise PrerequisiteError(f"dockerd did not answer within {START_TIMEOUT_S:.0f}s; see {log_path}")


def ensure_engine() -> str:
    """Make a Docker daemon answer; returns a one-line account of what was done."""
    version = engine_version()
    if version is not None:
        return f"already running (Docker {version})"
    actions = []
    if dockerd_binary() is None:
        actions.append(apt_install("docker.io"))
    actions.append(start_dockerd())
    return "; ".join(actions)
