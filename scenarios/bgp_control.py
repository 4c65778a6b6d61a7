"""BGP faults of the control plane: a wrong peer AS, a policy requirement with no policy, and
policies that steer traffic off the intended exit while everything stays reachable.

In these labs every router is its own AS, so a route's AS path is its hop count and the
intended path between two sites is the unique shortest one.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

import networkx as nx

from netdojo.scenarios.faults import (
    FaultContext,
    FaultPlan,
    Injector,
    bgp_end,
    route_probe,
    session_probe,
)
from netdojo.scenarios.forwarding import Impact
from netdojo.scenarios.model import Fault, Probe, configure, execute
from netdojo.scenarios.network import Network


def _address_towards(network: Network, router: str, peer: str) -> str:
    """The address of ``peer`` on its link with ``router``."""
    return network.node(peer).iface_to(router).address.split("/")[0]


def wrong_remote_as(ctx: FaultContext) -> FaultPlan | None:
    """One end expects the wrong peer AS: every OPEN fails with Bad Peer AS.

    Each failed OPEN doubles FRR's idle timer, so the fix clears the session as well.
    """
    if not (picked := bgp_end(ctx)):
        return None
    a, b, address, own, peer_as = picked
    step = 10 * ctx.rng.randint(1, 5)
    wrong = peer_as + step if peer_as + step <= 65534 else peer_as - step
    head = f"router bgp {own}"
    tag = "bgp.wrong_remote_as"
    return FaultPlan(
        Fault(
            type=tag,
            device=a,
            params={"peer": address, "wrong": wrong, "intended": peer_as},
            inject=[configure(a, head, f"neighbor {address} remote-as {wrong}")],
            fix=[
                configure(a, head, f"neighbor {address} remote-as {peer_as}"),
                execute(a, f"clear bgp {address}"),
            ],
            present=[session_probe(ctx.network, a, b, False, tag)],
        ),
        Impact(down_links={frozenset((a, b))}),
        [session_probe(ctx.network, a, b, True, tag)],
    )


def requires_policy(ctx: FaultContext) -> FaultPlan | None:
    """`bgp ebgp-requires-policy` with no policy: sessions stay up but carry no routes.

    The setting is not retroactive, so injection and fix both end with a soft clear.
    """
    if ctx.routing != "bgp":
        return None
    routers = sorted(r.name for r in ctx.network.routers)
    ctx.rng.shuffle(routers)
    router = next((r for r in routers if ctx.take(f"bgp.policy:{r}")), None)
    if router is None:
        return None
    head = f"router bgp {ctx.network.node(router).asn}"
    peers = sorted(ctx.network.router_graph().neighbors(router))
    hosts = sorted(ctx.network.lans)
    filtered = {(router, p, h) for p in peers for h in hosts}
    filtered |= {(p, router, h) for p in peers for h in hosts}
    tag = "bgp.requires_policy"
    line = "no bgp ebgp-requires-policy"
    present = Probe(
        id=f"{tag}:{router}",
        description=f"{router} requires a policy on its eBGP sessions",
        kind="config",
        device=router,
        params={"pattern": line, "expect": False},
    )
    soft = execute(router, "clear bgp * soft")
    return FaultPlan(
        Fault(
            type=tag,
            device=router,
            params={},
            inject=[configure(router, head, "bgp ebgp-requires-policy"), soft],
            fix=[configure(router, head, line), soft],
            present=[present],
        ),
        Impact(filtered=filtered),
        [],
    )


class ExitChoice(NamedTuple):
    """Traffic from ``origin`` to ``host`` leaves ``source`` towards ``intended``; steering
    can push it to ``other`` instead."""

    origin: str
    host: str
    prefix: str
    source: str
    intended: str
    other: str

    def report(self) -> str:
        return f"traffic from {self.origin} to {self.host} takes a longer path than intended"


def _exit_choice(ctx: FaultContext, slack: int) -> ExitChoice | None:
    """A site pair whose traffic can be steered at its source router.

    The intended path is the unique shortest one; every best path of the alternative next
    router avoids the source; ``slack`` bounds how much longer the alternative may be.
    """
    graph = ctx.network.router_graph()
    pairs = list(itertools.permutations(sorted(ctx.network.lans), 2))
    ctx.rng.shuffle(pairs)
    for a, b in pairs:
        source, target = ctx.network.router_of(a), ctx.network.router_of(b)
        if source == target:
            continue
        paths = list(nx.all_shortest_paths(graph, source, target))
        if len(paths) != 1:
            continue
        intended, distance = paths[0][1], len(paths[0]) - 1
        for other in sorted(graph.neighbors(source)):
            if other == intended:
                continue
            around = nx.shortest_path_length(graph, other, target)
            if around >= 1 + distance or 1 + around - distance > slack:
                continue  # a best path of the alternative could come back through the source
            if ctx.take(f"bgp.exit:{source}", f"bgp.exit:{intended}"):
                return ExitChoice(a, b, ctx.network.lans[b], source, intended, other)
    return None


def _steering_plan(
    ctx: FaultContext,
    tag: str,
    device: str,
    inject: list[str],
    fix: list[str],
    choice: ExitChoice,
) -> FaultPlan:
    source, prefix = choice.source, choice.prefix
    via = _address_towards(ctx.network, source, choice.intended)
    return FaultPlan(
        Fault(
            type=tag,
            device=device,
            params={"prefix": prefix, "intended_via": via},
            inject=[configure(device, *inject)],
            fix=[configure(device, *fix)],
            present=[route_probe(tag, source, prefix, False, via=via)],
        ),
        Impact(),
        [route_probe(tag, source, prefix, True, via=via)],
        choice.report(),
    )


def local_pref_steering(ctx: FaultContext) -> FaultPlan | None:
    """An inbound route-map raises local preference on a longer path to one site."""
    if ctx.routing != "bgp" or not (picked := _exit_choice(ctx, slack=8)):
        return None
    source, other, prefix = picked.source, picked.other, picked.prefix
    asn = ctx.network.node(source).asn
    peer = _address_towards(ctx.network, source, other)
    name = f"{ctx.rng.choice(('PREFER', 'LP', 'PRIMARY'))}-{other.upper()}"
    applied = f"neighbor {peer} route-map {name} in"
    policy = [
        f"ip prefix-list {name}-NETS seq 5 permit {prefix}",
        f"route-map {name} permit 10",
        f" match ip address prefix-list {name}-NETS",
        " set local-preference 200",
        "exit",
        f"route-map {name} permit 20",
        "exit",
    ]
    head = [f"router bgp {asn}", "address-family ipv4 unicast"]
    return _steering_plan(
        ctx,
        "bgp.local_pref_steering",
        source,
        [*policy, *head, applied],
        [*head, f"no {applied}"],
        picked,
    )


PREPENDS = 3


def as_path_prepend_steering(ctx: FaultContext) -> FaultPlan | None:
    """The intended next router prepends its AS towards the source, pushing traffic around."""
    if ctx.routing != "bgp" or not (picked := _exit_choice(ctx, slack=PREPENDS - 1)):
        return None
    source, intended, prefix = picked.source, picked.intended, picked.prefix
    asn = ctx.network.node(intended).asn
    peer = _address_towards(ctx.network, intended, source)
    name = f"{ctx.rng.choice(('PREPEND', 'PAD', 'DEPREF'))}-{source.upper()}"
    applied = f"neighbor {peer} route-map {name} out"
    policy = [
        f"ip prefix-list {name}-NETS seq 5 permit {prefix}",
        f"route-map {name} permit 10",
        f" match ip address prefix-list {name}-NETS",
        f" set as-path prepend {' '.join([str(asn)] * PREPENDS)}",
        "exit",
        f"route-map {name} permit 20",
        "exit",
    ]
    head = [f"router bgp {asn}", "address-family ipv4 unicast"]
    return _steering_plan(
        ctx,
        "bgp.as_path_prepend_steering",
        intended,
        [*policy, *head, applied],
        [*head, f"no {applied}"],
        picked,
    )


BGP_CONTROL_INJECTORS: dict[str, Injector] = {
    "bgp.wrong_remote_as": wrong_remote_as,
    "bgp.requires_policy": requires_policy,
    "bgp.local_pref_steering": local_pref_steering,
    "bgp.as_path_prepend_steering": as_path_prepend_steering,
}
