"""Installing Debian packages the machine lacks (root only; otherwise say what to run)."""

from __future__ import annotations

import os
import subprocess

from netdojo.labs.errors import PrerequisiteError


def apt_install(*packages: str) -> str:
    command = f"apt-get update && apt-get install -y {' '.join(packages)}"
    if os.geteuid() != 0:
        raise PrerequisiteError(f"{', '.join(packages)} missing; as root run: {command}")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for argv in (["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", *packages]):
        done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise PrerequisiteError(f"{' '.join(argv)} failed:\n{done.stderr[-2000:]}")
    return f"installed {', '.join(packages)}"
