"""Containment of a device that runs whatever it likes (as if an agent had escaped the tool
allowlists): resource limits, the seccomp profile, capabilities, mounts, and no path to the
host, another lab or a listening endpoint off loopback."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import httpx
import pytest

from netdojo.labs.runtime import LiveLab, deploy_lab
from netdojo.labs.samples import ospf_converged, ospf_ring
from netdojo.labs.spec import LabSpec, Limits
from netdojo.servers.serving import free_port

pytestmark = pytest.mark.anyio
NETDOJO = str(Path(sys.executable).parent / "netdojo")
HOST_LIMITS = Limits(memory_mib=64, cpus=0.5, pids=64)
CAPABILITIES = [
    "CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID",
    "SETPCAP", "LINUX_IMMUTABLE", "NET_BIND_SERVICE", "NET_BROADCAST", "NET_ADMIN", "NET_RAW",
    "IPC_LOCK", "IPC_OWNER", "SYS_MODULE", "SYS_RAWIO", "SYS_CHROOT", "SYS_PTRACE", "SYS_PACCT",
    "SYS_ADMIN", "SYS_BOOT", "SYS_NICE", "SYS_RESOURCE", "SYS_TIME", "SYS_TTY_CONFIG", "MKNOD",
    "LEASE", "AUDIT_WRITE", "AUDIT_CONTROL", "SETFCAP", "MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG",
    "WAKE_ALARM", "BLOCK_SUSPEND", "AUDIT_READ", "PERFMON", "BPF", "CHECKPOINT_RESTORE",
]  # fmt: skip
# Docker's default set, plus what Kathará adds for routing daemons (FRR will not start without
# SYS_ADMIN in its bounding set; the seccomp profile takes away what SYS_ADMIN would open).
EXPECTED_CAPABILITIES = {
    "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID", "SETPCAP",
    "NET_BIND_SERVICE", "NET_RAW", "SYS_CHROOT", "MKNOD", "AUDIT_WRITE", "SETFCAP",
    "NET_ADMIN", "NET_BROADCAST", "SYS_ADMIN",
}  # fmt: skip
# Mount points a device may have: its root, the kernel file systems Docker gives every
# container (with their masked and read-only paths), and the three files Docker writes.
MOUNT_POINTS = {"/", "/etc/resolv.conf", "/etc/hostname", "/etc/hosts"}
MOUNT_PREFIXES = ("/proc", "/dev", "/sys")
# Each call answers EPERM under the profile; with CAP_SYS_ADMIN alone most would succeed.
SYSCALL_PROBE = """
import ctypes, json, os, platform
libc = ctypes.CDLL(None, use_errno=True)
NR = {
    "x86_64": {"bpf": 321, "perf_event_open": 298, "fsopen": 430, "open_tree": 428,
               "keyctl": 250, "userfaultfd": 323, "io_uring_setup": 425, "pivot_root": 155,
               "clone": 56, "clone3": 435},
    "aarch64": {"bpf": 280, "perf_event_open": 241, "fsopen": 430, "open_tree": 428,
                "keyctl": 219, "userfaultfd": 282, "io_uring_setup": 425, "pivot_root": 41,
                "clone": 220, "clone3": 435},
}[platform.machine()]
def errno(ret):
    return 0 if ret >= 0 else ctypes.get_errno()
out = {
    "mount": errno(libc.mount(b"none", b"/mnt", b"tmpfs", 0, None)),
    "umount2": errno(libc.umount2(b"/proc/sys", 0)),
    "unshare": errno(libc.unshare(0x00020000)),
    "setns": errno(libc.setns(os.open("/proc/self/ns/net", os.O_RDONLY), 0x40000000)),
    "syslog": errno(libc.klogctl(3, ctypes.create_string_buffer(64), 64)),
}
for name in ("bpf", "perf_event_open", "fsopen", "open_tree", "keyctl", "userfaultfd",
             "io_uring_setup", "pivot_root", "clone3"):
    out[name] = errno(libc.syscall(NR[name], 0, 0, 0, 0, 0))
child = libc.syscall(NR["clone"], 0x40000000 | 17, 0, 0, 0, 0)  # CLONE_NEWNET | SIGCHLD
if child == 0:
    os._exit(0)
if child > 0:
    os.waitpid(child, 0)
