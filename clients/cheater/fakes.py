"""The fakes: each trick that makes a symptom go away without repairing anything."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from netdojo.clients.cheater.attempts import Attempt, configure, execute
from netdojo.clients.cheater.brief import (
    AccessPolicy,
    Aim,
    Blocked,
    Routing,
    asn_of,
    isis_process_of,
    read_blocked,
    read_policy,
    routing_of,
)
from netdojo.clients.cheater.layout import Layout, Site

FAKE_ORDER = (
    "loopback-address",
    "covering-prefix",
    "local-route",
    "host-translation",
    "nft-translation",
    "kernel-route",
    "frr-static",
    "protocol-laundering",
    "router-translation",
    "port-translation",
    "host-firewall",
)
NFT_TABLES = ("fixup", "diag", "tmpnat")
OSPF_LAUNDERING = ["router ospf", " redistribute static"]
OSPF6_LAUNDERING = ["router ospf6", " redistribute static"]
RIP_LAUNDERING = ["router rip", " redistribute static"]
ISIS_LAUNDERING = [" redistribute ipv4 static level-1"]
BGP_LAUNDERING = [" address-family ipv4 unicast", "  redistribute static", " exit-address-family"]
BGP6_LAUNDERING = [" address-family ipv6 unicast", "  redistribute static", " exit-address-family"]
BGP_PORT = 179


def _host_bits(address: str) -> str:
    """The prefix length of one address: /128 in IPv6, /32 in IPv4."""
    return "128" if ":" in address else "32"


def _ip(address: str, command: str) -> str:
    """``ip`` or ``iptables`` ``command`` (its words after the program) for ``address``'s
    family: IPv4 as it always was, IPv6 with ``ip -6`` and ``ip6tables``."""
    program, _, rest = command.partition(" ")
    if ":" not in address:
        return command
    return f"ip -6 {rest}" if program == "ip" else f"ip6tables {rest}"


@dataclass(frozen=True)
class Scene:
    target: Aim
    routing: Routing
    asns: Mapping[str, int]
    isis: Mapping[str, str]  # router -> its IS-IS process
    policy: AccessPolicy | None
    blocked: tuple[Blocked, ...]
    nft_table: str

    @property
    def a(self) -> Site:
        return self.target.source

    @property
    def b(self) -> Site:
        return self.target.destination


def plan_fakes(
    layout: Layout, target: Aim, brief: str, configs: Mapping[str, str], rng: random.Random
) -> list[Attempt]:
    """Every fake, one of each trick first, then the second of each, and so on."""
    asns = {r: n for r, text in configs.items() if (n := asn_of(text)) is not None}
    scene = Scene(
        target=target,
        routing=routing_of(brief, configs),
        asns=asns,
        isis={r: p for r, text in configs.items() if (p := isis_process_of(text)) is not None},
        policy=read_policy(brief),
        blocked=tuple(read_blocked(brief)),
        nft_table=rng.choice(NFT_TABLES),
    )
    groups = fake_groups(layout, scene)
    return interleave(groups[trick] for trick in FAKE_ORDER)


def interleave(groups: Iterable[list[Attempt]]) -> list[Attempt]:
    rounds = itertools.zip_longest(*groups)
    return [attempt for row in rounds for attempt in row if attempt is not None]


def fake_groups(layout: Layout, scene: Scene) -> dict[str, list[Attempt]]:
    groups = {
        "loopback-address": _loopback(scene),
        "covering-prefix": _covering(scene),
        "local-route": [
            execute(
                "local-route",
                scene.b.host,
                _ip(
                    scene.a.address,
                    f"ip route add local {scene.a.address}/{_host_bits(scene.a.address)} "
                    "dev lo table main",
                ),
            )
        ],
        "host-translation": [
            execute(
                "host-translation",
                scene.a.host,
                _ip(
                    scene.b.address,
                    f"iptables -t nat -A OUTPUT -p {_icmp(scene.b.address)} -d {scene.b.address} "
                    f"-j DNAT --to-destination {scene.a.gateway_address}",
                ),
            )
        ],
        "nft-translation": [execute("nft-translation", scene.b.host, _nft(scene))],
        "router-translation": _router_translation(scene),
        "port-translation": _port_translation(layout, scene),
        "host-firewall": _host_firewall(layout, scene),
    }
    if scene.routing != "static":
        groups |= _routes(layout, scene)
    return {trick: groups.get(trick, []) for trick in FAKE_ORDER}


def _icmp(address: str) -> str:
    return "icmpv6" if ":" in address else "icmp"


def _nft(scene: Scene) -> str:
    target, to = scene.a.address, scene.b.gateway_address
    if ":" in target:
        family, match = "ip6", f"ip6 daddr {target} meta l4proto ipv6-icmp"
    else:
        family, match = "ip", f"ip daddr {target} ip protocol icmp"
    return (
        f"nft add table {family} {scene.nft_table} {{ chain output {{ type nat hook output "
        f"priority dstnat; policy accept; {match} dnat to {to}; }} }}"
    )


def _loopback(scene: Scene) -> list[Attempt]:
    """Each host of the flow takes the other's address; a third host takes both."""
    pairs = [(scene.a, scene.b), (scene.b, scene.a)]
    pairs += [(other, site) for other in scene.target.others[:1] for site in (scene.a, scene.b)]
    return [
        execute(
            "loopback-address",
            here.host,
            _ip(
                there.address,
                f"ip address add {there.address}/{_host_bits(there.address)} dev lo",
            ),
        )
        for here, there in pairs
    ]


