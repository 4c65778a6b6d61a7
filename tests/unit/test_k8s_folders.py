"""Cluster folders: each marked with its owner, and those of a gone owner found and removed."""

from __future__ import annotations

from pathlib import Path

import pytest

from netdojo.labs.k8s.folders import (
    CLUSTERS,
    OWNER_FILE,
    cluster_folder,
    orphan_clusters,
    remove_orphan_clusters,
)
from netdojo.labs.owners import owner_tag


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("NETDOJO_HOME", str(tmp_path))
    return tmp_path


def test_a_folder_of_this_process_is_kept_and_one_of_a_gone_owner_is_removed(home: Path) -> None:
    mine = cluster_folder("shop")
    assert mine.parent == home / CLUSTERS
    assert (mine / OWNER_FILE).read_text() == owner_tag()
    gone = home / CLUSTERS / "shop-1"
    (gone / "certs").mkdir(parents=True)
    (gone / OWNER_FILE).write_text("999999999:12345")
    unmarked = home / CLUSTERS / "shop-2"
    unmarked.mkdir()
    assert orphan_clusters() == [gone, unmarked]
    assert remove_orphan_clusters() == 2
    assert not gone.exists() and not unmarked.exists() and mine.exists()
    assert remove_orphan_clusters() == 0
