"""A live OSPF lab: convergence, exec limits, files, FRR control, isolation and teardown."""

from __future__ import annotations

import json
import os

import anyio
import pytest

from netdojo.labs.errors import LabError, UnknownDeviceError
from netdojo.labs.host_read import owned_by
from netdojo.labs.kathara_lab import LOCAL_RESOLVER
from netdojo.labs.runtime import LiveLab, deploy_lab, start_lab, stop_lab
from netdojo.labs.samples import (
    DAEMONS,
    FRR_START,
    host_address,
    ospf_converged,
    ospf_ring,
    router_conf,
)
from netdojo.labs.spec import DeviceSpec, LabSpec, LinkSpec

from .leftovers import leftovers, new_since

pytestmark = pytest.mark.anyio


async def test_adjacencies_reach_full_and_hosts_ping(triangle: LiveLab) -> None:
    for router in ("r1", "r2", "r3"):
        shown = await triangle.vtysh(router, "show ip ospf neighbor json")
        neighbours = json.loads(shown.stdout)["neighbors"]
        states = [n["nbrState"] for entries in neighbours.values() for n in entries]
        assert len(states) == 2 and all(s.startswith("Full") for s in states), states
    target = host_address(triangle.spec, "h2")
    ping = await triangle.exec("h1", ["ping", "-c", "3", "-i", "0.2", "-W", "1", target])
    assert ping.ok, ping.stdout + ping.stderr
    assert " 0% packet loss" in ping.stdout


async def test_exec_runs_argv_without_a_shell(triangle: LiveLab) -> None:
    result = await triangle.exec("r1", ["echo", "$HOME;", "id"])
    assert result.stdout == "$HOME; id\n"
    assert result.exit_code == 0 and not result.truncated and not result.timed_out


async def test_exec_timeout_kills_the_command_in_the_device(triangle: LiveLab) -> None:
    result = await triangle.exec("r1", ["sleep", "30"], timeout=1)
    assert result.timed_out and result.exit_code == 124
    assert result.duration_s < 5
    left = await triangle.exec("r1", ["pgrep", "-x", "sleep"])
    assert left.exit_code == 1, left.stdout


async def test_a_detached_child_holding_the_output_does_not_hold_the_call(
    triangle: LiveLab,
) -> None:
    # Docker closes an exec's output streams shortly after its process ends, whoever holds them.
    result = await triangle.exec("r1", ["sh", "-c", "setsid sleep 61 & echo started"], timeout=5)
    assert result.exit_code == 0 and result.stdout == "started\n"
    assert result.duration_s < 30, "the call waited for the child"
    child = await triangle.exec("r1", ["pgrep", "-x", "-f", "sleep 61"])
    assert child.exit_code == 0, "the child outlived the call: only the reading was cut"
    await triangle.exec("r1", ["kill", *child.stdout.split()])


async def test_exec_output_is_capped(triangle: LiveLab) -> None:
    result = await triangle.exec("r1", ["yes"], max_output=4096, timeout=10)
    assert result.truncated
    assert len(result.stdout.encode()) <= 4096
    assert result.duration_s < 5
    left = await triangle.exec("r1", ["pgrep", "-x", "yes"])
    assert left.exit_code == 1, left.stdout


async def test_an_entered_command_sees_what_a_docker_exec_sees(triangle: LiveLab) -> None:
    for argv in (
        ["hostname"],
        ["ip", "-j", "address", "show"],
        ["sh", "-c", "head -1 /proc/net/snmp; cat /proc/sys/net/ipv4/ip_forward"],
        ["vtysh", "-c", "show running-config"],
        ["sh", "-c", "echo out; echo err >&2; exit 3"],
    ):
        entered = await triangle.exec_entered("r1", argv)
        execed = await triangle.exec("r1", argv)
        assert (entered.exit_code, entered.stdout, entered.stderr) == (
            execed.exit_code,
            execed.stdout,
            execed.stderr,
        ), argv


async def test_an_entered_command_is_timed_out_capped_and_leaves_nothing(
    triangle: LiveLab,
) -> None:
    slow = await triangle.exec_entered("r1", ["sleep", "30"], timeout=1)
    assert slow.timed_out and slow.duration_s < 5, slow
    left = await triangle.exec("r1", ["pgrep", "-x", "sleep"])
    assert left.exit_code == 1, left.stdout
    long = await triangle.exec_entered("r1", ["sh", "-c", "yes | head -c 200000"], max_output=1000)
    assert long.truncated and len(long.stdout) == 1000