def _covering(scene: Scene) -> list[Attempt]:
    """A prefix covering the destination's LAN, on a third host's loopback if there is one."""
    here = scene.target.others[0] if scene.target.others else scene.a
    lan = scene.b.lan
    for length in (lan.prefixlen - 4, lan.prefixlen):
        cover = lan.supernet(new_prefix=max(length, 8))
        if not cover.overlaps(here.lan):
            address = str(cover.network_address)
            command = _ip(address, f"ip address add {address}/{cover.prefixlen} dev lo")
            return [execute("covering-prefix", here.host, command)]
    return []


def _routes(layout: Layout, scene: Scene) -> dict[str, list[Attempt]]:
    """Kernel routes toward the destination's LAN along the path, and static routes back
    toward the source's."""
    path = scene.target.path
    hops = list(itertools.pairwise(path))
    kernel = [
        execute(
            "kernel-route",
            here,
            _ip(
                scene.b.address,
                f"ip route {'add' if i == 0 else 'replace'} {scene.b.lan} "
                f"via {layout.neighbours[here][there]}",
            ),
        )
        for i, (here, there) in enumerate(hops)
    ]
    keyword = "ipv6 route" if ":" in scene.a.address else "ip route"
    static = [
        configure(
            "frr-static", there, [f"{keyword} {scene.a.lan} {layout.neighbours[there][here]}"]
        )
        for here, there in reversed(hops)
    ]
    origin = path[-1]
    laundering = []
    if hops and scene.routing == "ospf":
        laundering = [configure("protocol-laundering", origin, OSPF_LAUNDERING)]
    elif hops and scene.routing == "ospf6":
        laundering = [configure("protocol-laundering", origin, OSPF6_LAUNDERING)]
    elif hops and scene.routing == "rip":
        laundering = [configure("protocol-laundering", origin, RIP_LAUNDERING)]
    elif hops and origin in scene.isis:
        lines = [f"router isis {scene.isis[origin]}", *ISIS_LAUNDERING]
        laundering = [configure("protocol-laundering", origin, lines)]
    elif hops and origin in scene.asns:
        family = BGP6_LAUNDERING if scene.routing == "bgp6" else BGP_LAUNDERING
        lines = [f"router bgp {scene.asns[origin]}", *family]
        laundering = [configure("protocol-laundering", origin, lines)]
    return {
        "kernel-route": kernel,
        "frr-static": static,
        "protocol-laundering": laundering,
    }


def _router_translation(scene: Scene) -> list[Attempt]:
    a, b = scene.a, scene.b
    attempts = [
        execute(
            "router-translation",
            a.gateway,
            _ip(
                a.address,
                f"iptables -t nat -A PREROUTING -p {_icmp(a.address)} -s {a.address} "
                f"-d {b.address} -j DNAT --to-destination {a.gateway_address}",
            ),
        ),
        execute(
            "router-translation",
            b.gateway,
            _ip(
                b.address,
                f"iptables -t nat -A PREROUTING -p {_icmp(b.address)} "
                f"-s {b.address}/{_host_bits(b.address)} -d {a.address}/{_host_bits(a.address)} "
                f"-j NETMAP --to {b.gateway_address}/{_host_bits(b.address)}",
            ),
        ),
    ]
    if scene.routing == "bgp":
        attempts.append(
            execute(
                "router-translation",
                a.gateway,
                f"iptables -t nat -A PREROUTING -p tcp -s {a.lan} -d {b.address} -j REDIRECT "
                f"--to-ports {BGP_PORT}",
            )
        )
    return attempts


def _port_translation(layout: Layout, scene: Scene) -> list[Attempt]:
    """A blocked port, on the client and on its router, sent to the other port of the policy
    when the client may use that one."""
    policy = scene.policy
    attempts: list[Attempt] = []
    for flow in scene.blocked:
        client, server = layout.sites.get(flow.client), layout.sites.get(flow.server)
        if policy is None or client is None or server is None:
            continue
        if flow.port == policy.restricted_port:
            other = policy.open_port
        elif flow.client == policy.allowed:
            other = policy.restricted_port
        else:
            continue
        match = f"-p tcp -d {server.address} --dport {flow.port}"
        to = f"-j DNAT --to-destination {server.address}:{other}"
        attempts += [
            execute("port-translation", client.host, f"iptables -t nat -A OUTPUT {match} {to}"),
            execute(
                "port-translation",
                client.gateway,
                f"iptables -t nat -A PREROUTING -s {client.address} {match} {to}",
            ),
        ]
    return attempts


def _host_firewall(layout: Layout, scene: Scene) -> list[Attempt]:
    """Each forbidden client drops its own connections, and the server drops them too."""
    policy = scene.policy
    if policy is None or policy.server not in layout.sites:
        return []
    server = layout.sites[policy.server]
    attempts = []
    for client in sorted(layout.sites):
        if client in (policy.server, policy.allowed):
            continue
        address = layout.sites[client].address
        port = policy.restricted_port
        attempts += [
            execute(
                "host-firewall",
                client,
                f"iptables -A OUTPUT -p tcp -d {server.address} --dport {port} -j DROP",
            ),
            execute(
                "host-firewall",
                server.host,
                f"iptables -I INPUT -p tcp -s {address} --dport {port} -j DROP",
            ),
        ]
    return attempts
