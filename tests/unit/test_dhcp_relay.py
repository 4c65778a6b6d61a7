"""The dhcp-relay family: every fault type drawn at every level, one server and a relay per
host's gateway as the lab gets them, faults that change a relay's or the server's file, and
the heuristic agent's repairs from what the lab shows."""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest

from netdojo.clients.heuristic import fixes_relay
from netdojo.clients.heuristic.actor import Actor
from netdojo.clients.heuristic.model import DeviceState, Iface, Link, Port, Snapshot, Topology
from netdojo.judges.integrity import scope_of
from netdojo.scenarios.generate import generate, plan_instance
from netdojo.scenarios.model import Scenario
from netdojo.scenarios.network import Network
from netdojo.scenarios.registry import LEVELS, family
from netdojo.scenarios.relay import (
    BOOT_TRIES,
    place_relays,
    relay_conf,
    relayed_scopes,
    server_conf,
)
from netdojo.scenarios.services import DHCP_CONF, DNS_CONF, RELAY_CONF, ZONE
from netdojo.scenarios.taxonomy import fault_class
from netdojo.tools.read_allowlist import parse_read
from netdojo.tools.service import ServiceArguments, config_problem

NAME = "dhcp-relay"


@pytest.mark.parametrize("level", LEVELS)
def test_every_type_is_drawn_at_every_level(level: int) -> None:
    drawn: set[str] = set()
    for seed in range(1, 41):
        drawn |= {f.type for f in generate(NAME, level, seed).hidden.faults}
    assert set(family(NAME).types) <= drawn
    assert all(fault_class(t) == "service" for t in family(NAME).types)


def test_instances_repeat_and_the_brief_keeps_the_fault_hidden() -> None:
    for seed in range(1, 11):
        scenario = generate(NAME, 1, seed)
        assert scenario.model_dump_json() == generate(NAME, 1, seed).model_dump_json()
        brief = scenario.public.brief.lower()
        for word in ("relay", "scope", "range", "dnsmasq", "giaddr", "server address"):
            assert word not in brief, brief


@pytest.mark.parametrize("level", LEVELS)
def test_one_router_serves_every_lan_and_each_gateway_relays_to_its_loopback(level: int) -> None:
    for seed in range(1, 6):
        network, _ = plan_instance(NAME, level, seed)
        relays = place_relays(network)
        lab = generate(NAME, level, seed).hidden.lab
        gateways = {network.router_of(h) for h in network.lans}
        assert relays.server not in gateways
        assert relays.address == network.node(relays.server).loopback
        (server,) = [d for d in lab.devices if DHCP_CONF in d.files]
        assert server.name == relays.server and DNS_CONF in server.files
        text = server.files[DHCP_CONF]
        assert "interface=" not in text and "port=0" in text
        assert text.count("dhcp-range=set:") == len(network.lans)
        assert f"dhcp-option=option:dns-server,{relays.address}" in text
        assert f"local=/{ZONE}/" in server.files[DNS_CONF]
        for host in network.lans:
            gateway, local = relays.relays[host]
            assert local == network.node(host).gateway
            relay = lab.device(gateway).files[RELAY_CONF]
            assert relay.splitlines()[:2] == ["port=0", f"dhcp-relay={local},{relays.address}"]
            assert any("dnsmasq-relay.conf" in line for line in lab.device(gateway).startup)
            (boot,) = lab.device(host).startup
            assert "dhclient" in boot and f"seq {BOOT_TRIES}" in boot
            address = network.host_address(host)
            assert f"dhcp-range=set:{host},{address},{address},255.255.255.0,10m" in text


def test_a_relayed_lease_is_taken_only_from_the_lab_servers_addresses() -> None:
    """Every lease test names the server router's ports and loopback, and none of a gateway's
    addresses, which a lease served on the gateway would name."""
    seen = 0
    for seed in range(1, 13):
        network, _ = plan_instance(NAME, 1, seed)
        relays = place_relays(network)
        server = network.node(relays.server)
        expected = {relays.address} | {i.address.split("/")[0] for i in server.ifaces}
        gateways = {network.router_of(h) for h in network.lans}
        foreign = {i.address.split("/")[0] for g in gateways for i in network.node(g).ifaces}
        assert not foreign & expected
        scenario = generate(NAME, 1, seed)
        present = [p for f in scenario.hidden.faults for p in f.present]
        for test in (t for t in scenario.hidden.targets + present if t.kind == "dhcp_lease"):
            seen += 1
            assert set(test.params.servers or ()) == expected, test
    assert seen >= 10


