"""The port relay, on this machine's own network namespace: a device port reached on
127.0.0.1 over TCP and UDP, and the relay gone with its device or its lab."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from netdojo.labs.errors import LabError
from netdojo.labs.ports import open_listeners, start_relay, stop_relay
from netdojo.labs.spec import LabSpec

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="entering a namespace needs root")


def _free_port(kind: int) -> int:
    with socket.socket(socket.AF_INET, kind) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def echo() -> Iterator[tuple[int, int]]:
    """TCP and UDP echo servers on 127.0.0.1: the "device's" services."""
    tcp = socket.create_server(("127.0.0.1", 0))
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))

    def serve_tcp() -> None:
        while True:
            try:
                conn, _ = tcp.accept()
            except OSError:
                return
            with conn:
                while data := conn.recv(1024):
                    conn.sendall(data)

    def serve_udp() -> None:
        while True:
            try:
                data, peer = udp.recvfrom(1024)
            except OSError:
                return
            udp.sendto(data.upper(), peer)

    for target in (serve_tcp, serve_udp):
        threading.Thread(target=target, daemon=True).start()
    yield tcp.getsockname()[1], udp.getsockname()[1]
    tcp.close()
    udp.close()


@pytest.fixture
def device() -> Iterator[subprocess.Popen[bytes]]:
    """A process standing for a device's first process (its namespace is this machine's)."""
    process = subprocess.Popen(["sleep", "60"])
    yield process
    process.kill()
    process.wait()


def _spec(tcp: int, udp: int) -> LabSpec:
    ports = [
        {"host": _free_port(socket.SOCK_STREAM), "device": tcp, "protocol": "tcp"},
        {"host": _free_port(socket.SOCK_DGRAM), "device": udp, "protocol": "udp"},
    ]
    return LabSpec.build(name="ports", devices=[{"name": "web", "ports": ports}])


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def test_the_relay_carries_tcp_and_udp_and_ends_with_its_device(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    echo: tuple[int, int],
    device: subprocess.Popen[bytes],
) -> None:
    monkeypatch.setenv("NETDOJO_HOME", str(tmp_path))
    spec = _spec(*echo)
    tcp_port, udp_port = (port.host for port in spec.device("web").ports)
    start_relay("deploy1", open_listeners(spec), {"web": device.pid})
    with socket.create_connection(("127.0.0.1", tcp_port), timeout=5) as conn:
        conn.sendall(b"hello device")
        assert conn.recv(1024) == b"hello device"
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        udp.settimeout(5)
        udp.sendto(b"ping", ("127.0.0.1", udp_port))
        assert udp.recvfrom(1024)[0] == b"PING"
    assert not _bindable(tcp_port)
    device.kill()
    device.wait()  # a device gone is reaped by its container runtime
    deadline = time.monotonic() + 5
    while not _bindable(tcp_port):
        assert time.monotonic() < deadline, "the relay outlived its device"
        time.sleep(0.1)


def test_stopping_a_lab_stops_its_relay(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    echo: tuple[int, int],
    device: subprocess.Popen[bytes],
) -> None:
    monkeypatch.setenv("NETDOJO_HOME", str(tmp_path))
    spec = _spec(*echo)
    tcp_port = spec.device("web").ports[0].host
    start_relay("deploy2", open_listeners(spec), {"web": device.pid})
    assert (tmp_path / "relays" / "deploy2").exists()
    stop_relay("deploy2")
    assert not (tmp_path / "relays" / "deploy2").exists()
    deadline = time.monotonic() + 5
    while not _bindable(tcp_port):
        assert time.monotonic() < deadline, "the relay outlived its lab"
        time.sleep(0.1)
    stop_relay("deploy2")  # a second stop finds nothing to do


def test_a_port_in_use_refuses_the_lab_before_it_exists(echo: tuple[int, int]) -> None:
    spec = _spec(*echo)
    taken = spec.device("web").ports[0].host
    with socket.create_server(("127.0.0.1", taken)), pytest.raises(LabError) as caught:
        open_listeners(spec)
    assert str(caught.value) == (
        f"port {taken}/tcp of device 'web' cannot be bound on 127.0.0.1: Address already in "
        "use; choose another host port"
    )
    assert _bindable(taken)
