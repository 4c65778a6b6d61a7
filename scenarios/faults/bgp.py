"""eBGP faults: sessions kept down (a neighbour gone, passwords, a prefix limit), a LAN no
longer announced, and filters on a session that drop a prefix the far side needs."""

from __future__ import annotations

from netdojo.scenarios.faults.base import (
    FaultContext,
    FaultPlan,
    Injector,
    absent_line_test,
    bgp_end,
    config_line_test,
    hosts_in,
    lan_port,
    session_test,
    subnet_of,
)
from netdojo.scenarios.forwarding import Impact
from netdojo.scenarios.model import Fault, configure
from netdojo.scenarios.registry import fault


def _session_down(
    ctx: FaultContext, tag: str, inject: list[str], fix: list[str], removes: bool = False
) -> FaultPlan | None:
    """A fault that keeps one eBGP session down; lines are run under ``router bgp``;
    ``removes``: they remove the neighbour."""
    if not (picked := bgp_end(ctx, removes)):
        return None
    a, b, address, own, peer_as = picked
    values = {"peer": address, "peer_as": peer_as, "key": f"pw{ctx.rng.randint(100, 999)}"}
    head = f"router bgp {own}"
    return FaultPlan(
        Fault(
            type=tag,
            device=a,
            params={"peer": address},
            inject=[configure(a, head, *(line.format(**values) for line in inject))],
            fix=[configure(a, head, *(line.format(**values) for line in fix))],
            present=[session_test(ctx.network, a, b, False, tag)],
        ),
        Impact(down_links={frozenset((a, b))}),
        [session_test(ctx.network, a, b, True, tag)],
    )


@fault("bgp.missing_neighbor", routing={"bgp"})
def missing_neighbor(ctx: FaultContext, tag: str) -> FaultPlan | None:
    return _session_down(
        ctx,
        tag,
        ["no neighbor {peer}"],
        ["neighbor {peer} remote-as {peer_as}", "neighbor {peer} timers connect 1"],
        removes=True,
    )


@fault("bgp.md5_one_side", routing={"bgp"})
def md5_one_side(ctx: FaultContext, tag: str) -> FaultPlan | None:
    return _session_down(
        ctx, tag, ["neighbor {peer} password {key}"], ["no neighbor {peer} password"]
    )


