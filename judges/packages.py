"""The device packages each family needs, checked inside the built device image.

A family names the Debian packages its devices need (`Family.packages`); `netdojo doctor` and
the audit read the device image's dpkg database once and name each package a chosen family
needs that the image lacks, before any lab is deployed, rather than failing at episode time.
"""

from __future__ import annotations

import tarfile
from collections.abc import Iterable

from docker.errors import DockerException

from netdojo.judges.provenance import dpkg_status, package_version
from netdojo.labs.errors import PrerequisiteError
from netdojo.labs.image import device_image
from netdojo.labs.provision import Check
from netdojo.scenarios.registry import Family

NAME = "device packages"
FIX = "add the package to PACKAGES in labs/image/recipe.py and run `netdojo setup`"


def missing_packages(families: Iterable[Family], status: str) -> dict[str, list[str]]:
    """Each family's packages that the dpkg status file ``status`` does not list as installed,
    for the families that lack any."""
    missing: dict[str, list[str]] = {}
    for family in families:
        lacking = [p for p in family.packages if package_version(status, p) is None]
        if lacking:
            missing[family.name] = lacking
    return missing


def packages_check(families: Iterable[Family], image: str | None = None) -> Check:
    """Whether the device image carries every package ``families`` need."""
    chosen = list(families)
    needed = sorted({p for family in chosen for p in family.packages})
    image = image or device_image()
    if not needed:
        return Check(name=NAME, ok=True, detail="no family needs a package of its own")
    try:
        status = dpkg_status(image)
    except (DockerException, PrerequisiteError, KeyError, tarfile.TarError) as exc:
        return Check(name=NAME, ok=False, detail=f"cannot read {image}'s packages: {exc}", fix=FIX)
    missing = missing_packages(chosen, status)
    if missing:
        said = "; ".join(f"{name} needs {', '.join(ps)}" for name, ps in missing.items())
        return Check(name=NAME, ok=False, detail=f"{image} lacks packages: {said}", fix=FIX)
    return Check(name=NAME, ok=True, detail=f"{image} has {', '.join(needed)}")
