"""A netdojo process in a container (the green agent's image): how it knows, whose labs it
counts as alive, what it provisions and how it reads devices. The engine is faked."""

from __future__ import annotations

import os
from typing import Any

import pytest
from docker.errors import DockerException, NotFound

from netdojo.labs import host_read, owners, provision
from netdojo.labs.container import container_id_in
from netdojo.labs.owners import (
    PERSISTENT_OWNER,
    Owner,
    owner_alive,
    owner_tag,
    parse_owner,
    process_start,
)

CID = "ab" * 32
OTHER = "cd" * 32
CONTAINER_MOUNTS = f"""\
612 590 0:101 / / rw,relatime master:120 - overlay overlay rw
701 612 254:0 /var/lib/docker/containers/{CID}/resolv.conf /etc/resolv.conf rw - ext4 /dev/vda rw
702 612 254:0 /var/lib/docker/containers/{CID}/hostname /etc/hostname rw - ext4 /dev/vda rw
"""
HOST_MOUNTS = """\
22 27 0:21 / /proc rw,relatime - proc proc rw
45 27 254:0 /var/lib/docker /var/lib/docker rw,relatime shared:1 - ext4 /dev/vda rw
"""


def test_a_container_is_known_by_the_files_docker_mounts_into_it() -> None:
    assert container_id_in(CONTAINER_MOUNTS) == CID
    assert container_id_in(HOST_MOUNTS) is None
    own_data_root = f"701 612 254:1 /containers/{CID}/hosts /etc/hosts rw - ext4 /dev/vdb rw\n"
    assert container_id_in(own_data_root) == CID
    elsewhere = f"90 27 254:0 /var/lib/docker/containers/{CID}/hostname /mnt/h rw - ext4 x rw\n"
    assert container_id_in(elsewhere) is None


@pytest.fixture
def in_container(monkeypatch: pytest.MonkeyPatch) -> str:
    for module in (owners, provision, host_read):
        monkeypatch.setattr(module, "own_container", lambda: CID)
    return CID


class FakeApi:
    def __init__(self, running: bool | None, pids: list[int], fail: bool = False) -> None:
        self.running, self.pids, self.fail = running, pids, fail

    def inspect_container(self, container: str) -> dict[str, Any]:
        if self.fail:
            raise DockerException("engine gone")
        if self.running is None:
            raise NotFound("no such container")
        return {"State": {"Running": self.running}}

    def top(self, container: str) -> dict[str, Any]:
        rows = [["0", str(pid), "x"] for pid in self.pids]
        return {"Titles": ["UID", "PID", "CMD"], "Processes": rows}


def _engine(monkeypatch: pytest.MonkeyPatch, api: FakeApi) -> None:
    class Client:
        def __init__(self) -> None:
            self.api = api

        def close(self) -> None:
            pass

    monkeypatch.setattr(owners.docker, "from_env", lambda **_: Client())


def test_tags_name_the_container_of_their_process(in_container: str) -> None:
    tag = owner_tag()
    assert tag == f"{os.getpid()}:{process_start(os.getpid())}@{CID}"
    assert parse_owner(tag) == Owner(os.getpid(), str(process_start(os.getpid())), CID)
    assert parse_owner(PERSISTENT_OWNER) is None and parse_owner("") is None
    assert owner_alive(tag)


def test_a_container_counts_host_processes_as_alive(in_container: str) -> None:
    """It cannot see them: the host's labs are never its to reap."""
    assert owner_alive("999999999:12345")
    assert not owner_alive("not-a-tag")


def test_another_containers_owner_lives_while_its_container_runs(
    in_container: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    tag = f"7:12345@{OTHER}"
    _engine(monkeypatch, FakeApi(running=True, pids=[]))
    assert owner_alive(tag)
    _engine(monkeypatch, FakeApi(running=False, pids=[]))
    assert not owner_alive(tag)
    _engine(monkeypatch, FakeApi(running=None, pids=[]))
    assert not owner_alive(tag)
    _engine(monkeypatch, FakeApi(running=True, pids=[], fail=True))
    assert owner_alive(tag), "an engine that does not answer proves nothing"


def test_on_the_host_a_containers_owner_must_be_one_of_its_processes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The host finds the owner among the container's processes by its innermost id and its
    start time: here this test's own process stands for the container's."""
    monkeypatch.setattr(owners, "own_container", lambda: None)
    me = os.getpid()
    with open(f"/proc/{me}/status") as status:
        inner = next(line for line in status if line.startswith("NSpid:")).split()[-1]
    start = str(process_start(me))
    _engine(monkeypatch, FakeApi(running=True, pids=[1, me]))
    assert owner_alive(f"{inner}:{start}@{CID}")
    assert not owner_alive(f"{inner}:1{start}@{CID}"), "another start: a reused id"
    _engine(monkeypatch, FakeApi(running=True, pids=[1]))
    assert not owner_alive(f"{inner}:{start}@{CID}")
    _engine(monkeypatch, FakeApi(running=False, pids=[me]))
    assert not owner_alive(f"{inner}:{start}@{CID}")


def test_host_tags_are_checked_on_the_host_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(owners, "own_container", lambda: None)
    assert owner_tag() == f"{os.getpid()}:{process_start(os.getpid())}"
    assert owner_alive(owner_tag())
    assert not owner_alive("999999999:12345")
    assert owner_alive(PERSISTENT_OWNER)


def test_a_container_reads_devices_through_docker(in_container: str) -> None:
    host_read.can_enter.cache_clear()
    try:
        assert not host_read.can_enter()
    finally:
        host_read.can_enter.cache_clear()


def test_a_container_checks_the_hosts_engine_and_fixes_only_its_settings(
    in_container: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(provision, "engine_version", lambda: None)
    monkeypatch.setattr(provision, "settings_current", lambda _image: True)
    names = [req.name for req in provision.requirements()]
    assert names == ["engine", "image", "plugin", "settings"]
    checks = {check.name: check for check in provision.doctor()}
    assert checks["engine"].fix == provision.MOUNT_SOCKET
    assert "-v /var/run/docker.sock:/var/run/docker.sock" in provision.MOUNT_SOCKET
    assert checks["image"].fix == provision.SETUP_ON_HOST
    [report] = provision.setup()
    assert report.name == "engine" and report.action == "failed"
    assert provision.MOUNT_SOCKET in report.detail
