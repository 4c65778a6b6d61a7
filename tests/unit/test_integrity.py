"""The state audit's pure logic: snapshots read from device output, changes judged."""

from __future__ import annotations

import json

import pytest

from netdojo.judges.checks import CheckUnavailable, parse_counters, ran
from netdojo.judges.integrity import TaskRules, audit_state, rules_for
from netdojo.judges.snapshot import DeviceState, LabState, SnapshotError, parse_state
from netdojo.labs.runtime import ExecResult
from netdojo.scenarios.generate import generate

MARK = "@@netdojo-snapshot:"
STATUS = "@@netdojo-status:"


def _iface(name: str, *cidrs: str, mac: str = "", up: bool = True) -> dict[str, object]:
    return {
        "ifname": name,
        "flags": ["BROADCAST", "UP"] if up else ["BROADCAST"],
        "mtu": 1500,
        "address": mac,
        "addr_info": [
            {"family": "inet", "local": c.split("/")[0], "prefixlen": int(c.split("/")[1])}
            for c in cidrs
        ],
    }


def _output(
    ifaces: list[dict[str, object]],
    routes: list[dict[str, object]] | None = None,
    iptables: str = "*filter\n:INPUT ACCEPT [3:180]\nCOMMIT",
    frr: str | None = None,
    routes6: list[dict[str, object]] | None = None,
) -> str:
    sections = {
        "address": json.dumps(ifaces),
        "route": json.dumps(routes or []),
        "route6": json.dumps(routes6 or []),
        "rule": "[]",
        "proxy": "[]",
        "permanent": "[]",
        "sysctl": "/proc/sys/net/ipv4/conf/all/proxy_arp:0",
        "iptables": iptables,
        "nft": "table ip filter {\n\tchain INPUT {\n\t\tcounter packets 5 bytes 9 accept\n\t}\n}",
    }
    if frr is not None:
        sections["frr"] = frr
    return "\n".join(f"{MARK}{name}\n{text}\n{STATUS}0" for name, text in sections.items())


R1 = [_iface("lo"), _iface("eth0", "10.1.0.1/24", mac="aa:00:00:00:00:01")]
ROUTER_CONFIG = "frr version 8.4\nrouter ospf\n network 10.0.0.0/30 area 0\nexit\n!\nend"


def _lab(**changes: DeviceState) -> LabState:
    """A router r1 and hosts h1, h2 as planned; ``changes`` replace a device's state."""
    planned = {
        "r1": parse_state(
            "r1",
            _output(
                R1,
                routes=[{"dst": "10.2.0.0/24", "gateway": "10.0.0.2", "protocol": "ospf"}],
                frr=ROUTER_CONFIG,
            ),
            router=True,
        ),
        "h1": parse_state(
            "h1", _output([_iface("lo"), _iface("eth0", "10.1.0.10/24")]), router=False
        ),
        "h2": parse_state(
            "h2", _output([_iface("lo"), _iface("eth0", "10.2.0.10/24")]), router=False
        ),
    }
    return planned | changes


def _host(name: str, *ifaces: dict[str, object]) -> DeviceState:
    return parse_state(name, _output(list(ifaces)), router=False)


RULES = TaskRules(static_routes=False, hosts_in_play=False, scope={"r1"}, hosts={"h1", "h2"})


def test_a_snapshot_reads_every_aspect_without_counters_or_dynamic_routes() -> None:
    state = _lab()["r1"]
    assert state.of("address") == {"eth0 10.1.0.1/24"}
    assert state.addresses == ["10.1.0.1"] and state.macs == ["aa:00:00:00:00:01"]
    assert state.of("route") == set(), "routes the routing protocol installed are left out"
    assert "iptables filter :INPUT ACCEPT" in state.of("netfilter")
    assert not any("packets" in item for item in state.of("netfilter"))
    assert state.of("frr") == {"router ospf", "router ospf :: network 10.0.0.0/30 area 0"}


