"""The virtual environment holding the A2A 0.3 SDK (the latest 0.3.x), apart from netdojo's own:
the tests run 0.3 clients and agents with its Python. Kept under netdojo's state folder and
made once: `make a2a-v0.3` (which `make test` runs), or `python -m tests.a2a_v0_3.env`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

from netdojo.labs.paths import state_dir

REQUIREMENTS = ["a2a-sdk[http-server]>=0.3.20,<0.4", "uvicorn>=0.30"]
HOME = state_dir() / "test-envs" / "a2a-sdk-0.3"
PYTHON = HOME / "bin" / "python"
MAKE_IT = "make a2a-v0.3 (make test runs it)"


def clean_env() -> dict[str, str]:
    """This process's environment without what points Python at netdojo's own packages."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


def sdk_version() -> str | None:
    """The a2a-sdk version in the environment, None without one."""
    if not PYTHON.exists():
        return None
    asked = subprocess.run(
        [str(PYTHON), "-c", "import importlib.metadata as m; print(m.version('a2a-sdk'))"],
        capture_output=True,
        text=True,
        timeout=60,
        env=clean_env(),
    )
    return asked.stdout.strip() if asked.returncode == 0 else None


def python() -> Path:
    """The environment's Python; a clear failure when it is missing."""
    version = sdk_version()
    if version is None or not version.startswith("0.3."):
        raise RuntimeError(f"the A2A 0.3 test environment is missing at {HOME}: {MAKE_IT}")
    return PYTHON


def ensure() -> str:
    """Make the environment unless it holds an 0.3 SDK already; what was done, in one line."""
    version = sdk_version()
    if version is not None and version.startswith("0.3."):
        return f"a2a-sdk 0.3 environment: skipped (a2a-sdk {version} at {HOME})"
    venv.EnvBuilder(clear=True, with_pip=True).create(HOME)
    pip = [str(PYTHON), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, *REQUIREMENTS], check=True, env=clean_env())
    return f"a2a-sdk 0.3 environment: done (a2a-sdk {sdk_version()} at {HOME})"


if __name__ == "__main__":
    try:
        print(ensure())
    except (OSError, subprocess.CalledProcessError) as exc:
        sys.exit(f"a2a-sdk 0.3 environment: failed ({exc})")