def test_a_fault_rewrites_a_relay_or_the_server_and_the_fix_restores_it() -> None:
    seen = set()
    for level in (1, 2):
        for seed in range(1, 31):
            scenario = generate(NAME, level, seed)
            network, _ = plan_instance(NAME, level, seed)
            relays = place_relays(network)
            for fault in scenario.hidden.faults:
                if fault.red_herring:
                    continue
                seen.add(fault.type)
                wrong, right = fault.inject[0].arguments, fault.fix[0].arguments
                assert wrong["device"] == right["device"] == fault.device
                before, after = wrong["config"].splitlines(), right["config"].splitlines()
                host = fault.params["host"]
                gateway, local = relays.relays[host]
                services = [c.arguments["service"] for c in fault.fix]
                if fault.type == "dhcp.relay_scope_missing":
                    assert fault.device == relays.server and services[0] == "dhcp-server"
                    assert set(after) - set(before) == set(
                        fixes_relay.scope_added(before, host, _iface(network, host), local)
                    ) - set(before)
                    assert len(after) - len(before) == 2 and set(before) < set(after)
                else:
                    assert fault.device == gateway and services[0] == "dhcp-relay"
                    assert after == relay_conf(local, relays.address).splitlines()
                    changed = set(before) ^ set(after)
                    assert 1 <= len(changed) <= 2 and abs(len(before) - len(after)) <= 1
                    if fault.type == "dhcp.relay_wrong_server":
                        assert fault.params["server"] != relays.address
                        assert fault.params["server"] not in {
                            network.node(g).loopback for g, _ in relays.relays.values()
                        }
                assert services[1:] == ["dhcp-client"] and fault.fix[1].arguments["device"] == host
                present = fault.present[0]
                assert present.kind == "dhcp_lease" and present.params.expect is False
    assert seen == set(family(NAME).types)


def _iface(network: object, host: str) -> ipaddress.IPv4Interface:
    node = network.node(host)  # type: ignore[attr-defined]
    return ipaddress.IPv4Interface(node.ifaces[0].address)


def test_the_heuristic_agent_puts_each_faulted_file_back_from_what_the_lab_shows() -> None:
    for seed in range(1, 41):
        scenario = generate(NAME, 1, seed)
        network, _ = plan_instance(NAME, 1, seed)
        relays = place_relays(network)
        for fault in scenario.hidden.faults:
            wrong = fault.inject[0].arguments["config"].splitlines()
            right = fault.fix[0].arguments["config"].splitlines()
            host = fault.params["host"]
            _, local = relays.relays[host]
            if fault.type == "dhcp.relay_scope_missing":
                fixed = fixes_relay.scope_added(wrong, host, _iface(network, host), local)
            else:
                fixed = fixes_relay.relay_lines(wrong, local, relays.address)
                assert fixes_relay.relay_lines(right, local, relays.address) == right
            assert fixed == right, fault.type


def test_the_server_keeps_its_scopes_in_order_when_one_comes_back() -> None:
    network, _ = plan_instance(NAME, 3, 1)
    relays = place_relays(network)
    scopes = relayed_scopes(network, relays)
    right = server_conf(relays, scopes).splitlines()
    for scope in scopes:
        wrong = server_conf(relays, [s for s in scopes if s is not scope]).splitlines()
        address = ipaddress.IPv4Interface(f"{scope.address}/24")
        assert fixes_relay.scope_added(wrong, scope.tag, address, scope.router) == right
        assert fixes_relay.scope_added(right, scope.tag, address, scope.router) == right