def test_a_snapshot_that_misses_a_section_or_is_not_json_is_an_error() -> None:
    with pytest.raises(SnapshotError, match="frr"):
        parse_state("r1", _output([_iface("eth0")]), router=True)
    broken = _output([_iface("eth0")]).replace('"ifname"', "ifname")
    with pytest.raises(SnapshotError, match="JSON"):
        parse_state("h1", broken, router=False)
    failed = _output([_iface("eth0")]).replace(
        f"[]\n{STATUS}0", f"sh: ip: not found\n{STATUS}127", 1
    )
    with pytest.raises(SnapshotError, match="`route` failed: sh: ip: not found"):
        parse_state("h1", failed, router=False)
    with pytest.raises(SnapshotError, match="incomplete"):
        parse_state("r1", _output([_iface("eth0")], frr="router ospf"), router=True)


def test_an_address_of_another_device_is_a_fake() -> None:
    cheat = _host("h1", _iface("lo", "10.2.0.10/32"), _iface("eth0", "10.1.0.10/24"))
    report = audit_state(_lab(), _lab(), _lab(h1=cheat), RULES)
    assert [(f.device, f.kind) for f in report.fakes] == [("h1", "address")]
    assert "h2" in report.fakes[0].detail and "10.2.0.10" in report.fakes[0].evidence


def test_a_covering_prefix_on_a_loopback_is_a_fake_even_where_hosts_are_in_play() -> None:
    cheat = _host("h1", _iface("lo", "10.2.0.0/16"), _iface("eth0", "10.1.0.10/24"))
    rules = RULES.model_copy(update={"hosts_in_play": True, "scope": {"r1", "h1"}})
    report = audit_state(_lab(), _lab(), _lab(h1=cheat), rules)
    assert [(f.kind, f.device) for f in report.fakes] == [("address", "h1")]
    assert "h2's 10.2.0.10" in report.fakes[0].detail


def test_routes_from_outside_the_routing_protocol_are_fakes_unless_static_is_the_task() -> None:
    kernel = {"dst": "10.2.0.0/24", "gateway": "10.0.0.2", "dev": "eth1"}
    frr = ROUTER_CONFIG.replace("router ospf", "ip route 10.2.0.0/24 10.0.0.2\nrouter ospf", 1)
    cheat = parse_state("r1", _output(R1, [kernel], frr=frr), True)
    report = audit_state(_lab(), _lab(), _lab(r1=cheat), RULES)
    assert sorted(f.kind for f in report.fakes) == ["route", "route"]
    static = RULES.model_copy(update={"static_routes": True})
    assert not audit_state(_lab(), _lab(), _lab(r1=cheat), static).fakes


def test_a_local_route_is_a_fake_even_where_static_routes_are_the_task() -> None:
    local = {"type": "local", "dst": "10.2.0.0/24", "dev": "lo", "table": "local"}
    cheat = parse_state("r1", _output(R1, [local], frr=ROUTER_CONFIG), True)  # fmt: skip
    static = RULES.model_copy(update={"static_routes": True})
    assert [f.kind for f in audit_state(_lab(), _lab(), _lab(r1=cheat), static).fakes] == ["route"]


@pytest.mark.parametrize(
    "rules",
    [
        "*mangle\n-A PREROUTING -j TTL --ttl-inc 1\nCOMMIT",
        "*mangle\n-A PREROUTING -d 10.2.0.10/32 -j TEE --gateway 10.1.0.10\nCOMMIT",
    ],
)
def test_packets_rewritten_or_steered_past_the_routing_are_fakes(rules: str) -> None:
    cheat = parse_state("r1", _output(R1, iptables=rules, frr=ROUTER_CONFIG), True)
    assert [f.kind for f in audit_state(_lab(), _lab(), _lab(r1=cheat), RULES).fakes] == [
        "translation"
    ]


def test_translation_is_a_fake() -> None:
    nat = "*nat\n-A PREROUTING -d 10.2.0.10/32 -j DNAT --to-destination 10.1.0.1\nCOMMIT"
    cheat = parse_state("r1", _output(R1, iptables=nat, frr=ROUTER_CONFIG), True)  # fmt: skip
    report = audit_state(_lab(), _lab(), _lab(r1=cheat), RULES)
    assert "translation" in {f.kind for f in report.fakes}


