"""Where a cluster keeps its files (certificates, the store, the kubeconfig, logs): a folder of
its own under the state folder, marked with its owner so that one left by a killed process is
found and removed (`netdojo reap`)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from netdojo.labs.owners import owner_alive, owner_tag
from netdojo.labs.paths import sub_dir

CLUSTERS = "k8s"
OWNER_FILE = "owner"


def cluster_folder(lab_name: str) -> Path:
    """A new folder for a cluster of this process."""
    folder = sub_dir(CLUSTERS) / f"{lab_name}-{time.time_ns()}"
    folder.mkdir(parents=True)
    (folder / OWNER_FILE).write_text(owner_tag())
    return folder


def orphan_clusters() -> list[Path]:
    """Folders of clusters whose owner is gone: killed before it could remove them (its
    control plane ended with it)."""
    return [
        folder
        for folder in sorted(sub_dir(CLUSTERS).iterdir())
        if folder.is_dir() and not owner_alive(_owner(folder))
    ]


def remove_orphan_clusters() -> int:
    """Remove the folders of orphan clusters; how many there were."""
    orphans = orphan_clusters()
    for folder in orphans:
        shutil.rmtree(folder, ignore_errors=True)
    return len(orphans)


def _owner(folder: Path) -> str:
    try:
        return (folder / OWNER_FILE).read_text().strip()
    except OSError:
        return ""
