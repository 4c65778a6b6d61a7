"""The virtual environment holding the verifiers library with this tree's netdojo installed in
it, apart from netdojo's own: verifiers pins an mcp release of its own, so the tests run its
evaluations with this environment's Python. Kept under netdojo's state folder and made once
(brought up to date when this tree or its pyproject.toml changes): `make verifiers` (which
`make test` runs), or `python -m tests.verifiers_env.env`.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import venv
from pathlib import Path

from netdojo.labs.paths import state_dir

ROOT = Path(__file__).resolve().parents[2]
HOME = state_dir() / "test-envs" / "verifiers"
PYTHON = HOME / "bin" / "python"
STAMP = HOME / ".netdojo-tree.json"
EXTRA_REQUIREMENTS = ["uv"]  # verifiers' chat harness runs as a uv script
MAKE_IT = "make verifiers (make test runs it)"


def clean_env() -> dict[str, str]:
    """This process's environment without what points Python at netdojo's own packages."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


def wanted() -> dict[str, str]:
    """What the environment must have been made from: this tree and its pyproject.toml."""
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    return {"tree": str(ROOT), "pyproject": digest}


def current() -> bool:
    """Whether the environment holds verifiers and this tree's netdojo."""
    if not PYTHON.exists() or not STAMP.exists():
        return False
    try:
        return bool(json.loads(STAMP.read_text()) == wanted())
    except ValueError:
        return False


def python() -> Path:
    """The environment's Python; a clear failure when it is missing or stale."""
    if not current():
        raise RuntimeError(
            f"the verifiers test environment is missing or stale at {HOME}: {MAKE_IT}"
        )
    return PYTHON


def ensure() -> str:
    """Make or update the environment unless it is current; what was done, in one line."""
    if current():
        return f"verifiers environment: skipped (up to date at {HOME})"
    if not PYTHON.exists():
        venv.EnvBuilder(clear=True, with_pip=True).create(HOME)
    pip = [str(PYTHON), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run(
        [*pip, "-e", f"{ROOT}[verifiers]", *EXTRA_REQUIREMENTS], check=True, env=clean_env()
    )
    STAMP.write_text(json.dumps(wanted()))
    return f"verifiers environment: done (netdojo from {ROOT} at {HOME})"


if __name__ == "__main__":
    try:
        print(ensure())
    except (OSError, subprocess.CalledProcessError) as exc:
        sys.exit(f"verifiers environment: failed ({exc})")