out["clone_newnet"] = errno(child)
print(json.dumps(out))
"""
# A new session escapes the timeout's process group; quiet stdio lets the exec return.
FORK_BOMB = [
    "python3", "-c",
    "import os\nos.setsid()\nquiet = os.open('/dev/null', os.O_RDWR)\n"
    "for fd in (0, 1, 2):\n    os.dup2(quiet, fd)\n"
    "while True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
]  # fmt: skip
MEMORY_HOG = ["python3", "-c", "hog = []\nwhile True:\n    hog.append(b'x' * (8 << 20))"]
ENDLESS_LOOPS = ["bash", "-c", "while :; do :; done & while :; do :; done"]


def _jail_spec() -> LabSpec:
    spec = ospf_ring(2, 2, name="jail")
    for device in spec.devices:
        if device.role == "host":
            device.limits = HOST_LIMITS
    return spec


@pytest.fixture(scope="module")
async def jail() -> AsyncIterator[LiveLab]:
    """Two FRR routers, two hosts with tight limits: h1 takes the fork bombs, h2 the rest."""
    async with deploy_lab(_jail_spec(), converged=ospf_converged) as lab:
        yield lab


async def _cgroup(lab: LiveLab, device: str, *names: str) -> str:
    """The first cgroup file of ``names`` the device has, read from inside it; a v1 name is
    ``controller/file``, a v2 name just ``file``."""
    for name in names:
        read = await lab.exec(device, ["cat", f"/sys/fs/cgroup/{name}"])
        if read.ok:
            return read.stdout
    raise AssertionError(f"{device}: none of the cgroup files {names}")


async def _cpu_seconds(lab: LiveLab, device: str) -> float:
    usage = await _cgroup(lab, device, "cpuacct/cpuacct.usage", "cpu.stat")
    if usage.startswith("usage_usec"):
        return _counter(usage, "usage_usec") / 1e6
    return int(usage) / 1e9


async def _pids(lab: LiveLab, device: str) -> int:
    """The device's process count, seen from the host (an exec may not fork at the limit)."""
    stats = await anyio.to_thread.run_sync(lambda: lab._container(device).stats(stream=False))
    return int(stats["pids_stats"].get("current", 0))


def _counter(text: str, key: str) -> int:
    return int(dict(line.split() for line in text.splitlines() if line.strip())[key])


def _host_can_fork() -> bool:
    return subprocess.run(["true"], check=False).returncode == 0


def _host_ipv4() -> list[str]:
    shown = subprocess.run(["ip", "-j", "-4", "address"], capture_output=True, check=True)
    return [
        a["local"]
        for link in json.loads(shown.stdout)
        for a in link.get("addr_info", [])
        if not a["local"].startswith("127.")
    ]


async def test_devices_get_their_limits_and_no_more_privileges(jail: LiveLab) -> None:
    for spec in jail.spec.devices:
        container = jail._container(spec.name)
        container.reload()
        config = container.attrs["HostConfig"]
        assert config["Memory"] == spec.limits.memory_mib * 2**20
        assert config["NanoCpus"] == int(spec.limits.cpus * 1e9)
        assert config["PidsLimit"] == spec.limits.pids
        assert not config["Privileged"] and not config.get("Devices")
        assert not config.get("Binds") and not config.get("Mounts")
        assert config["PidMode"] in ("", "private") and config["IpcMode"] in ("private", "")
        assert config["NetworkMode"] not in ("host", "bridge", "default")
        assert any(opt.startswith("seccomp={") for opt in config["SecurityOpt"])
        status = (await jail.exec(spec.name, ["cat", "/proc/self/status"])).stdout
        effective = int(
            next(x for x in status.splitlines() if x.startswith("CapEff")).split()[1], 16
        )
        held = {name for bit, name in enumerate(CAPABILITIES) if effective >> bit & 1}
        assert held == EXPECTED_CAPABILITIES, spec.name
        mounts = (await jail.exec(spec.name, ["cat", "/proc/self/mounts"])).stdout
        points = {line.split()[1] for line in mounts.splitlines()}
        stray = {p for p in points if p not in MOUNT_POINTS and not p.startswith(MOUNT_PREFIXES)}
        assert not stray and "docker.sock" not in mounts, stray
        for socket_path in ("/var/run/docker.sock", "/run/docker.sock", "/run/containerd"):
            assert not (await jail.exec(spec.name, ["test", "-e", socket_path])).ok


