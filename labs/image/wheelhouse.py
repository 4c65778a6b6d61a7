"""netdojo and every dependency as wheels, made on this machine with pip, for images that have
no index to install from.

From a source checkout the project's own wheel is built from a copy of the files that make it
(so nothing stale in the checkout's build folders gets in); an installed netdojo is fetched as
its version from the index pip is configured with. Dependencies are pinned to the
versions installed here, so an image runs what runs on this machine.
"""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import netdojo
from netdojo import __version__
from netdojo.labs.errors import PrerequisiteError
from netdojo.labs.paths import sub_dir

PROJECT = "netdojo"
SKIPPED_PARTS = {"__pycache__"}
LOG_TAIL = 3000

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Source:
    """Where netdojo's wheel comes from: a checkout's files, or its version on the index."""

    target: str
    """A requirement pip resolves, or the checkout's folder."""
    root: Path
    checkout: bool
    files: tuple[Path, ...]
    """The files under ``root`` that make the wheel (hashed to tell one build from another)."""


def project_root() -> Path | None:
    """The source checkout netdojo runs from, or None when it runs installed."""
    root = Path(netdojo.__file__).resolve().parents[1]
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file():
        return None
    project = tomllib.loads(pyproject.read_text()).get("project", {})
    return root if project.get("name") == PROJECT else None


def source() -> Source:
    root = project_root()
    if root is None:
        installed = Path(netdojo.__file__).resolve().parent
        return Source(f"{PROJECT}=={__version__}", installed, False, _files_under(installed))
    pyproject = root / "pyproject.toml"
    settings = tomllib.loads(pyproject.read_text())
    folders = sorted(set(settings["tool"]["setuptools"]["package-dir"].values()))
    files = [pyproject, root / settings["project"].get("readme", "README.md")]
    for folder in folders:
        files += _files_under(root / folder)
    return Source(str(root), root, True, tuple(files))


def _files_under(folder: Path) -> tuple[Path, ...]:
    return tuple(
        sorted(
            path
            for path in folder.rglob("*")
            if path.is_file() and not SKIPPED_PARTS & set(path.parts) and path.suffix != ".pyc"
        )
    )


def constraints() -> str:
    """``name==version`` for every distribution installed here but netdojo, one a line."""
    pins = {
        dist.metadata["Name"].lower(): dist.version
        for dist in metadata.distributions()
        if dist.metadata["Name"] and dist.metadata["Name"].lower() != PROJECT
    }
    return "".join(f"{name}=={version}\n" for name, version in sorted(pins.items()))


def digest(found: Source, pins: str) -> str:
    """A hash of what the wheelhouse is made of: netdojo's files and the pinned versions."""
    hashed = hashlib.sha256(pins.encode())
    for path in found.files:
        hashed.update(f"\0{path.relative_to(found.root)}\0".encode() + path.read_bytes())
    return hashed.hexdigest()


def make_wheelhouse(folder: Path, found: Source, pins: str, progress: Progress) -> list[Path]:
    """Fill ``folder`` with wheels of netdojo, its dependencies and pip; return them."""
    if importlib.util.find_spec("pip") is None:
        raise PrerequisiteError(
            f"pip is needed to make the wheelhouse: {sys.executable} -m ensurepip"
        )
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="wheelhouse-", dir=sub_dir("build")) as scratch:
        pinned = Path(scratch) / "constraints.txt"
        pinned.write_text(pins)
        target = found.target
        if found.checkout:
            target = str(Path(scratch) / "source")
            for path in found.files:
                placed = Path(target) / path.relative_to(found.root)
                placed.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, placed)
        argv = [sys.executable, "-m", "pip", "wheel", "--disable-pip-version-check",
                "--progress-bar", "off", "--wheel-dir", str(folder), "--constraint", str(pinned),
                target, "pip"]  # fmt: skip
        code, lines = _run(argv, progress)
    if code != 0:
        tail = "".join(lines)[-LOG_TAIL:]
        raise PrerequisiteError(f"pip wheel failed ({code}):\n{tail}")
    return sorted(folder.glob("*.whl"))


def _run(argv: list[str], progress: Progress) -> tuple[int, list[str]]:
    """Run ``argv``, each line of its output shown as progress; its exit code and output."""
    lines: list[str] = []
    with subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True
    ) as pip:
        assert pip.stdout is not None
        for line in pip.stdout:
            lines.append(line)
            if line.strip():
                progress(f"pip: {line.strip()}")
    return pip.returncode, lines
