"""The pinned Kubernetes and etcd releases, and the Go modules that build them.

``k8s.io/kubernetes`` is consumed as a dependency by pinning each ``k8s.io/*`` module it
requires at ``v0.0.0`` (its staging modules, served from ``./staging`` in its own tree) to the
matching ``v0.<minor>.<patch>`` release; `staging_replaces` derives that list from its go.mod.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

KUBERNETES = "v1.37.2"
ETCD = "v3.7.3"
GOMOD_DIR = Path(__file__).parent / "gomod"
MODULES = {"kubernetes": GOMOD_DIR / "kubernetes", "etcd": GOMOD_DIR / "etcd"}
_SEMVER = re.compile(r"v?(\d+)\.(\d+)\.(\d+)")
_STAGING_REQUIRE = re.compile(r"^\s*(?:require\s+)?(k8s\.io/[\w./-]+)\s+v0\.0\.0(?:\s|$)", re.M)


@dataclass(frozen=True)
class Binary:
    """One control-plane program: the Go package it is built from and how it reports its
    version."""

    name: str
    module: str
    package: str
    version: str
    version_args: tuple[str, ...]
    accepted: tuple[str, str]
    """The releases found on PATH that may stand in for a build: lowest, and first refused."""


# The API server only at the pinned minor release; kubectl within the one minor release of skew
# that Kubernetes supports; etcd at a release this API server supports.
BINARIES = (
    Binary(
        "kube-apiserver",
        "kubernetes",
        "k8s.io/kubernetes/cmd/kube-apiserver",
        KUBERNETES,
        ("--version",),
        ("1.37.2", "1.38.0"),
    ),
    Binary(
        "kubectl",
        "kubernetes",
        "k8s.io/kubernetes/cmd/kubectl",
        KUBERNETES,
        ("version", "--client"),
        ("1.36.0", "1.39.0"),
    ),
    Binary("etcd", "etcd", "go.etcd.io/etcd/server/v3", ETCD, ("--version",), ("3.6.0", "3.8.0")),
)


def binary(name: str) -> Binary:
    return next(b for b in BINARIES if b.name == name)


def parse_version(text: str) -> tuple[int, int, int] | None:
    """The first ``major.minor.patch`` in a program's version output."""
    found = _SEMVER.search(text)
    return (int(found[1]), int(found[2]), int(found[3])) if found else None


def accepts(b: Binary, found: tuple[int, int, int]) -> bool:
    low, high = (parse_version(bound) for bound in b.accepted)
    assert low is not None and high is not None
    return low <= found < high


def staging_version(kubernetes: str) -> str:
    """``v1.37.2`` → ``v0.37.2``: the release of the staging modules cut with it."""
    parsed = parse_version(kubernetes)
    if parsed is None or parsed[0] != 1:
        raise ValueError(f"not a Kubernetes release: {kubernetes!r}")
    return f"v0.{parsed[1]}.{parsed[2]}"


def staging_modules(kubernetes_gomod: str) -> list[str]:
    """The ``k8s.io/*`` modules that ``k8s.io/kubernetes``'s go.mod requires at ``v0.0.0``."""
    return sorted(set(_STAGING_REQUIRE.findall(kubernetes_gomod)))


def staging_replaces(kubernetes_gomod: str, kubernetes: str) -> str:
    """The ``replace`` block that a module requiring ``k8s.io/kubernetes`` needs."""
    version = staging_version(kubernetes)
    lines = [f"\t{module} => {module} {version}" for module in staging_modules(kubernetes_gomod)]
    return "replace (\n" + "\n".join(lines) + "\n)\n"


def wrapper_gomod(module: str, kubernetes_gomod: str = "") -> str:
    """A wrapper module's go.mod before ``go mod tidy``: it requires the pinned release and
    names its programs as tools, so ``go build <package>`` works inside it."""
    owner, version = {
        "kubernetes": ("k8s.io/kubernetes", KUBERNETES),
        "etcd": ("go.etcd.io/etcd/server/v3", ETCD),
    }[module]
    tools = "".join(f"\t{b.package}\n" for b in BINARIES if b.module == module)
    text = f"module netdojo/{module}\n\ngo 1.26.0\n\nrequire {owner} {version}\n"
    text += f"\ntool (\n{tools})\n"
    if module == "kubernetes":
        text += "\n" + staging_replaces(kubernetes_gomod, KUBERNETES)
    return text


def ldflags(b: Binary) -> str:
    """Strip symbols and stamp the release into the version packages the programs print."""
    flags = ["-s", "-w"]
    if b.module == "kubernetes":
        major, minor, _ = parse_version(b.version) or (0, 0, 0)
        stamp = {
            "gitVersion": b.version,
            "gitMajor": str(major),
            "gitMinor": str(minor),
            "gitTreeState": "clean",
            "buildDate": "1970-01-01T00:00:00Z",
        }
        for package in ("k8s.io/client-go/pkg/version", "k8s.io/component-base/version"):
            flags += [f"-X={package}.{key}={value}" for key, value in stamp.items()]
    return " ".join(flags)


def build_key() -> str:
    """The cache key of a build: the releases and a hash of the wrapper modules' files, so a
    change to either builds anew into its own folder."""
    digest = hashlib.sha256()
    for name, folder in sorted(MODULES.items()):
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            digest.update(f"{name}/{path.relative_to(folder)}\0".encode() + path.read_bytes())
    return f"k8s-{KUBERNETES}-etcd-{ETCD}-{digest.hexdigest()[:10]}"