async def test_a_device_cannot_mount_or_change_namespaces(jail: LiveLab) -> None:
    probe = await jail.exec("r1", ["python3", "-c", SYSCALL_PROBE])
    assert probe.ok, probe.stderr
    errnos = json.loads(probe.stdout)
    assert errnos.pop("clone3") == 38, "clone3 answers ENOSYS: the C library falls back to clone"
    assert set(errnos.values()) == {1}, f"every call must answer EPERM: {errnos}"
    escapes = [
        ["mount", "-t", "cgroup", "-o", "memory", "cgroup", "/mnt"],  # the host's release_agent
        ["mount", "-o", "remount,rw", "/proc/sys"],  # host-wide kernel.core_pattern
        ["unshare", "--mount", "--user", "true"],
        ["nsenter", "--target", "1", "--net", "true"],
        ["dmesg"],
    ]
    for argv in escapes:
        done = await jail.exec("r1", argv)
        assert done.exit_code not in (0, None), (argv, done.stdout)
    forwarding = "/proc/sys/net/ipv4/ip_forward"
    assert not (await jail.exec("r1", ["sh", "-c", f"echo 0 > {forwarding}"])).ok
    assert await ospf_converged(jail), "FRR runs under the profile"


async def test_a_memory_hog_is_killed_at_the_limit(jail: LiveLab) -> None:
    hog = await jail.exec("h2", MEMORY_HOG, timeout=60)
    assert hog.exit_code == 137 and not hog.timed_out, (hog.exit_code, hog.stderr)
    limit = HOST_LIMITS.memory_mib * 2**20
    peak = await _cgroup(jail, "h2", "memory/memory.max_usage_in_bytes", "memory.peak")
    assert int(peak) <= limit
    assert (await jail.exec("h2", ["true"])).ok, "the device lives on"
    jail._container("h2").reload()
    assert jail._container("h2").status == "running"


async def test_endless_loops_end_with_their_timeout_within_the_cpu_quota(jail: LiveLab) -> None:
    quota = await _cgroup(jail, "h2", "cpu/cpu.cfs_quota_us", "cpu.max")
    period = await _cgroup(jail, "h2", "cpu/cpu.cfs_period_us", "cpu.max")
    assert int(quota.split()[0]) / int(period.split()[-1]) == HOST_LIMITS.cpus
    used = await _cpu_seconds(jail, "h2")
    loop = await jail.exec("h2", ENDLESS_LOOPS, timeout=3)
    assert loop.timed_out and loop.duration_s < 8
    spent = await _cpu_seconds(jail, "h2") - used
    assert spent <= HOST_LIMITS.cpus * loop.duration_s + 0.3, "two busy loops, half a core"
    running = (await jail.exec("h2", ["ps", "-eo", "args="])).stdout.splitlines()
    assert not [p for p in running if p.startswith("bash -c while")], "the group is gone"


async def test_a_device_reaches_neither_the_host_nor_another_lab(jail: LiveLab) -> None:
    """r1 adds a default route of its own and knocks on every host address (where a listener
    answers the host itself) and on a second lab's devices, whose link is captured."""
    addresses = _host_ipv4()
    knocks: list[object] = []
    listener = await anyio.create_tcp_listener(local_host="0.0.0.0", local_port=free_port())
    port = listener.extra(anyio.abc.SocketAttribute.local_port)

    async def accept(stream: anyio.abc.SocketStream) -> None:
        knocks.append(stream.extra(anyio.abc.SocketAttribute.remote_address))
        await stream.aclose()

    captured: list[str] = []

    async def capture(lab: LiveLab) -> None:
        argv = ["tcpdump", "-n", "-l", "-i", "eth0", "ip or arp"]
        captured.append((await lab.exec("n1", argv, timeout=5 + 2 * len(addresses))).stdout)

    async with (
        listener,
        deploy_lab(_neighbour_spec()) as neighbour,
        anyio.create_task_group() as group,
    ):
        group.start_soon(listener.serve, accept)
        for address in addresses:
            await anyio.to_thread.run_sync(_connect, address, port)
        await anyio.sleep(0.3)
        assert len(knocks) == len(addresses), "the listener answers on every host address"
        assert (await jail.exec("r1", ["ip", "route", "show", "default"])).stdout == ""
        assert (await jail.exec("r1", ["ip", "route", "add", "default", "dev", "eth0"])).ok
        group.start_soon(capture, neighbour)
        await anyio.sleep(1)
        try:
            for address in addresses:
                knock = await jail.exec("r1", ["nc", "-z", "-w", "1", address, str(port)])
                assert not knock.ok, address
            for address in ("10.50.0.1", "10.50.0.2"):
                ping = await jail.exec("r1", ["ping", "-c", "1", "-W", "1", address])
                assert not ping.ok, address
            assert (await neighbour.exec("n2", ["ping", "-c", "1", "10.50.0.1"])).ok
        finally:
            await jail.exec("r1", ["ip", "route", "del", "default"])
        with anyio.fail_after(30):
            while not captured:
                await anyio.sleep(0.2)
        group.cancel_scope.cancel()
    assert len(knocks) == len(addresses), "nothing from the lab reached the host"
    lines = captured[0].splitlines()
    assert any("10.50.0.2 > 10.50.0.1" in line for line in lines), "the capture works"
    assert not [line for line in lines if "10.0." in line or "10.1." in line], lines


