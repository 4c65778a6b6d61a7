"""Pure logic behind the tools: allowlists, output parsers, capture decoding, diagrams, records."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from netdojo.scenarios.model import DeviceFacts, InterfaceFacts, PublicHalf
from netdojo.tools.allowlist import CommandRefused, parse_command
from netdojo.tools.capture import CaptureRefused, decode_pcap, tcpdump_argv
from netdojo.tools.reachability import parse_ping, parse_traceroute
from netdojo.tools.read_allowlist import ReadRefused, parse_read, split_trailing_json
from netdojo.tools.topology import mermaid, topology_view
from netdojo.tools.trajectory import Trajectory

PING_OK = """PING 10.0.0.2 (10.0.0.2) 56(84) bytes of data.
64 bytes from 10.0.0.2: icmp_seq=1 ttl=63 time=0.225 ms
64 bytes from 10.0.0.2: icmp_seq=2 ttl=63 time=0.231 ms

--- 10.0.0.2 ping statistics ---
2 packets transmitted, 2 received, 0% packet loss, time 201ms
rtt min/avg/max/mdev = 0.225/0.228/0.231/0.003 ms
"""
PING_LOST = """PING 10.0.0.9 (10.0.0.9) 56(84) bytes of data.
From 10.0.0.1 icmp_seq=1 Destination Net Unreachable

--- 10.0.0.9 ping statistics ---
4 packets transmitted, 1 received, +1 errors, 75% packet loss, time 601ms
"""
TRACE = """traceroute to 10.0.0.9 (10.0.0.9), 16 hops max, 60 byte packets
 1  192.168.1.254  0.130 ms
 2  10.18.0.14  0.094 ms
 3  *
 4  10.0.0.9  0.110 ms
