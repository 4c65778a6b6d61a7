"""A lab folder using Kathará's device options deploys and behaves as lab.conf says: sysctls
and MAC addresses read back from the devices, lab.dep's start order, environment, ulimits, a
port on loopback; `lab info` shows it, `lab connect` opens a real terminal in a device."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import docker
import pytest

from netdojo.labs.kathara_backend import LAB_LABEL

from .labcli import NETDOJO, free_port, lab_up, netdojo, write_lab
from .leftovers import leftovers, new_since

SPINE_MAC = "02:42:0a:00:01:01"
HOST_MAC = "02:42:0a:00:02:10"
START_ORDER = ["spine", "leaf", "h1"]


def _folder(root: Path, port: int) -> Path:
    conf = f"""\
LAB_NAME="Fabric with Kathara options"
LAB_DESCRIPTION="A spine, a leaf and a host: sysctl, MAC addresses, lab.dep, num_terms"
LAB_VERSION=1.0
LAB_AUTHOR="netdojo tests"

spine[0]="left/{SPINE_MAC}"
spine[image]="kathara/frr"
spine[sysctl]="net.ipv4.fib_multipath_hash_policy=1"
spine[num_terms]=2

leaf[0]="left"
leaf[1]="hosts"
leaf[sysctl]="net.ipv4.conf.all.arp_ignore=1"
leaf[env]="ROLE=leaf"
leaf[ulimit]="nofile=2048:4096"
leaf[port]="{port}:8000"
leaf[num_terms]=0

h1[0]="hosts/{HOST_MAC.upper()}"
h1[image]="kathara/base"
"""
    return write_lab(
        root,
        {
            "lab.conf": conf,
            "lab.dep": "# the leaf after the spine, then the host\nleaf: spine\nh1: leaf\n",
            "spine.startup": "ip address add 10.0.1.1/24 dev eth0\n",
            "leaf.startup": (
                "ip address add 10.0.1.2/24 dev eth0\n"
                "ip address add 10.0.2.1/24 dev eth1\n"
                "python3 -m http.server 8000 --bind 127.0.0.1 >/dev/null 2>&1 &\n"
            ),
            "h1.startup": "ip address add 10.0.2.10/24 dev eth0\n",
        },
    )


@dataclass
class Fabric:
    name: str
    port: int
    up_out: str
    up_err: str
    up_code: int


@pytest.fixture(scope="module")
def fabric(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fabric]:
    before = leftovers()
    port = free_port()
    folder = _folder(tmp_path_factory.mktemp("lab") / "fabric", port)
    name = "fabric-options"
    with lab_up(folder, name) as up:
        yield Fabric(name, port, up.stdout, up.stderr, up.returncode)
    assert new_since(before) == {}
    with socket.socket() as sock:  # the relay has gone with the lab: the port is free again
        deadline = time.monotonic() + 5
        while True:
            try:
                sock.bind(("127.0.0.1", port))
                break
            except OSError:
                assert time.monotonic() < deadline, f"port {port} still held after lab down"
                time.sleep(0.2)


def _exec(fabric: Fabric, device: str, *argv: str) -> str:
    done = netdojo("lab", "exec", fabric.name, device, "--", *argv)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_lab_up_prints_warnings_description_and_devices(fabric: Fabric) -> None:
    assert fabric.up_code == 0, fabric.up_out + fabric.up_err
    warnings = [line for line in fabric.up_err.splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: lab.conf line 9: num_terms of 'spine' ignored: netdojo opens no terminals; "
        "use `netdojo lab connect LAB DEVICE`",
        "warning: lab.conf line 17: num_terms of 'leaf' ignored: netdojo opens no terminals; "
        "use `netdojo lab connect LAB DEVICE`",
    ]
    assert "Warning" not in fabric.up_err and "warnings.warn" not in fabric.up_err
    assert "A spine, a leaf and a host: sysctl, MAC addresses, lab.dep, num_terms" in fabric.up_out
    assert "Fabric with Kathara options" in fabric.up_out
    for device in START_ORDER:
        assert device in fabric.up_out
    assert SPINE_MAC in fabric.up_out and "10.0.2.10/24" in fabric.up_out


def test_sysctls_read_back(fabric: Fabric) -> None:
    assert _exec(fabric, "spine", "sysctl", "-n", "net.ipv4.fib_multipath_hash_policy") == "1\n"
    assert _exec(fabric, "leaf", "sysctl", "-n", "net.ipv4.conf.all.arp_ignore") == "1\n"
    assert _exec(fabric, "h1", "sysctl", "-n", "net.ipv4.fib_multipath_hash_policy") == "0\n"


def test_mac_addresses_read_back_and_reach_the_wire(fabric: Fabric) -> None:
    spine = json.loads(_exec(fabric, "spine", "ip", "-j", "link", "show", "eth0"))
    host = json.loads(_exec(fabric, "h1", "ip", "-j", "link", "show", "eth0"))
    assert (spine[0]["address"], host[0]["address"]) == (SPINE_MAC, HOST_MAC)
    _exec(fabric, "leaf", "ping", "-c", "1", "-W", "2", "10.0.1.1")
    _exec(fabric, "leaf", "ping", "-c", "1", "-W", "2", "10.0.2.10")
    neighbours = json.loads(_exec(fabric, "leaf", "ip", "-j", "neigh", "show"))
    learned = {entry["dst"]: entry.get("lladdr") for entry in neighbours}
    assert learned["10.0.1.1"] == SPINE_MAC and learned["10.0.2.10"] == HOST_MAC


def test_devices_start_in_lab_dep_order(fabric: Fabric) -> None:
    client = docker.from_env()
    try:
        found = client.containers.list(all=True, filters={"label": f"{LAB_LABEL}={fabric.name}"})
        started = {c.labels["name"]: _instant(c.attrs["State"]["StartedAt"]) for c in found}
    finally:
        client.close()
    assert sorted(started, key=started.__getitem__) == START_ORDER, started


def _instant(text: str) -> tuple[datetime, float]:
    """Docker's RFC 3339 time with up to nine decimals (trailing zeros dropped), comparable."""
    whole, _, fraction = text.rstrip("Z").partition(".")
    return datetime.fromisoformat(whole), float(f"0.{fraction or 0}")