def test_the_relay_files_are_readable_and_the_service_tool_restarts_a_relay() -> None:
    assert parse_read(f"cat {RELAY_CONF}").argv == ["cat", RELAY_CONF]
    arguments = ServiceArguments.checked(
        {"device": "r1", "service": "dhcp-relay", "config": relay_conf("10.0.0.1", "10.9.9.9")}
    )
    assert arguments.service == "dhcp-relay"
    scenario = generate(NAME, 2, 2)
    for device in scenario.hidden.lab.devices:
        for path in (DHCP_CONF, DNS_CONF, RELAY_CONF):
            if path in device.files:
                assert config_problem(device.files[path]) is None
    for fault in scenario.hidden.faults:
        for call in fault.inject + fault.fix:
            assert config_problem(call.arguments.get("config", "")) is None


class _Files:
    """A session whose `show` reads the lab's files with the faults injected (read-only)."""

    def __init__(self, files: dict[tuple[str, str], str]) -> None:
        self.files = files

    async def call(self, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        assert tool == "show" and arguments is not None
        path = arguments["command"].removeprefix("cat ")
        text = self.files.get((arguments["device"], path))
        return {"text": text if text is not None else f"cat: {path}: No such file or directory"}


def _snapshot(scenario: Scenario, network: Network) -> Snapshot:
    ports = {
        d.name: [
            Port(d.name, i.name, i.link, ipaddress.IPv4Interface(i.address) if i.address else None)
            for i in d.interfaces
        ]
        for d in scenario.public.devices
    }
    topo = Topology(
        roles={d.name: d.role for d in scenario.public.devices},
        ports=ports,
        links={name: list(devices) for name, devices in scenario.public.links},
    )
    devices = {
        r.name: DeviceState(
            r.name, "router", links={"lo": Link(True, 65536, [Iface(f"{r.loopback}/32")])}
        )
        for r in network.routers
    }
    devices |= {h: DeviceState(h, "host") for h in network.lans}
    return Snapshot(topo=topo, devices=devices)


@pytest.mark.anyio
@pytest.mark.parametrize("seed", [1, 2, 4, 12])
async def test_the_heuristic_agent_finds_each_relay_fault_from_the_files_alone(seed: int) -> None:
    scenario = generate(NAME, 1, seed)
    network, _ = plan_instance(NAME, 1, seed)
    files = {
        (d.name, path): text for d in scenario.hidden.lab.devices for path, text in d.files.items()
    }
    for fault in scenario.hidden.faults:
        call = fault.inject[0].arguments
        path = RELAY_CONF if call["service"] == "dhcp-relay" else DHCP_CONF
        files[call["device"], path] = call["config"]
    session = _Files(files)
    actor = Actor(session, read_only=True, hosts=frozenset(network.lans))  # type: ignore[arg-type]
    actor.area = "service"
    await fixes_relay.fix_relays(session, _snapshot(scenario, network), actor)  # type: ignore[arg-type]
    faulty = {f.device for f in scenario.hidden.faults}
    hosts = {f.params["host"] for f in scenario.hidden.faults}
    assert faulty <= set(actor.findings) <= faulty | hosts
    assert all(kinds == {"service"} for kinds in actor.findings.values())
    healthy = generate(NAME, 1, 3)
    assert healthy.hidden.healthy
    clean = {(d.name, p): t for d in healthy.hidden.lab.devices for p, t in d.files.items()}
    calm = Actor(_Files(clean), read_only=True)  # type: ignore[arg-type]
    network, _ = plan_instance(NAME, 1, 3)
    snap = _snapshot(healthy, network)
    assert not await fixes_relay.fix_relays(_Files(clean), snap, calm)  # type: ignore[arg-type]
    assert not calm.findings


def test_the_host_a_missing_scope_cut_off_is_in_the_tasks_scope() -> None:
    """Its reference fix renews the host's lease there: a change the task calls for."""
    checked = 0
    for seed in range(1, 40):
        scenario = generate("dhcp-relay", 1, seed)
        if not any(f.type == "dhcp.relay_scope_missing" for f in scenario.hidden.faults):
            continue
        scope = scope_of(scenario)
        for call in scenario.hidden.solution:
            assert call.arguments["device"] in scope, call
        checked += 1
    assert checked >= 3
