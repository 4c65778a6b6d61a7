"""Static-route faults: a route gone, sent the wrong way, mistyped, blackholed, or a route
that beats the routing protocol's and sends traffic round a loop or a detour."""

from __future__ import annotations

import ipaddress

from netdojo.scenarios.faults.base import (
    FaultContext,
    FaultPlan,
    added_route,
    hosts_in,
    keep_up,
    mistyped,
    remote_lan_route,
    route_test,
)
from netdojo.scenarios.forwarding import Impact
from netdojo.scenarios.model import Fault, configure, execute
from netdojo.scenarios.registry import fault


def _static_route(ctx: FaultContext, need_alternative: bool) -> tuple[str, str, str] | None:
    """A router's static route to a LAN: (router, prefix, next hop); static plan only."""
    candidates = [
        (router, prefix, hop)
        for router, routes in ctx.static_plan.items()
        for prefix, hop in routes
    ]
    ctx.rng.shuffle(candidates)
    for router, prefix, hop in candidates:
        if need_alternative and len(ctx.network.node(router).ifaces) < 2:
            continue
        if ctx.take(f"route:{router}:{prefix}"):
            return router, prefix, hop
    return None


def _wrong_neighbour(ctx: FaultContext, router: str, hop: str) -> tuple[str, str] | None:
    """Another router next to ``router`` and the address to reach it: (router, address), its
    link kept up (`keep_up`); the drawn one unless a fault cuts its link, then the first other
    in name order whose link is whole."""
    options = sorted(
        (i.peer, ctx.network.node(i.peer).iface_to(router).address.split("/")[0])
        for i in ctx.network.node(router).ifaces
        if ctx.network.node(i.peer).role == "router"
    )
    options = [option for option in options if option[1] != hop]
    if not options:
        return None
    drawn = ctx.rng.choice(options)
    for peer, address in [drawn, *(o for o in options if o != drawn)]:
        if keep_up(ctx, router, peer):
            return peer, address
    return None


@fault("static.missing_route", routing={"static"})
def missing_route(ctx: FaultContext, tag: str) -> FaultPlan | None:
    if not (picked := _static_route(ctx, False)):
        return None
    router, prefix, hop = picked
    return FaultPlan(
        Fault(
            type=tag,
            device=router,
            params={"prefix": prefix},
            inject=[configure(router, f"no ip route {prefix} {hop}")],
            fix=[configure(router, f"ip route {prefix} {hop}")],
            present=[route_test(tag, router, prefix, False)],
        ),
        Impact(drops={router: hosts_in(ctx.network, prefix)}),
        [],
    )


@fault("static.wrong_next_hop", routing={"static"})
def wrong_next_hop(ctx: FaultContext, tag: str) -> FaultPlan | None:
    if not (picked := _static_route(ctx, True)):
        return None
    router, prefix, hop = picked
    wrong = _wrong_neighbour(ctx, router, hop)
    if wrong is None:
        return None
    peer, address = wrong
    present = route_test(tag, router, prefix, True, via=address)
    hosts = hosts_in(ctx.network, prefix)
    return FaultPlan(
        Fault(
            type=tag,
            device=router,
            params={"prefix": prefix, "wrong": address, "intended": hop},
            inject=[
                configure(router, f"no ip route {prefix} {hop}", f"ip route {prefix} {address}")
            ],
            fix=[configure(router, f"no ip route {prefix} {address}", f"ip route {prefix} {hop}")],
            present=[present],
        ),
        Impact(redirects={router: dict.fromkeys(hosts, peer)}),
        [],
    )


@fault("static.wrong_prefix", routing={"static"})
def wrong_prefix(ctx: FaultContext, tag: str) -> FaultPlan | None:
    if not (picked := _static_route(ctx, False)):
        return None
    router, prefix, hop = picked
    typo = mistyped(ctx, prefix)
    if typo is None:
        return None
    return FaultPlan(
        Fault(
            type=tag,
            device=router,
            params={"prefix": prefix, "typo": typo},
            inject=[configure(router, f"no ip route {prefix} {hop}", f"ip route {typo} {hop}")],
            fix=[configure(router, f"no ip route {typo} {hop}", f"ip route {prefix} {hop}")],
            present=[route_test(tag, router, prefix, False)],
        ),
        Impact(drops={router: hosts_in(ctx.network, prefix)}),
        [],
    )


@fault("static.blackhole")
def blackhole(ctx: FaultContext, tag: str) -> FaultPlan | None:
    picked = remote_lan_route(ctx)
    if picked is None:
        return None
    router, prefix = picked
    # A kernel blackhole, or (beside a routing protocol) a static route to Null0 in FRR.
    inject, fix = (
        [execute(router, f"ip route add blackhole {prefix}")],
        [execute(router, f"ip route del blackhole {prefix}")],
    )
    if ctx.routing != "static" and ctx.rng.random() < 0.5:
        inject = [configure(router, f"ip route {prefix} Null0")]
        fix = [configure(router, f"no ip route {prefix} Null0")]
    return FaultPlan(
        Fault(
            type=tag,
            device=router,
            params={"prefix": prefix},
            inject=inject,
            fix=fix,
            present=[route_test(tag, router, prefix, True, blackhole=True)],
        ),
        Impact(drops={router: hosts_in(ctx.network, prefix)}),
        [],
    )


@fault("static.more_specific_hijack")
def more_specific_hijack(ctx: FaultContext, tag: str) -> FaultPlan | None:
    picked = remote_lan_route(ctx)
    if picked is None:
        return None
    router, prefix = picked
    lower = str(next(ipaddress.ip_network(prefix).subnets(new_prefix=25)))
    hosts = hosts_in(ctx.network, lower)
    wrong = _wrong_neighbour(ctx, router, "")
    if not hosts or wrong is None:
        return None
    peer, address = wrong
    # In FRR, or straight in the kernel.
    inject, fix = (
        [configure(router, f"ip route {lower} {address}")],
        [configure(router, f"no ip route {lower} {address}")],
    )
    if ctx.rng.random() < 0.5:
        inject = [execute(router, f"ip route add {lower} via {address}")]
        fix = [execute(router, f"ip route del {lower} via {address}")]
    return FaultPlan(
        Fault(
            type=tag,
            device=router,
            params={"prefix": lower, "via": address},
            inject=inject,
            fix=fix,
            present=[route_test(tag, router, lower, True)],
        ),
        Impact(redirects={router: dict.fromkeys(hosts, peer)}),
        [route_test(tag, router, lower, False)],
    )


@fault("static.route_override", routing={"ospf", "bgp", "ibgp", "rip"})
def route_override(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """A static route for a whole remote LAN towards another neighbour: it beats the routing
    protocol's route, so traffic loops or takes a detour."""
    if not (picked := remote_lan_route(ctx)):
        return None
    router, prefix = picked
    wrong = _wrong_neighbour(ctx, router, "")
    if wrong is None:
        return None
    peer, address = wrong
    return FaultPlan(
        added_route(tag, router, prefix, address),
        Impact(redirects={router: dict.fromkeys(hosts_in(ctx.network, prefix), peer)}),
        [route_test(tag, router, prefix, False, via=address)],
    )
