"""Device ports on the host's loopback address: Kathará's ``port`` option, kept on this machine.

Kathará publishes a device port through Docker, which needs the device bridged to the host's
network. netdojo binds the host end on 127.0.0.1 before the lab is deployed (a port in use
refuses the lab before anything exists) and hands the sockets to a relay process of their own,
which outlives a `netdojo lab up`. For each connection (or UDP peer) the relay opens a socket
inside the device's network namespace, to the port on the device's own loopback address: the
device gets no interface, route or address towards the host, and cannot open anything outward.
The relay ends when its devices are gone, or when the lab is torn down.

``python -m netdojo.labs.ports ENTRIES`` is the relay; ENTRIES is JSON written by `start_relay`.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from netdojo.labs.errors import LabError
from netdojo.labs.owners import owner_alive, owner_tag, process_start
from netdojo.labs.paths import sub_dir
from netdojo.labs.spec import LabSpec, PortSpec

LOOPBACK = "127.0.0.1"
CLONE_NEWNET = 0x40000000
WATCH_S = 0.5
CHUNK = 65536
MAX_UDP_PEERS = 256


@dataclass
class Listener:
    device: str
    port: PortSpec
    sock: socket.socket


class RelayEntry(BaseModel):
    fd: int
    pid: int
    start: str
    port: int
    protocol: str


def open_listeners(spec: LabSpec) -> list[Listener]:
    """Bind every device port of ``spec`` on 127.0.0.1; `LabError` naming the first that fails."""
    wanted = [(dev.name, port) for dev in spec.devices for port in dev.ports]
    if wanted and os.geteuid() != 0:
        raise LabError("device ports need root: the relay enters each device's network namespace")
    listeners: list[Listener] = []
    try:
        for device, port in wanted:
            kind = socket.SOCK_STREAM if port.protocol == "tcp" else socket.SOCK_DGRAM
            sock = socket.socket(socket.AF_INET, kind)
            listeners.append(Listener(device, port, sock))
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind((LOOPBACK, port.host))
            except OSError as exc:
                raise LabError(
                    f"port {port.host}/{port.protocol} of device {device!r} cannot be bound on "
                    f"{LOOPBACK}: {exc.strerror}; choose another host port"
                ) from None
            if kind == socket.SOCK_STREAM:
                sock.listen(64)
    except BaseException:
        close_listeners(listeners)
        raise
    return listeners


def close_listeners(listeners: list[Listener]) -> None:
    for listener in listeners:
        listener.sock.close()


def _relay_file(deploy_id: str) -> Path:
    return sub_dir("relays") / deploy_id


def start_relay(deploy_id: str, listeners: list[Listener], pids: dict[str, int]) -> None:
    """Hand ``listeners`` to a relay process into the devices whose init ``pids`` are given."""
    if not listeners:
        return
    entries = [
        RelayEntry(
            fd=listener.sock.fileno(),
            pid=pids[listener.device],
            start=process_start(pids[listener.device]) or "",
            port=listener.port.device,
            protocol=listener.port.protocol,
        ).model_dump()
        for listener in listeners
    ]
    child = subprocess.Popen(
        [sys.executable, "-m", "netdojo.labs.ports", json.dumps(entries)],
        pass_fds=[listener.sock.fileno() for listener in listeners],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    _relay_file(deploy_id).write_text(owner_tag(child.pid))
    close_listeners(listeners)


def stop_relay(deploy_id: str) -> None:
    """End the relay of a deployment, if it has one and it still runs."""
    path = _relay_file(deploy_id)
    with contextlib.suppress(FileNotFoundError):
        tag = path.read_text().strip()
        if owner_alive(tag):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(tag.partition(":")[0]), signal.SIGTERM)
        path.unlink()


# the relay process --------------------------------------------------------------------------
def _socket_in(namespace: int, kind: int) -> socket.socket:
    """A socket created inside the network namespace open at fd ``namespace``.

    A thread of its own enters the namespace (it affects only that thread) and ends.
    """
    made: list[socket.socket] = []
    failed: list[int] = []

    def create() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.setns(namespace, CLONE_NEWNET) != 0:
            failed.append(ctypes.get_errno())
            return
        made.append(socket.socket(socket.AF_INET, kind))

    thread = threading.Thread(target=create)
    thread.start()
    thread.join()
    if failed:
        raise OSError(failed[0], os.strerror(failed[0]))
    return made[0]


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(CHUNK):
            sink.sendall(data)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


def _serve_tcp(server: socket.socket, namespace: int, port: int) -> None:
    while True:
        client, _ = server.accept()
        try:
            upstream = _socket_in(namespace, socket.SOCK_STREAM)
            upstream.connect((LOOPBACK, port))
        except OSError:
            client.close()
            continue
        for source, sink in ((client, upstream), (upstream, client)):
            threading.Thread(target=_pipe, args=(source, sink), daemon=True).start()


def _serve_udp(server: socket.socket, namespace: int, port: int) -> None:
    peers: dict[tuple[str, int], socket.socket] = {}

    def answer(upstream: socket.socket, peer: tuple[str, int]) -> None:
        with contextlib.suppress(OSError):
            while True:
                server.sendto(upstream.recv(CHUNK), peer)

    while True:
        data, peer = server.recvfrom(CHUNK)
        upstream = peers.get(peer)
        if upstream is None:
            if len(peers) >= MAX_UDP_PEERS:
                peers.pop(next(iter(peers))).close()
            upstream = peers[peer] = _socket_in(namespace, socket.SOCK_DGRAM)
            upstream.connect((LOOPBACK, port))
            threading.Thread(target=answer, args=(upstream, peer), daemon=True).start()
        with contextlib.suppress(OSError):
            upstream.send(data)


def relay(entries: list[RelayEntry]) -> None:
    """Serve every entry until one of its devices is gone."""
    namespaces = {e.pid: os.open(f"/proc/{e.pid}/ns/net", os.O_RDONLY) for e in entries}
    for entry in entries:
        kind = socket.SOCK_STREAM if entry.protocol == "tcp" else socket.SOCK_DGRAM
        server = socket.socket(fileno=entry.fd)
        serve = _serve_tcp if kind == socket.SOCK_STREAM else _serve_udp
        threading.Thread(
            target=serve, args=(server, namespaces[entry.pid], entry.port), daemon=True
        ).start()
    while all(process_start(e.pid) == e.start for e in entries):
        time.sleep(WATCH_S)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    entries = [RelayEntry.model_validate(item) for item in json.loads(args[0])]
    relay(entries)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
