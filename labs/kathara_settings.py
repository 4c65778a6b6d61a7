"""Kathará settings in a folder netdojo owns; ``~/.config/kathara.conf`` stays untouched."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from netdojo.labs.paths import sub_dir

SETTINGS_FILE = "kathara.conf"
# A far-future update check stops the Kathará CLI from calling out to the network.
NEVER_CHECK = 4102444800


def settings_dir() -> Path:
    return sub_dir("kathara")


def desired_settings(image: str) -> dict[str, Any]:
    return {
        "image": image,
        "manager_type": "docker",
        "terminal": "/usr/bin/xterm",
        "open_terminals": False,
        "device_shell": "/bin/bash",
        "net_prefix": "kathara",
        "device_prefix": "kathara",
        "debug_level": "WARNING",
        "print_startup_log": False,
        "enable_ipv6": False,
        "last_checked": NEVER_CHECK,
        "volume_mount_policy": "Never",
        "hosthome_mount": False,
        "shared_mount": False,
        "image_update_policy": "Never",
        "shared_cds": 1,
        "remote_url": None,
        "cert_path": None,
        "network_plugin": "kathara/katharanp",
    }


def write_settings(image: str) -> tuple[Path, bool]:
    """Write the settings file; returns its path and whether it changed."""
    path = settings_dir() / SETTINGS_FILE
    text = json.dumps(desired_settings(image), indent=1, sort_keys=True)
    if path.exists() and path.read_text() == text:
        return path, False
    path.write_text(text)
    return path, True


def settings_current(image: str) -> bool:
    path = settings_dir() / SETTINGS_FILE
    return path.exists() and json.loads(path.read_text()) == desired_settings(image)


def load_settings(image: str) -> None:
    """Load netdojo's settings into Kathará; call before the first Kathará manager exists."""
    from Kathara.setting.Setting import Setting

    write_settings(image)
    Setting.get_instance().load_from_disk(str(settings_dir()))
