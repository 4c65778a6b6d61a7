"""netdojo's deploy: the archive a device gets, the command that unpacks it, the worker pool."""

from __future__ import annotations

import base64
import io
import re
import tarfile
import threading

import pytest

from netdojo.labs.deploy import INLINE_LIMIT, _run_all, device_archive, unpack_command
from netdojo.labs.kathara_backend import Deployment
from netdojo.labs.kathara_lab import LOCAL_RESOLVER
from netdojo.labs.spec import DeviceSpec


def _members(archive: bytes) -> dict[str, bytes | None]:
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        return {
            m.name: (tar.extractfile(m).read() if m.isfile() else None)  # type: ignore[union-attr]
            for m in tar.getmembers()
        }


def test_the_archive_lays_files_out_as_kathara_does() -> None:
    device = DeviceSpec(
        name="r1",
        files={"/etc/frr/frr.conf": "router ospf\n", "/etc/frr/daemons": "ospfd=yes\n"},
        startup=["ip link set eth0 up", "/usr/lib/frr/frrinit.sh start"],
    )
    members = _members(device_archive(device))
    assert members["hostlab/r1/etc/frr/frr.conf"] == b"router ospf\n"
    assert members["hostlab/r1/etc/frr/daemons"] == b"ospfd=yes\n"
    assert members["hostlab/r1.startup"] == (
        f"{LOCAL_RESOLVER}\nip link set eth0 up\n/usr/lib/frr/frrinit.sh start\n".encode()
    )
    directories = {name for name, data in members.items() if data is None}
    assert directories == {"hostlab", "hostlab/r1", "hostlab/r1/etc", "hostlab/r1/etc/frr"}


def test_a_device_without_files_still_gets_its_startup_file() -> None:
    members = _members(device_archive(DeviceSpec(name="h1", role="host")))
    assert set(members) == {"hostlab", "hostlab/h1.startup"}


def test_the_unpack_command_carries_the_archive_verbatim_in_single_quotes() -> None:
    archive = device_archive(DeviceSpec(name="h1", files={"/x": "it's ok; $(no)\n"}))
    command = unpack_command(archive)
    found = re.fullmatch(
        r"printf %s '([A-Za-z0-9+/=]*)' \| base64 -d \| tar xzf - -C / .*", command
    )
    assert found is not None
    assert base64.b64decode(found.group(1)) == archive
    assert len(command) < INLINE_LIMIT


def test_the_first_failure_stops_the_work_not_begun_and_is_raised() -> None:
    deployment = Deployment("hash", "lab", "owner", {})
    done: list[int] = []
    lock = threading.Lock()

    def work(item: int) -> None:
        if item == 2:
            raise RuntimeError("device 2 failed")
        with lock:
            done.append(item)

    with pytest.raises(RuntimeError, match="device 2 failed"):
        _run_all(work, range(10), 1, deployment)
    assert deployment.stopped
    assert done == [0, 1]


def test_a_stopped_deployment_runs_nothing() -> None:
    deployment = Deployment("hash", "lab", "owner", {})
    deployment.stopped = True
    done: list[int] = []
    _run_all(done.append, range(5), 4, deployment)
    assert done == []
