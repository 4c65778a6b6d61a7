"""What produced a result: versions, the device image, the instances, budgets and the host.

The FRR version is read once per device image id, from dpkg's database copied out of a
container that is created but never started, and cached beside netdojo's other machine-local
state.
"""

from __future__ import annotations

import io
import json
import os
import platform
import tarfile
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path

from docker.errors import DockerException

from netdojo import __version__
from netdojo.labs.engine import client, engine_version
from netdojo.labs.errors import PrerequisiteError
from netdojo.labs.image import device_image, device_image_id
from netdojo.labs.paths import sub_dir
from netdojo.reports.records import Budgets, Instance, Provenance
from netdojo.scenarios.model import Scenario

FRR_CACHE = "frr-versions.json"


def frr_version(image: str, image_id: str) -> str | None:
    """The FRR version inside ``image``, cached by ``image_id``; None when it cannot be read."""
    cache = sub_dir("provenance") / FRR_CACHE
    known = _read_cache(cache)
    if image_id in known:
        return known[image_id]
    try:
        found = package_version(dpkg_status(image), "frr")
    except (DockerException, PrerequisiteError, KeyError, tarfile.TarError):
        return None
    if found:
        known[image_id] = found
        scratch = cache.with_suffix(f".{os.getpid()}.tmp")
        scratch.write_text(json.dumps(known, indent=1) + "\n")
        scratch.replace(cache)  # atomic: a concurrent reader sees the old or the new file
    return found


def dpkg_status(image: str) -> str:
    """dpkg's package database of ``image``, copied out of a container that never starts."""
    container = client(timeout=60).containers.create(image, ["true"], network_mode="none")
    try:
        chunks, _ = container.get_archive("/var/lib/dpkg/status")
        data = b"".join(chunks)
    finally:
        container.remove(force=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        member = archive.extractfile("status")
        if member is None:
            raise KeyError("status")
        return member.read().decode(errors="replace")


def package_version(status: str, package: str) -> str | None:
    """The version of an installed package in a dpkg status file."""
    for stanza in status.split("\n\n"):
        fields = dict(
            line.split(": ", 1) for line in stanza.splitlines() if ": " in line and line[0] != " "
        )
        if fields.get("Package") == package and "installed" in fields.get("Status", ""):
            return fields.get("Version")
    return None


def _read_cache(cache: Path) -> dict[str, str]:
    try:
        known = json.loads(cache.read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in known.items()} if isinstance(known, dict) else {}


def _memory_mib() -> int | None:
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) // 1024
    except OSError:
        return None
    return None


def instances_of(scenarios: Sequence[Scenario]) -> list[Instance]:
    """Each distinct instance once (trials share one), in first-seen order."""
    seen: dict[str, Instance] = {}
    for s in scenarios:
        if s.id not in seen:
            seen[s.id] = Instance(
                scenario_id=s.id, family=s.family, level=s.level, seed=s.seed, digest=s.digest()
            )
    return list(seen.values())


def provenance(
    scenarios: Sequence[Scenario] = (),
    budgets: Budgets | None = None,
    assessment_seed: int | None = None,
) -> Provenance:
    image, image_id = device_image(), device_image_id()
    return Provenance(
        netdojo=__version__,
        kathara=version("kathara"),
        mcp=version("mcp"),
        python=platform.python_version(),
        host=f"{platform.system()} {platform.release()} {platform.machine()}",
        device_image=f"{image} ({image_id})" if image_id else image,
        device_image_id=image_id,
        frr=frr_version(image, image_id) if image_id else None,
        docker=engine_version(),
        cpus=os.cpu_count(),
        memory_mib=_memory_mib(),
        assessment_seed=assessment_seed,
        budgets=budgets,
        instances=instances_of(scenarios),
    )