"""


@pytest.mark.parametrize(
    ("command", "argv", "form"),
    [
        ("show ip route", ["vtysh", "-c", "show ip route", "-c", "show ip route json"], "trailing"),
        ("show ip ospf neighbor json", ["vtysh", "-c", "show ip ospf neighbor json"], "whole"),
        ("show running-config", ["vtysh", "-c", "show running-config"], "none"),
        ("show ip ospf border-routers", ["vtysh", "-c", "show ip ospf border-routers"], "none"),
        ("ip -br addr", ["ip", "-br", "addr"], "none"),
        ("ip -j route get 10.0.0.1", ["ip", "-j", "route", "get", "10.0.0.1"], "whole"),
        ("ss -tlnp", ["ss", "-tlnp"], "none"),
        ("iptables -t nat -L -n -v", ["iptables", "-t", "nat", "-L", "-n", "-v"], "none"),
        ("nft -j list ruleset", ["nft", "-j", "list", "ruleset"], "whole"),
        ("tail -n 20 /var/log/frr/frr.log", ["tail", "-n", "20", "/var/log/frr/frr.log"], "none"),
        ("sysctl -n net.ipv4.ip_forward", ["sysctl", "-n", "net.ipv4.ip_forward"], "none"),
        ("sysctl -a", ["sysctl", "-a"], "none"),
    ],
)
def test_read_commands_and_where_their_json_is(command: str, argv: list[str], form: str) -> None:
    read = parse_read(command)
    assert (read.argv, read.json_form) == (argv, form)


def test_trailing_json_splits_from_the_text() -> None:
    text = "Codes: K - kernel\n{not json} here\nO>* 10.0.0.0/30 [110/20]\n"
    document = '{\n  "10.0.0.0/30":[\n    {"protocol":"ospf"}\n  ]\n}\n'
    assert split_trailing_json(text + document) == (text, {"10.0.0.0/30": [{"protocol": "ospf"}]})
    assert split_trailing_json(document) == ("", {"10.0.0.0/30": [{"protocol": "ospf"}]})
    failed = text + "% Unknown command: show ip route json\n"
    assert split_trailing_json(failed) == (text, None)


@pytest.mark.parametrize(
    "command",
    [
        "", "bash", "show run | include x", "show ip route\nreboot", "ip route add 1.0.0.0/8",
        "ip -n other addr", "ip -batch f", "ip rule flush", "ip link get", "ss -K", "ss --kill",
        "ss -D file", "iptables -A INPUT -j DROP", "iptables -L -t bogus", "iptables -S -L",
        "nft add table ip t", "nft list ruleset -f x", "cat /etc/shadow",
        "cat /etc/frr/../shadow", "tail -n x /var/log/frr/frr.log", "sysctl -w net.a=1",
        "sysctl net.a=1", "sysctl kernel.pid_max", "sysctl -p", "show 'unclosed",
    ],
)  # fmt: skip
def test_read_allowlist_refuses_with_the_allowed_forms(command: str) -> None:
    with pytest.raises(ReadRefused) as refused:
        parse_read(command)
    assert "Allowed forms:" in str(refused.value) and refused.value.reason


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        ("clear ip ospf process", ["vtysh", "-c", "clear ip ospf process"]),
        ("clear bgp *", ["vtysh", "-c", "clear bgp *"]),
        ("clear ip bgp 10.0.0.1 soft in", ["vtysh", "-c", "clear ip bgp 10.0.0.1 soft in"]),
        ("ip link set dev eth0 up", ["ip", "link", "set", "dev", "eth0", "up"]),
        ("ip rule del pref 1000", ["ip", "rule", "del", "pref", "1000"]),
        ("tc qdisc del dev eth0 root", ["tc", "qdisc", "del", "dev", "eth0", "root"]),
        (
            "tc class change dev eth0 classid 1:10 htb rate 1gbit",
            ["tc", "class", "change", "dev", "eth0", "classid", "1:10", "htb", "rate", "1gbit"],
        ),
    ],
)
def test_state_changing_forms(command: str, argv: list[str]) -> None:
    assert parse_command(command) == argv


@pytest.mark.parametrize(
    "command",
    ["ip rule flush", "ip rule show", "tc filter add dev eth0", "tc -b file", "tc qdisc show"],
)
def test_policy_rules_and_queues_change_only_one_at_a_time(command: str) -> None:
    with pytest.raises(CommandRefused):
        parse_command(command)


@pytest.mark.parametrize(
    "command", ["clear counters", "clear ip ospf process | x", "clear bgp $(id)", "write memory"]
)
def test_other_frr_operations_are_refused(command: str) -> None:
    with pytest.raises(CommandRefused):
        parse_command(command)


def test_ping_output_parses_into_loss_and_times() -> None:
    ok = parse_ping("h1", "h2", PING_OK)
    assert (ok.transmitted, ok.received, ok.loss_percent, ok.reachable) == (2, 2, 0.0, True)
    assert ok.rtt_ms == [0.225, 0.231] and (ok.rtt_min_ms, ok.rtt_max_ms) == (0.225, 0.231)
    lost = parse_ping("h1", "10.0.0.9", PING_LOST)
    assert (lost.transmitted, lost.received, lost.loss_percent) == (4, 1, 75.0)
    assert lost.rtt_avg_ms is None and parse_ping("h1", "x", "").loss_percent == 100.0


def test_traceroute_output_parses_into_hops() -> None:
    trace = parse_traceroute("h1", "h2", "10.0.0.9", TRACE)
    assert [(h.hop, h.address) for h in trace.hops] == [
        (1, "192.168.1.254"), (2, "10.18.0.14"), (3, None), (4, "10.0.0.9"),
    ]  # fmt: skip
    assert trace.reached and trace.hops[0].rtt_ms == 0.13
    assert not parse_traceroute("h1", "h2", "10.0.0.8", TRACE).reached


def test_capture_filter_cannot_carry_tcpdump_options() -> None:
    argv = tcpdump_argv("eth0", "icmp and host 10.0.0.1", 5, "/tmp/c.pcap")
    assert argv[-5:] == ["--", "icmp", "and", "host", "10.0.0.1"]
    for interface, expression in [("eth0", "-z /bin/sh"), ("eth0;x", ""), ("eth0", "a\nb")]:
        with pytest.raises(CaptureRefused):
            tcpdump_argv(interface, expression, 5, "/tmp/c.pcap")


def test_pcap_decodes_to_summaries_and_survives_a_cut_file(tmp_path: Path) -> None:
    from scapy.layers.inet import ICMP, IP
    from scapy.layers.l2 import ARP, Ether
    from scapy.utils import wrpcap

    path = tmp_path / "c.pcap"
    packets = [
        Ether() / IP(src="10.0.0.1", dst="10.0.0.2") / ICMP(),
        Ether() / ARP(psrc="10.0.0.1", pdst="10.0.0.2"),
    ]
    wrpcap(str(path), packets)
    data = path.read_bytes()
    decoded = decode_pcap(data)
    assert [(p.protocol, p.src, p.dst) for p in decoded] == [
        ("ICMP", "10.0.0.1", "10.0.0.2"), ("ARP", "10.0.0.1", "10.0.0.2"),
    ]  # fmt: skip
    assert decoded[0].time_s == 0.0
    assert decode_pcap(data[:-50]) == decoded[:1], "a record cut in its header is dropped"
    assert decode_pcap(b"") == [] and decode_pcap(b"not a pcap") == []


def _public() -> PublicHalf:
    return PublicHalf(
        brief="b",
        devices=[
            DeviceFacts(name="r-1", role="router", interfaces=[
                InterfaceFacts(name="eth0", link="t0", address="10.0.0.1/30"),
                InterfaceFacts(name="eth1", link="lan0"),
            ]),
            DeviceFacts(name="r2", role="router", interfaces=[
                InterfaceFacts(name="eth0", link="t0"), InterfaceFacts(name="eth1", link="lan0"),
            ]),
            DeviceFacts(
                name="h1", role="host", interfaces=[InterfaceFacts(name="eth0", link="lan0")]
            ),
        ],
        links=[("t0", ["r-1", "r2"]), ("lan0", ["r-1", "r2", "h1"])],
    )  # fmt: skip


def test_mermaid_draws_routers_hosts_links_and_lans() -> None:
    diagram = mermaid(_public()).splitlines()
    assert diagram[0] == "flowchart LR"
    assert '  n_r_1["r-1"]' in diagram and '  n_h1("h1")' in diagram
    assert '  n_r_1 ---|"eth0 - eth0"| n_r2' in diagram
    assert "  n_lan_lan0{{lan0}}" in diagram and "  n_h1 --- n_lan_lan0" in diagram
    view = topology_view(_public())
    assert [link.devices for link in view.links] == [["r-1", "r2"], ["r-1", "r2", "h1"]]


def test_trajectory_records_calls_in_order() -> None:
    trajectory = Trajectory(episode="e")
    trajectory.record("show", {"device": "r1"}, time.monotonic(), ok=True, summary="1 chars")
    time.sleep(0.01)
    started = time.monotonic()
    trajectory.record("execute", {}, started, ok=True, summary="exit 0", changed_state=True)
    assert [s.index for s in trajectory.steps] == [0, 1]
    assert trajectory.state_changes == 1
    assert trajectory.steps[0].time <= trajectory.steps[1].time


@pytest.mark.parametrize(
    "command",
    [
        "ip route add 10.2.0.0/24 via 10.0.0.2 proto ospf",
        "ip route replace 10.2.0.0/24 via 10.0.0.2 protocol 188",
        "ip -4 ro add local 10.2.0.10 dev lo table local pro kernel",
    ],
)
def test_a_route_cannot_claim_a_routing_protocol_as_its_source(command: str) -> None:
    with pytest.raises(CommandRefused, match="protocol is set by whoever installs it"):
        parse_command(command)
    assert parse_command("ip route add 10.2.0.0/24 via 10.0.0.2 metric 5 pref high")
