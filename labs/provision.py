"""Provisioning and diagnosis: what a machine needs to run labs, each as check + fix.

`setup` runs every step whose check fails and skips the rest; `doctor` only checks. The
Kubernetes control plane is opt-in: `setup` builds it only when asked, and `doctor` reports it
as optional, since only the Kubernetes families need it.

In a container (the green agent's image), labs run on the Docker host's engine through its
mounted socket: the engine, the device image and the network plugin are the host's, checked
but never fixed from inside, and the host's kernel (bridges, veth pairs) is the plugin's
business, out of the container's sight.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from docker.errors import NotFound
from pydantic import BaseModel

from netdojo.errors import NetdojoError
from netdojo.labs.container import own_container
from netdojo.labs.engine import SOCKET, client, engine_version, ensure_engine
from netdojo.labs.image import build_image, device_image
from netdojo.labs.k8s.binaries import GO_HELP, build, go_ready, locate
from netdojo.labs.k8s.release import BINARIES
from netdojo.labs.kathara_settings import settings_current, settings_dir, write_settings
from netdojo.labs.plugin.install import (
    enable_plugin,
    install_plugin,
    plugin_name,
    plugin_status,
)


class Check(BaseModel):
    name: str
    ok: bool
    detail: str
    fix: str | None = None
    optional: bool = False
    """Missing only matters to some families: the machine is usable without it."""


class StepReport(BaseModel):
    name: str
    action: Literal["skipped", "done", "failed"]
    detail: str
    seconds: float


@dataclass(frozen=True)
class Requirement:
    name: str
    check: Callable[[], Check]
    fix: Callable[[], str] | None = None


def _engine() -> Check:
    version = engine_version()
    if version:
        return Check(name="engine", ok=True, detail=f"Docker {version} answers")
    return Check(name="engine", ok=False, detail="no Docker daemon answers", fix="netdojo setup")


def _image() -> Check:
    if engine_version() is None:
        return Check(name="image", ok=False, detail="unknown: no engine", fix="netdojo setup")
    tag = device_image()
    images = client(timeout=30).images
    try:
        image = images.get(tag)
    except NotFound:
        return Check(name="image", ok=False, detail=f"{tag} not built", fix="netdojo setup")
    official = [name for name in ("kathara/frr", "kathara/base") if _has_image(name)]
    extra = f"; official images present: {', '.join(official)}" if official else ""
    return Check(name="image", ok=True, detail=f"{tag} ({image.short_id}){extra}")


def _has_image(name: str) -> bool:
    try:
        client(timeout=30).images.get(name)
        return True
    except NotFound:
        return False


def _plugin() -> Check:
    if engine_version() is None:
        return Check(name="plugin", ok=False, detail="unknown: no engine", fix="netdojo setup")
    status = plugin_status()
    detail = {
        "missing": f"{plugin_name()} not installed",
        "current": f"{plugin_name()} (netdojo's driver, current)",
        "stale": f"{plugin_name()} (netdojo's driver, older source)",
        "official": f"{plugin_name()} (the official Kathará plugin)",
    }[status.state]
    if not status.enabled and status.state != "missing":
        detail += ", disabled"
    return Check(
        name="plugin",
        ok=status.usable,
        detail=detail,
        fix=None if status.usable else "netdojo setup",
    )


def _fix_plugin() -> str:
    status = plugin_status()
    if status.state in ("current", "official") and not status.enabled:
        enable_plugin()
        return f"enabled {plugin_name()}"
    return f"built and enabled {install_plugin(device_image())}"


def _settings() -> Check:
    path = settings_dir() / "kathara.conf"
    if settings_current(device_image()):
        return Check(name="settings", ok=True, detail=str(path))
    return Check(
        name="settings", ok=False, detail=f"{path} missing or outdated", fix="netdojo setup"
    )


def _fix_settings() -> str:
    path, _ = write_settings(device_image())
    return f"wrote {path}"


def _br_netfilter() -> Check:
    if Path("/proc/sys/net/bridge/bridge-nf-call-iptables").exists():
        return Check(name="br_netfilter", ok=True, detail="bridged traffic passes iptables")
    return Check(
        name="br_netfilter", ok=False, detail="module not loaded", fix="modprobe br_netfilter"
    )


def _veth() -> Check:
    if os.geteuid() != 0:
        return Check(name="veth", ok=False, detail="needs root to create links", fix="run as root")
    name = f"ndchk{os.getpid() % 100000}"
    made = subprocess.run(
        ["ip", "link", "add", name, "type", "veth", "peer", "name", f"{name}p"],
        capture_output=True,
        text=True,
        check=False,
    )
    if made.returncode != 0:
        return Check(name="veth", ok=False, detail=made.stderr.strip(), fix="modprobe veth")
    subprocess.run(["ip", "link", "del", name], capture_output=True, check=False)
    return Check(name="veth", ok=True, detail="veth pairs can be created")


def _k8s_check(name: str) -> Check:
    found = locate(name)
    return Check(
        name=name,
        ok=found.source != "missing",
        detail=found.detail,
        fix=None
        if found.source != "missing"
        else "netdojo setup --kubernetes"
        if go_ready()
        else GO_HELP,
        optional=True,
    )


def _k8s_requirement(name: str) -> Requirement:
    return Requirement(name, lambda: _k8s_check(name), lambda: build(name))


REQUIREMENTS = [
    Requirement("engine", _engine, ensure_engine),
    Requirement("image", _image, lambda: f"built {build_image()}"),
    Requirement("plugin", _plugin, _fix_plugin),
    Requirement("settings", _settings, _fix_settings),
    Requirement("br_netfilter", _br_netfilter),
    Requirement("veth", _veth),
]
KUBERNETES_REQUIREMENTS = [_k8s_requirement(b.name) for b in BINARIES]
MOUNT_SOCKET = f"mount the Docker host's socket into this container: -v {SOCKET}:{SOCKET}"
SETUP_ON_HOST = "run `netdojo setup` on the Docker host"


def _fixed_elsewhere(check: Callable[[], Check], fix: str) -> Callable[[], Check]:
    """``check``, telling a container what fixes it from outside."""

    def checked() -> Check:
        found = check()
        return found if found.ok else found.model_copy(update={"fix": fix})

    return checked


CONTAINER_REQUIREMENTS = [
    Requirement("engine", _fixed_elsewhere(_engine, MOUNT_SOCKET)),
    Requirement("image", _fixed_elsewhere(_image, SETUP_ON_HOST)),
    Requirement("plugin", _fixed_elsewhere(_plugin, SETUP_ON_HOST)),
    Requirement("settings", _settings, _fix_settings),
]


def requirements() -> list[Requirement]:
    """What this process needs for labs: on a host, everything; in a container, the host's
    engine, image and plugin as they are, and its own settings."""
    return REQUIREMENTS if own_container() is None else CONTAINER_REQUIREMENTS


def doctor_kubernetes() -> list[Check]:
    return [req.check() for req in KUBERNETES_REQUIREMENTS]


def doctor() -> list[Check]:
    return [req.check() for req in requirements()] + doctor_kubernetes()


def setup(
    on_start: Callable[[str], None] = lambda _name: None,
    on_end: Callable[[StepReport], None] = lambda _report: None,
    kubernetes: bool = False,
) -> list[StepReport]:
    """Bring every requirement to ok, the Kubernetes control plane's too when asked; stops at
    the first step that fails."""
    reports = []
    for req in requirements() + (KUBERNETES_REQUIREMENTS if kubernetes else []):
        on_start(req.name)
        started = time.monotonic()
        check = req.check()
        if check.ok:
            report = StepReport(name=req.name, action="skipped", detail=check.detail, seconds=0.0)
        elif req.fix is None:
            report = StepReport(
                name=req.name,
                action="failed",
                detail=f"{check.detail}; fix: {check.fix}",
                seconds=0.0,
            )
        else:
            try:
                detail = req.fix()
                report = StepReport(name=req.name, action="done", detail=detail, seconds=0.0)
            except NetdojoError as exc:
                report = StepReport(name=req.name, action="failed", detail=str(exc), seconds=0.0)
        report.seconds = round(time.monotonic() - started, 2)
        reports.append(report)
        on_end(report)
        if report.action == "failed":
            break
    return reports


def require(on_end: Callable[[StepReport], None] = lambda _report: None) -> list[StepReport]:
    """`setup`, for commands that need labs: the first failed step is an error."""
    reports = setup(on_end=on_end)
    failed = next((r for r in reports if r.action == "failed"), None)
    if failed is not None:
        raise NetdojoError(f"{failed.name}: {failed.detail}")
    return reports