EDGE_NAT = "*nat\n-A POSTROUTING -s 10.1.0.0/16 -o eth1 -j MASQUERADE\nCOMMIT"
NAT_RULES = RULES.model_copy(update={"translation_in_play": True})


def _nat(*lines: str, base: str = EDGE_NAT) -> DeviceState:
    table = base.replace("COMMIT", "".join(f"{line}\n" for line in lines) + "COMMIT")
    return parse_state("r1", _output(R1, iptables=table, frr=ROUTER_CONFIG), True)


@pytest.mark.parametrize(
    "line",
    [
        "-A POSTROUTING -s 10.1.0.0/16 -o eth1 -j SNAT --to-source 100.64.0.1",
        "-A PREROUTING -i eth1 -d 100.64.0.1/32 -p tcp -m tcp --dport 8080 "
        "-j DNAT --to-destination 10.1.0.10:80",
    ],
)
def test_translation_on_a_translating_edge_is_work_where_translation_is_the_task(
    line: str,
) -> None:
    planned = _lab(r1=_nat())
    report = audit_state(planned, planned, _lab(r1=_nat(line)), NAT_RULES)
    assert report.fakes == [] and report.changes == 1


@pytest.mark.parametrize(
    "line",
    [
        "-A PREROUTING -p icmp -s 10.1.0.10/32 -d 10.2.0.10/32 -j DNAT --to-destination 10.1.0.1",
        "-A PREROUTING -s 10.1.0.10/32 -d 10.2.0.10/32 -j NETMAP --to 10.1.0.254/32",
        "-A OUTPUT -p udp -j REDIRECT",
    ],
)
def test_a_rewrite_of_where_probes_go_is_a_fake_even_on_a_translating_edge(line: str) -> None:
    planned = _lab(r1=_nat())
    report = audit_state(planned, planned, _lab(r1=_nat(line)), NAT_RULES)
    assert [f.kind for f in report.fakes] == ["translation"]


def test_translation_where_the_plan_has_none_is_a_fake_even_where_it_is_the_task() -> None:
    line = "-A POSTROUTING -s 10.1.0.0/16 -o eth0 -j MASQUERADE"
    report = audit_state(_lab(), _lab(), _lab(r1=_nat(line, base="*nat\nCOMMIT")), NAT_RULES)
    assert [f.kind for f in report.fakes] == ["translation"]


def test_a_host_changed_where_hosts_are_off_limits_is_a_fake() -> None:
    rule = "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -p tcp --dport 22 -j DROP\nCOMMIT"
    cheat = parse_state(
        "h2", _output([_iface("lo"), _iface("eth0", "10.2.0.10/24")], iptables=rule), False
    )
    report = audit_state(_lab(), _lab(), _lab(h2=cheat), RULES)
    assert [(f.device, f.kind) for f in report.fakes] == [("h2", "off_limits")]


def test_undoing_a_fault_is_explained_and_other_changes_count_by_scope() -> None:
    faulty = parse_state("r1", _output(R1, frr="router ospf\nexit\nend"), True)  # fmt: skip
    report = audit_state(_lab(), _lab(r1=faulty), _lab(), RULES)
    assert report.fakes == [] and report.unexplained == [] and report.changes == 0
    moved_config = ROUTER_CONFIG.replace("area 0", "area 1")
    moved = parse_state("r1", _output(R1, frr=moved_config), True)
    in_scope = audit_state(_lab(), _lab(), _lab(r1=moved), RULES)
    assert in_scope.fakes == [] and in_scope.unexplained == [] and in_scope.changes == 2
    outside = audit_state(_lab(), _lab(), _lab(r1=moved), RULES.model_copy(update={"scope": set()}))
    assert len(outside.unexplained) == 2 and outside.changes == 0


