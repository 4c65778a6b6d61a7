"""Which kube-apiserver, kubectl and etcd netdojo runs, and building them with Go.

A program on PATH at an accepted release is used as it is; otherwise the one built into the
cache folder of the current build key; otherwise it is missing and `build` makes it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from netdojo.labs.errors import PrerequisiteError
from netdojo.labs.k8s.release import (
    BINARIES,
    MODULES,
    Binary,
    accepts,
    binary,
    build_key,
    ldflags,
    parse_version,
)
from netdojo.labs.paths import sub_dir

GO_MINIMUM = (1, 26)
GO_HELP = "install Go 1.26 or newer and put `go` on PATH, then run `netdojo setup --kubernetes`"
VERSION_TIMEOUT_S = 20.0
BUILD_TIMEOUT_S = 3600.0
_GO_VERSION = re.compile(r"go(\d+)\.(\d+)")


class Located(BaseModel):
    name: str
    source: Literal["path", "built", "missing"]
    path: str | None = None
    version: str | None = None
    detail: str


def cache_root() -> Path:
    return sub_dir("kubernetes")


def build_dir() -> Path:
    return cache_root() / build_key()


def program_version(path: str, b: Binary) -> tuple[int, int, int] | None:
    """The release a program reports, or None when it does not run or says none."""
    try:
        done = subprocess.run(
            [path, *b.version_args],
            capture_output=True,
            text=True,
            timeout=VERSION_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return parse_version(done.stdout) if done.returncode == 0 else None


def _dotted(version: tuple[int, int, int]) -> str:
    return "v" + ".".join(map(str, version))


def locate(name: str, search_path: str | None = None) -> Located:
    """Where ``name`` comes from: PATH at an accepted release, this build, or nowhere."""
    b = binary(name)
    refused = ""
    found = shutil.which(name, path=search_path)
    if found:
        version = program_version(found, b)
        if version is not None and accepts(b, version):
            return Located(
                name=name,
                source="path",
                path=found,
                version=_dotted(version),
                detail=f"{found} ({_dotted(version)}, on PATH)",
            )
        said = _dotted(version) if version else "no version"
        refused = f"; {found} on PATH ignored ({said}, wanted {b.accepted[0]} to <{b.accepted[1]})"
    built = build_dir() / name
    if built.is_file() and os.access(built, os.X_OK):
        return Located(
            name=name,
            source="built",
            path=str(built),
            version=b.version,
            detail=f"{built} ({b.version}, built){refused}",
        )
    return Located(name=name, source="missing", detail=f"not built ({b.version}){refused}")


def go_binary() -> str | None:
    return shutil.which("go") or next(
        (p for p in ("/usr/local/go/bin/go", "/usr/lib/go/bin/go") if Path(p).is_file()), None
    )


def go_version(go: str) -> tuple[int, int] | None:
    try:
        done = subprocess.run(
            [go, "env", "GOVERSION"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = _GO_VERSION.search(done.stdout)
    return (int(found[1]), int(found[2])) if found else None


def require_go() -> str:
    go = go_binary()
    if go is None:
        raise PrerequisiteError(f"no Go toolchain: {GO_HELP}")
    version = go_version(go)
    if version is None or version < GO_MINIMUM:
        said = "go{}.{}".format(*version) if version else "an unknown release"
        raise PrerequisiteError(f"{go} is {said}: {GO_HELP}")
    return go


def go_ready() -> bool:
    try:
        require_go()
    except PrerequisiteError:
        return False
    return True


def build_argv(go: str, b: Binary, output: Path) -> list[str]:
    return [
        go,
        "build",
        "-trimpath",
        "-mod=readonly",
        f"-ldflags={ldflags(b)}",
        "-o",
        str(output),
        b.package,
    ]


def go_cache() -> Path:
    return cache_root() / "go-build"


def build_env() -> dict[str, str]:
    """The caller's Go settings, with cgo off so the programs are static. Unless the caller
    chose a GOCACHE, compiled packages go to netdojo's own, which `build` removes once every
    program is there: the Kubernetes build leaves about 3 GiB in it."""
    env = {**os.environ, "CGO_ENABLED": "0"}
    env.setdefault("GOCACHE", str(go_cache()))
    return env


def build(name: str) -> str:
    """Build ``name`` from its wrapper module into this build's folder; a one-line account.

    Runs at the lowest CPU priority: the Kubernetes build takes minutes on two cores and
    should not starve labs or tests running beside it.
    """
    b = binary(name)
    go = require_go()
    target = build_dir()
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"{name}-", dir=target) as work:
        output = Path(work) / name
        try:
            done = subprocess.run(
                ["nice", "-n", "19", *build_argv(go, b, output)],
                cwd=MODULES[b.module],
                env=build_env(),
                capture_output=True,
                text=True,
                timeout=BUILD_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise PrerequisiteError(
                f"building {name} took over {BUILD_TIMEOUT_S:.0f}s; run `netdojo setup "
                "--kubernetes` again to resume from Go's caches"
            ) from None
        if done.returncode != 0:
            raise PrerequisiteError(f"building {name} {b.version} failed:\n{done.stderr[-2000:]}")
        output.replace(target / name)
    if all(found.source != "missing" for found in locate_all().values()):
        shutil.rmtree(go_cache(), ignore_errors=True)
    return f"built {target / name} ({b.version})"


def locate_all(search_path: str | None = None) -> dict[str, Located]:
    return {b.name: locate(b.name, search_path) for b in BINARIES}