async def test_a_device_resolves_names_only_inside_itself(jail: LiveLab) -> None:
    """Docker's embedded resolver would forward unknown names to the host's resolvers; every
    device asks its own loopback instead, where nothing answers."""
    for device in jail.devices:
        resolv = await jail.read_file(device, "/etc/resolv.conf")
        servers = [line.split()[1] for line in resolv.splitlines() if line.startswith("nameserver")]
        assert servers == ["127.0.0.1"], (device, resolv)
    lookup = await jail.exec("r1", ["getent", "hosts", "netdojo-nowhere.invalid"], timeout=10)
    assert lookup.exit_code == 2 and not lookup.timed_out, lookup


def _neighbour_spec() -> LabSpec:
    return LabSpec.build(
        name="neighbour",
        devices=[
            {"name": "n1", "role": "host", "startup": ["ip address add 10.50.0.1/24 dev eth0"]},
            {"name": "n2", "role": "host", "startup": ["ip address add 10.50.0.2/24 dev eth0"]},
        ],
        links=[{"name": "a", "endpoints": [("n1", 0), ("n2", 0)]}],
    )


def _connect(address: str, port: int) -> None:
    with socket.create_connection((address, port), timeout=2):
        pass


async def test_a_fork_bomb_is_held_by_the_pids_limit_until_the_lab_goes(jail: LiveLab) -> None:
    """The bomb leaves the timeout's process group, so it outlives its exec; the pids limit
    holds it, the devices beside it and the host work on, and the teardown removes it."""
    bomb = await jail.exec("h1", FORK_BOMB, timeout=2)
    assert bomb.exit_code is not None and bomb.duration_s < 30
    with anyio.fail_after(30):
        while await _pids(jail, "h1") < HOST_LIMITS.pids:
            await anyio.sleep(0.5)
    await anyio.sleep(2)
    assert await _pids(jail, "h1") == HOST_LIMITS.pids, "held at the limit, never past it"
    assert (await jail.exec("r1", ["true"])).ok and _host_can_fork()
    assert await ospf_converged(jail), "the routers beside it work on"


async def test_servers_listen_on_loopback_unless_told() -> None:
    """`netdojo green` and `netdojo mcp --http` (practice) without `--host`."""
    ports = {"green": free_port(), "mcp": free_port()}
    servers = [
        subprocess.Popen(
            [NETDOJO, *command, "--port", str(ports[command[0]])],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for command in (["green"], ["mcp", "--http"])
    ]
    try:
        async with httpx.AsyncClient(timeout=5) as http:
            for port in ports.values():
                with anyio.fail_after(90):
                    while True:
                        try:
                            await http.get(f"http://127.0.0.1:{port}/")
                            break
                        except httpx.ConnectError:
                            await anyio.sleep(0.2)
        for name, port in ports.items():
            assert _listeners(port) == {"127.0.0.1"}, (name, _listeners(port))
            for address in _host_ipv4():
                with pytest.raises(ConnectionRefusedError):
                    socket.create_connection((address, port), timeout=2).close()
    finally:
        for server in servers:
            server.send_signal(signal.SIGTERM)
        for server in servers:
            await anyio.to_thread.run_sync(server.wait, 30)


def _listeners(port: int) -> set[str]:
    """The local addresses with a socket listening on ``port`` (from /proc/net/tcp{,6})."""
    found: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, _, hex_port = local.partition(":")
            if state == "0A" and int(hex_port, 16) == port:
                raw = bytes.fromhex(address)
                if len(raw) == 4:
                    found.add(socket.inet_ntop(socket.AF_INET, raw[::-1]))
                else:
                    words = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))
                    found.add(socket.inet_ntop(socket.AF_INET6, words))
    return found