def test_environment_and_ulimits_reach_the_device(fabric: Fabric) -> None:
    assert _exec(fabric, "leaf", "printenv", "ROLE") == "leaf\n"
    assert _exec(fabric, "leaf", "sh", "-c", "ulimit -Sn; ulimit -Hn") == "2048\n4096\n"
    assert _exec(fabric, "spine", "sh", "-c", "ulimit -Sn") == "4096\n", "netdojo's default"


def test_a_port_is_reachable_on_loopback_only(fabric: Fabric) -> None:
    deadline = time.monotonic() + 20
    while True:
        try:
            with socket.create_connection(("127.0.0.1", fabric.port), timeout=5) as conn:
                conn.sendall(b"GET / HTTP/1.0\r\n\r\n")
                answer = conn.recv(64)
            if answer.startswith(b"HTTP/1.0 200"):
                break
        except OSError:
            pass
        assert time.monotonic() < deadline, "the device's web server never answered"
        time.sleep(0.3)
    listening = [
        line.split()[1]
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]
        if line.split()[3] == "0A" and int(line.split()[1].split(":")[1], 16) == fabric.port
    ]
    assert listening == [f"0100007F:{fabric.port:04X}"], "bound on 127.0.0.1 and nowhere else"
    routes = _exec(fabric, "leaf", "ip", "route", "show", "default")
    assert routes == "", "the device got no way towards the host"


def test_lab_info_shows_the_running_lab(fabric: Fabric) -> None:
    table = netdojo("lab", "info", fabric.name)
    assert table.returncode == 0, table.stderr
    for text in (*START_ORDER, "running", "left", "hosts", SPINE_MAC, "10.0.1.2/24"):
        assert text in table.stdout, text
    shown = json.loads(netdojo("lab", "info", fabric.name, "--json").stdout)
    assert [device["name"] for device in shown] == ["spine", "leaf", "h1"]
    leaf = shown[1]
    assert leaf["state"] == "running"
    assert [(i["name"], i["link"], i["addresses"]) for i in leaf["interfaces"]] == [
        ("eth0", "left", ["10.0.1.2/24"]),
        ("eth1", "hosts", ["10.0.2.1/24"]),
    ]
    missing = netdojo("lab", "info", "no-such-lab")
    assert missing.returncode == 2 and missing.stderr.startswith("error: no lab named")


def _terminal(
    argv: list[str], lines: list[bytes], until: bytes, timeout: float = 60
) -> tuple[str, int]:
    """Run ``argv`` on a new pseudo-terminal: type each of ``lines`` at a new prompt (typed
    ahead, a line's echo and the output before it could interleave), read until ``until`` has
    appeared and the program has ended. Returns what the terminal showed and the exit
    status."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the terminal is its standard input and output
        os.execvpe(argv[0], argv, {**os.environ, "TERM": "xterm", "COLUMNS": "200"})
    shown = b""
    typed = 0
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:  # EIO: the program ended and closed the terminal
                    break
                if not chunk:
                    break
                shown += chunk
            prompts = shown.count(b"# ") + shown.count(b"$ ")
            if typed < len(lines) and prompts > typed:
                os.write(fd, lines[typed])
                typed += 1
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(fd)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown.decode(errors="replace"))
    assert until.decode() in text, text[-2000:]
    return text, os.waitstatus_to_exitcode(status)


def test_lab_connect_opens_a_real_terminal_in_the_device(fabric: Fabric) -> None:
    text, code = _terminal(
        [NETDOJO, "lab", "connect", fabric.name, "leaf"],
        [b"echo MARK-$((6*7))\r", b"hostname\r", b"tty\r", b"exit\r"],
        until=b"MARK-42",
    )
    assert code == 0, text[-2000:]
    assert re.search(r"hostname\r\n\r?leaf\r\n", text), "the shell runs in the device"
    assert "/dev/pts/" in text, "with a terminal of its own"


def test_lab_connect_names_the_devices_of_an_unknown_one(fabric: Fabric) -> None:
    text, code = _terminal([NETDOJO, "lab", "connect", fabric.name, "r9"], [], until=b"error:")
    assert code == 2
    assert "unknown device 'r9'; devices are: h1, leaf, spine" in text