@fault("bgp.max_prefix", routing={"bgp"})
def max_prefix(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """A limit of one prefix on a session whose peer always sends two: its loopback and its
    LAN, which no other fault may take away."""
    if not (picked := bgp_end(ctx)):
        return None
    a, b, address, own, _ = picked
    hosts = [f"host:{h}" for h in sorted(ctx.network.lans) if ctx.network.router_of(h) == b]
    if not hosts or not ctx.take(*hosts):
        return None
    head = (f"router bgp {own}", "address-family ipv4 unicast")
    return FaultPlan(
        Fault(
            type=tag,
            device=a,
            params={"peer": address},
            inject=[configure(a, *head, f"neighbor {address} maximum-prefix 1")],
            fix=[configure(a, *head, f"no neighbor {address} maximum-prefix 1")],
            present=[session_test(ctx.network, a, b, False, tag)],
        ),
        Impact(down_links={frozenset((a, b))}),
        [session_test(ctx.network, a, b, True, tag)],
    )


@fault("bgp.md5_mismatch", routing={"bgp"})
def md5_mismatch(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """Passwords on both ends of a session that do not match."""
    if not (picked := bgp_end(ctx)):
        return None
    a, b, address, own, peer_as = picked
    back = ctx.network.node(a).iface_to(b).address.split("/")[0]
    secret = f"{ctx.rng.choice(('Lab', 'Peer', 'Bgp'))}{ctx.rng.randint(10, 99)}"
    return FaultPlan(
        Fault(
            type=tag,
            device=a,
            params={"peer": address},
            inject=[
                configure(a, f"router bgp {own}", f"neighbor {address} password {secret}A"),
                configure(b, f"router bgp {peer_as}", f"neighbor {back} password {secret}B"),
            ],
            fix=[
                configure(a, f"router bgp {own}", f"no neighbor {address} password"),
                configure(b, f"router bgp {peer_as}", f"no neighbor {back} password"),
            ],
            present=[session_test(ctx.network, a, b, False, tag)],
        ),
        Impact(down_links={frozenset((a, b))}),
        [session_test(ctx.network, a, b, True, tag)],
    )


@fault("bgp.missing_network", routing={"bgp"})
def missing_network(ctx: FaultContext, tag: str) -> FaultPlan | None:
    if not (picked := lan_port(ctx)):
        return None
    router, host, iface = picked
    subnet = subnet_of(iface)
    asn = ctx.network.node(router).asn
    present = absent_line_test(
        tag,
        router,
        f"network {subnet}",
        f"{router} does not announce {subnet} in BGP",
    )
    head = (f"router bgp {asn}", "address-family ipv4 unicast")
    return FaultPlan(
        Fault(
            type=tag,
            device=router,
            params={"prefix": subnet},
            inject=[configure(router, *head, f"no network {subnet}")],
            fix=[configure(router, *head, f"network {subnet}")],
            present=[present],
        ),
        Impact(unannounced={host}),
        [],
    )


def _export_filter(ctx: FaultContext) -> tuple[str, str, str, int, str, set[str]] | None:
    """An eBGP session and a LAN whose announcement crosses it towards the peer."""
    if not (picked := bgp_end(ctx)):
        return None
    a, b, address, own, _ = picked
    hosts = sorted(ctx.network.lans)
    ctx.rng.shuffle(hosts)
    for host in hosts:
        if ctx.network.router_of(host) != b:
            prefix = ctx.network.lans[host]
            return a, b, address, own, prefix, hosts_in(ctx.network, prefix)
    return None


def _filter_lines(kind: str, name: str, prefix: str) -> list[str]:
    """A prefix-list or route-map named ``name`` that drops ``prefix`` and passes the rest."""
    if kind == "prefix-list":
        return [
            f"ip prefix-list {name} seq 5 deny {prefix}",
            f"ip prefix-list {name} seq 10 permit 0.0.0.0/0 le 32",
        ]
    return [
        f"ip prefix-list {name}-MATCH seq 5 permit {prefix}",
        f"route-map {name} deny 10",
        f" match ip address prefix-list {name}-MATCH",
        "exit",
        f"route-map {name} permit 20",
        "exit",
    ]


FILTER_NAMES = {
    ("prefix-list", "out"): ("EXPORT", "TO", "OUT"),
    ("prefix-list", "in"): ("IMPORT", "FROM", "IN"),
    ("route-map", "out"): ("RM-OUT", "POLICY-OUT", "MAP-OUT"),
    ("route-map", "in"): ("RM-IN", "POLICY-IN", "MAP-IN"),
}


def _filter(kind: str, direction: str) -> Injector:
    """A newly applied filter on one end of a session drops a prefix the far side needs.

    Applying or removing a filter on a neighbour takes effect by itself (no soft clear).
    """

    def injector(ctx: FaultContext, tag: str) -> FaultPlan | None:
        if not (picked := _export_filter(ctx)):
            return None
        sender, receiver, _, _, prefix, hosts = picked
        device, peer = (sender, receiver) if direction == "out" else (receiver, sender)
        address = ctx.network.node(peer).iface_to(device).address.split("/")[0]
        name = f"{ctx.rng.choice(FILTER_NAMES[kind, direction])}-{peer.upper()}"
        applied = f"neighbor {address} {kind} {name} {direction}"
        head = (f"router bgp {ctx.network.node(device).asn}", "address-family ipv4 unicast")
        return FaultPlan(
            Fault(
                type=tag,
                device=device,
                params={"peer": address, "prefix": prefix, kind: name},
                inject=[configure(device, *_filter_lines(kind, name, prefix), *head, applied)],
                fix=[configure(device, *head, f"no {applied}")],
                present=[config_line_test(tag, device, applied)],
            ),
            Impact(filtered={(sender, receiver, h) for h in hosts}),
            [],
        )

    return injector


prefix_list_out = fault("bgp.prefix_list_out", routing={"bgp"})(_filter("prefix-list", "out"))
prefix_list_in = fault("bgp.prefix_list_in", routing={"bgp"})(_filter("prefix-list", "in"))
route_map_out_deny = fault("bgp.route_map_out_deny", routing={"bgp"})(_filter("route-map", "out"))
route_map_in_deny = fault("bgp.route_map_in_deny", routing={"bgp"})(_filter("route-map", "in"))