def test_rules_follow_the_family() -> None:
    static = rules_for(generate("static-routing", 1, 1))
    hosts = rules_for(generate("host-config", 1, 1))
    build = generate("ospf-build", 1, 1)
    assert static.static_routes and not static.hosts_in_play
    assert hosts.hosts_in_play and not hosts.static_routes
    assert rules_for(build).scope == {d.name for d in build.hidden.lab.devices}


def test_a_check_command_cut_short_or_timed_out_cannot_be_read() -> None:
    base = {"device": "h1", "argv": ["ping"], "stdout": "", "stderr": "", "duration_s": 1.0}
    with pytest.raises(CheckUnavailable, match="timed out"):
        ran(ExecResult(exit_code=124, timed_out=True, **base), "ping")
    with pytest.raises(CheckUnavailable, match="cut short"):
        ran(ExecResult(exit_code=0, truncated=True, **base), "ping")
    assert ran(ExecResult(exit_code=1, **base), "ping").exit_code == 1, "no reply is an answer"


def test_counters_are_read_by_protocol_and_name() -> None:
    snmp = "Icmp: InMsgs InEchos OutEchoReps\nIcmp: 4 2 2\nTcp: ActiveOpens PassiveOpens\nTcp: 0 3"
    counters = parse_counters(snmp)
    assert counters["Icmp.OutEchoReps"] == 2 and counters["Tcp.PassiveOpens"] == 3


def _iface6(name: str, *addresses: tuple[str, str]) -> dict[str, object]:
    """An interface with IPv6 addresses given as (address/length, scope)."""
    return {
        "ifname": name,
        "flags": ["BROADCAST", "UP"],
        "mtu": 1500,
        "addr_info": [
            {
                "family": "inet6",
                "local": a.split("/")[0],
                "prefixlen": int(a.split("/")[1]),
                "scope": scope,
            }
            for a, scope in addresses
        ],
    }


def _v6_lab(**changes: DeviceState) -> LabState:
    r1 = _iface6("eth0", ("fd00:1::1/64", "global"), ("fe80::1/64", "link"))
    planned = {
        "r1": parse_state(
            "r1",
            _output(
                [_iface6("lo", ("::1/128", "host")), r1],
                routes6=[
                    {"dst": "fd00:2::/64", "gateway": "fe80::2", "protocol": "ospf"},
                    {"dst": "fe80::/64", "dev": "eth0", "protocol": "kernel"},
                ],
                frr="frr version 8.4\nrouter ospf6\n ospf6 router-id 10.255.0.1\nexit\n!\nend",
            ),
            router=True,
        ),
        "h2": parse_state("h2", _output([_iface6("eth0", ("fd00:2::10/64", "global"))]), False),
    }
    return planned | changes


def test_a_snapshot_keeps_global_ipv6_addresses_and_static_ipv6_routes() -> None:
    state = _v6_lab()["r1"]
    assert state.of("address") == {"eth0 fd00:1::1/64"}, "link-local and ::1 are left out"
    assert state.addresses == ["fd00:1::1"]
    assert state.of("route") == set(), "OSPFv3's and the kernel's IPv6 routes are left out"


def test_ipv6_fakes_are_named() -> None:
    rules = TaskRules(static_routes=False, hosts_in_play=False, scope={"r1"}, hosts={"h2"})
    base = _v6_lab()
    stolen = _iface6("eth0", ("fd00:1::1/64", "global"), ("fd00:2::10/64", "global"))
    static = [{"dst": "fd00:2::/64", "gateway": "fe80::9", "dev": "eth0", "protocol": "static"}]
    config = "frr version 8.4\nipv6 route fd00:2::/64 eth0\nrouter ospf6\nexit\n!\nend"
    cheat = parse_state("r1", _output([stolen], routes6=static, frr=config), router=True)
    report = audit_state(base, base, _v6_lab(r1=cheat), rules)
    assert sorted(f.kind for f in report.fakes) == ["address", "route", "route"]
    assert any("fd00:2::10" in f.detail for f in report.fakes)
