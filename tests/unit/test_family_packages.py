"""A family names the device packages it needs; the check names each one the image lacks."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from netdojo.cli import app
from netdojo.judges import packages
from netdojo.labs.provision import Check
from netdojo.scenarios import registry
from netdojo.scenarios.registry import Family

STATUS = """Package: frr
Status: install ok installed
Version: 10.3-1

Package: isc-dhcp-server
Status: deinstall ok config-files
Version: 4.4.3
"""


def _needing(*needed: str) -> Family:
    base = registry.family("static-routing")
    return Family(
        name="needs-packages", kind="reactive", summary="s", routing="static",
        shapes=base.shapes, faults=base.faults, packages=needed,
    )  # fmt: skip


def test_the_packages_an_image_lacks_are_named_per_family() -> None:
    family = _needing("frr", "isc-dhcp-server", "isisd-tools")
    missing = packages.missing_packages([family, registry.family("ospf-adjacency")], STATUS)
    assert missing == {"needs-packages": ["isc-dhcp-server", "isisd-tools"]}


def test_the_check_reads_the_image_once_and_names_the_missing_package(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read: list[str] = []
    monkeypatch.setattr(packages, "dpkg_status", lambda image: read.append(image) or STATUS)
    check = packages.packages_check([_needing("frr", "radvd"), _needing("frr")], "img:1")
    assert not check.ok and "needs-packages needs radvd" in check.detail and check.fix
    assert read == ["img:1"]
    assert packages.packages_check([_needing("frr")], "img:1").ok
    assert packages.packages_check([registry.family("static-routing")], "img:1").ok
    assert read == ["img:1", "img:1"]


def test_doctor_and_the_audit_fail_with_the_package_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lacking = Check(name=packages.NAME, ok=False, detail="img lacks packages: x needs radvd")
    monkeypatch.setattr(packages, "packages_check", lambda *_a, **_k: lacking)
    monkeypatch.setattr("netdojo.labs.provision.doctor", lambda: [])
    doctor = CliRunner().invoke(app, ["doctor"])
    assert doctor.exit_code == 1 and "x needs radvd" in doctor.output
    audit = CliRunner().invoke(app, ["audit", "--families", "static-routing"])
    assert audit.exit_code == 1 and "x needs radvd" in audit.output