async def test_a_process_outside_the_container_is_not_entered(triangle: LiveLab) -> None:
    container = triangle._container("r1")
    assert owned_by(int(container.attrs["State"]["Pid"]), container.id)
    assert not owned_by(os.getpid(), container.id)
    assert not owned_by(2**22 + 1, container.id), "a process that does not exist"


async def test_unknown_device_lists_the_valid_ones(triangle: LiveLab) -> None:
    with pytest.raises(UnknownDeviceError) as caught:
        await triangle.exec("r9", ["true"])
    assert "r1" in str(caught.value) and "h2" in str(caught.value)


async def test_files_read_and_write(triangle: LiveLab) -> None:
    await triangle.write_file("h1", "/tmp/netdojo/note.txt", "hello\nlab\n")
    assert await triangle.read_file("h1", "/tmp/netdojo/note.txt") == "hello\nlab\n"
    conf = await triangle.read_file("r1", "/etc/frr/frr.conf")
    assert "router ospf" in conf
    with pytest.raises(LabError):
        await triangle.read_file("h1", "/no/such/file")


async def test_restart_one_daemon_and_reconverge(triangle: LiveLab) -> None:
    before = await triangle.exec("r2", ["pgrep", "-x", "ospfd"])
    restarted = await triangle.restart_frr("r2", "ospfd")
    assert restarted.ok, restarted.stdout + restarted.stderr
    after = await triangle.exec("r2", ["pgrep", "-x", "ospfd"])
    assert after.ok and after.stdout != before.stdout
    await triangle.wait_until(ospf_converged, deadline_s=30)


async def test_devices_are_limited() -> None:
    spec = LabSpec.build(
        name="limits",
        devices=[{"name": "h1", "role": "host", "limits": {"memory_mib": 64, "pids": 32}}],
    )
    async with deploy_lab(spec) as lab:
        container = lab._container("h1")
        host_config = container.attrs["HostConfig"]
        assert host_config["Memory"] == 64 * 2**20
        assert host_config["PidsLimit"] == 32
        assert not host_config["Privileged"]
        routes = await lab.exec("h1", ["ip", "route"])
        assert routes.stdout.strip() == "", "a device must have no route off the lab"


async def test_files_arrive_in_the_startup_command_or_uploaded_when_large() -> None:
    small = "interface eth0\n"
    large = "".join(f"{n:08x}\n" for n in range(16_000))  # 144 KB: past one command line
    spec = LabSpec.build(
        name="files",
        devices=[
            {"name": "h1", "role": "host", "files": {"/etc/small.conf": small}},
            {"name": "h2", "role": "host", "files": {"/opt/data/large.txt": large}},
        ],
    )
    async with deploy_lab(spec) as lab:
        assert await lab.read_file("h1", "/etc/small.conf") == small
        assert await lab.read_file("h2", "/opt/data/large.txt") == large
        startup = await lab.read_file("h1", "/hostlab/h1.startup")
        assert LOCAL_RESOLVER in startup.splitlines()


async def test_a_hub_router_runs_ospf_on_every_interface() -> None:
    """Past 20 interfaces the kernel's default multicast allowance would silence OSPF."""
    ports = 24
    p2p = {f"eth{i}": f"10.0.{i}.1/30" for i in range(ports)}
    hub = DeviceSpec(
        name="hub",
        files={"/etc/frr/daemons": DAEMONS, "/etc/frr/frr.conf": router_conf("hub", 0, p2p, {})},
        startup=[FRR_START],
        sysctls={"net.ipv4.tcp_syn_retries": 3},
    )
    links = [LinkSpec(name=f"p{i}", endpoints=[("hub", i)]) for i in range(ports)]
    async with deploy_lab(LabSpec(name="hub", devices=[hub], links=links)) as lab:
        syn_retries = await lab.exec("hub", ["sysctl", "-n", "net.ipv4.tcp_syn_retries"])
        assert syn_retries.stdout == "3\n"

        async def joined(lab: LiveLab) -> bool:
            shown = await lab.vtysh("hub", "show ip ospf interface json")
            interfaces = json.loads(shown.stdout).get("interfaces", {})
            return len(interfaces) == ports and all(
                i.get("mcastMemberOspfAllRouters") for i in interfaces.values()
            )

        await lab.wait_until(joined, deadline_s=30)


