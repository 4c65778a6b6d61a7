"""Package the network driver as the Docker managed plugin Kathará expects, and enable it."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from docker.errors import APIError, NotFound
from Kathara import utils as kathara_utils
from Kathara.os.Networking import Networking

from netdojo.labs.engine import client
from netdojo.labs.errors import PrerequisiteError
from netdojo.labs.paths import sub_dir

PLUGIN_REPOSITORY = "kathara/katharanp"
DRIVER_SOURCE = Path(__file__).parent / "driver.py"
XTABLES_LOCK = Path("/run/xtables.lock")
MARK = "netdojo katharanp"

State = Literal["missing", "current", "stale", "official"]


@dataclass(frozen=True)
class PluginStatus:
    state: State
    enabled: bool

    @property
    def usable(self) -> bool:
        return self.state in ("current", "official") and self.enabled


def plugin_name() -> str:
    return f"{PLUGIN_REPOSITORY}:{kathara_utils.get_architecture()}"


def source_hash() -> str:
    digest = hashlib.sha256(DRIVER_SOURCE.read_bytes())
    digest.update(json.dumps(_config("0"), sort_keys=True).encode())
    return digest.hexdigest()[:12]


def _config(version: str) -> dict[str, object]:
    return {
        "description": f"{MARK} {version}",
        "documentation": "Linux bridges for netdojo labs (docker.networkdriver/1.0)",
        "entrypoint": ["/usr/bin/python3", "-u", "/netdojo/driver.py"],
        "workdir": "/",
        "interface": {"types": ["docker.networkdriver/1.0"], "socket": "katharanp.sock"},
        "network": {"type": "host"},
        "linux": {"capabilities": ["CAP_SYS_ADMIN", "CAP_NET_ADMIN", "CAP_NET_RAW"]},
        "mounts": [
            {
                "name": "xtables_lock",
                "description": "the host's xtables lock, shared with dockerd",
                "source": str(XTABLES_LOCK),
                "destination": str(XTABLES_LOCK),
                "type": "bind",
                "options": ["rbind", "rw"],
                "settable": ["source"],
            }
        ],
    }


def plugin_status() -> PluginStatus:
    try:
        plugin = client(timeout=30).plugins.get(plugin_name())
    except NotFound:
        return PluginStatus("missing", False)
    description = str(plugin.attrs.get("Config", {}).get("Description", ""))
    if not description.startswith(MARK):
        return PluginStatus("official", bool(plugin.enabled))
    state: State = "current" if description == f"{MARK} {source_hash()}" else "stale"
    return PluginStatus(state, bool(plugin.enabled))


def install_plugin(image: str) -> str:
    """(Re)build the plugin from ``image``'s rootfs and the driver source; enable it."""
    docker = client(timeout=600)
    name = plugin_name()
    try:
        old = docker.plugins.get(name)
        if old.enabled:
            old.disable(force=False)
        old.remove(force=True)
    except NotFound:
        pass
    except APIError as exc:
        raise PrerequisiteError(
            f"cannot replace plugin {name} while labs use it ({exc.explanation}); "
            "undeploy them first (`netdojo reap`, `netdojo lab down`)"
        ) from None
    work = Path(tempfile.mkdtemp(prefix="plugin-", dir=sub_dir("build")))
    try:
        rootfs = work / "rootfs"
        rootfs.mkdir()
        _export_rootfs(image, rootfs)
        (rootfs / "netdojo").mkdir()
        shutil.copyfile(DRIVER_SOURCE, rootfs / "netdojo" / "driver.py")
        (work / "config.json").write_text(json.dumps(_config(source_hash()), indent=2))
        docker.plugins.create(name, str(work))
        enable_plugin()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return name


def xtables_lock_source() -> str:
    """The lock mount Kathará expects: none with nf_tables, the host's lock file with legacy."""
    if "nf_tables" in Networking.get_iptables_version():
        return ""
    XTABLES_LOCK.touch(exist_ok=True)
    return str(XTABLES_LOCK)


def enable_plugin() -> None:
    """Enable the plugin with the lock mount Kathará would set, so Kathará leaves it alone."""
    plugin = client(timeout=60).plugins.get(plugin_name())
    if plugin.enabled:
        plugin.disable()
    plugin.configure({"xtables_lock.source": xtables_lock_source()})
    plugin.enable(timeout=60)


def _export_rootfs(image: str, rootfs: Path) -> None:
    docker = client(timeout=600)
    container = docker.containers.create(
        image, command=["/bin/true"], labels={"app": "netdojo-build"}
    )
    try:
        with subprocess.Popen(["tar", "-C", str(rootfs), "-x"], stdin=subprocess.PIPE) as untar:
            assert untar.stdin is not None
            for chunk in container.export():
                untar.stdin.write(chunk)
            untar.stdin.close()
            if untar.wait() != 0:
                raise PrerequisiteError("extracting the plugin rootfs failed")
    finally:
        container.remove(force=True)