async def test_two_labs_with_identical_addresses_stay_isolated() -> None:
    spec = ospf_ring(3, 2, name="twin")
    target = host_address(spec, "h2")
    labs: list[LiveLab] = []

    async def start() -> None:
        labs.append(await start_lab(spec))

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(start)
            group.start_soon(start)
        first, second = labs
        assert first.name != second.name
        for lab in labs:
            await lab.wait_until(ospf_converged, deadline_s=60)
        await second.exec("h2", ["ip", "link", "set", "eth0", "down"])
        reach = await first.exec("h1", ["ping", "-c", "2", "-i", "0.2", "-W", "1", target])
        cut = await second.exec("h1", ["ping", "-c", "2", "-i", "0.2", "-W", "1", target])
        assert reach.ok, "lab one must still reach its own h2"
        assert not cut.ok, "lab two's h2 is down: its h1 must not reach lab one's h2"
    finally:
        with anyio.CancelScope(shield=True):
            for lab in labs:
                await stop_lab(lab)


async def test_teardown_leaves_nothing() -> None:
    before = leftovers()
    async with deploy_lab(ospf_ring(3, 2, name="clean")) as lab:
        during = new_since(before)
        assert len(during["containers"]) == 5
        assert len(during["bridges"]) == len(lab.spec.links)
        # FORWARD accept, INPUT drop, raw NOTRACK
        assert len(during["rules"]) == 3 * len(lab.spec.links)
    assert new_since(before) == {}


async def test_failed_deploy_is_rolled_back() -> None:
    before = leftovers()
    spec = LabSpec.build(
        name="broken",
        devices=[{"name": "r1"}, {"name": "r2", "image": "netdojo/absent:none"}],
        links=[{"name": "a", "endpoints": [("r1", 0), ("r2", 0)]}],
    )
    with pytest.raises(Exception):  # noqa: B017 (Kathará's own error type for a missing image)
        async with deploy_lab(spec):
            pass
    assert new_since(before) == {}


async def test_cancellation_tears_the_lab_down() -> None:
    before = leftovers()
    with anyio.move_on_after(1.0):
        async with deploy_lab(ospf_ring(3, 0, name="cancel")):
            await anyio.sleep(60)
    assert new_since(before) == {}


async def test_host_stack_never_touches_lab_traffic() -> None:
    """Docker owns 172.17.0.1 and masquerades 172.17.0.0/16 on the host; a lab using those
    addresses must still be switched and routed only by its own devices."""
    spec = LabSpec.build(
        name="hostfree",
        devices=[
            {"name": "r1", "startup": ["ip address add 172.17.0.1/24 dev eth0",
                                       "ip address add 172.18.1.1/24 dev eth1"]},
            {"name": "h1", "role": "host", "startup": ["ip address add 172.17.0.10/24 dev eth0",
                                                       "ip route add default via 172.17.0.1"]},
            {"name": "h2", "role": "host", "startup": ["ip address add 172.18.1.10/24 dev eth0",
                                                       "ip route add default via 172.18.1.1"]},
        ],
        links=[
            {"name": "a", "endpoints": [("r1", 0), ("h1", 0)]},
            {"name": "b", "endpoints": [("r1", 1), ("h2", 0)]},
        ],
    )  # fmt: skip
    async with deploy_lab(spec) as lab:
        gateway = await lab.exec("h1", ["ping", "-c", "2", "-i", "0.2", "-W", "1", "172.17.0.1"])
        assert gateway.ok, gateway.stdout
        across = await lab.exec("h1", ["ping", "-c", "2", "-i", "0.2", "-W", "1", "172.18.1.10"])
        assert across.ok, across.stdout
        router_mac = json.loads((await lab.exec("r1", ["ip", "-j", "link", "show", "eth0"])).stdout)
        learned = json.loads(
            (await lab.exec("h1", ["ip", "-j", "neigh", "show", "172.17.0.1"])).stdout
        )
        assert learned[0]["lladdr"] == router_mac[0]["address"], "only the lab's router may answer"
