"""BGP faults of the control plane: a wrong peer AS, a policy requirement with no policy, and
policies that steer traffic off the intended exit while everything stays reachable.

In these labs every router is its own AS, so a route's AS path is its hop count and the
intended path between two sites is the unique shortest one.
"""

from __future__ import annotations

from netdojo.scenarios.bgp_exits import (
    LOCAL_PREF,
    LOCAL_PREF_SLACK,
    STEERING_NAMES,
    ExitChoice,
    address_towards,
    bgp_head,
    exit_choice,
    prefix_route_map,
)
from netdojo.scenarios.faults.base import (
    FaultContext,
    FaultPlan,
    absent_line_test,
    bgp_end,
    keep_named,
    route_test,
    session_test,
)
from netdojo.scenarios.forwarding import Impact
from netdojo.scenarios.model import Fault, configure, execute
from netdojo.scenarios.registry import fault

PREPENDS = 3


@fault("bgp.wrong_remote_as", routing={"bgp"})
def wrong_remote_as(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """One end expects the wrong peer AS: every OPEN fails with Bad Peer AS.

    Each failed OPEN doubles FRR's idle timer, so the fix clears the session as well.
    """
    if not (picked := bgp_end(ctx)):
        return None
    a, b, address, own, peer_as = picked
    step = 10 * ctx.rng.randint(1, 5)
    wrong = peer_as + step if peer_as + step <= 65534 else peer_as - step
    head = f"router bgp {own}"
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
            present=[session_test(ctx.network, a, b, False, tag)],
        ),
        Impact(down_links={frozenset((a, b))}),
        [session_test(ctx.network, a, b, True, tag)],
    )


@fault("bgp.requires_policy", routing={"bgp"})
def requires_policy(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """`bgp ebgp-requires-policy` with no policy: sessions stay up but carry no routes.

    The setting is not retroactive, so injection and fix both end with a soft clear.
    """
    routers = sorted(r.name for r in ctx.network.routers)
    ctx.rng.shuffle(routers)
    router = next((r for r in routers if ctx.take(f"bgp.policy:{r}")), None)
    if router is None:
        return None
    head = f"router bgp {ctx.network.node(router).asn}"
    peers = sorted(ctx.router_graph.neighbors(router))
    hosts = sorted(ctx.network.lans)
    filtered = {(router, p, h) for p in peers for h in hosts}
    filtered |= {(p, router, h) for p in peers for h in hosts}
    line = "no bgp ebgp-requires-policy"
    present = absent_line_test(
        tag,
        router,
        line,
        f"{router} requires a policy on its eBGP sessions",
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


def _steering_plan(
    ctx: FaultContext,
    tag: str,
    device: str,
    neighbour: str,
    setting: str,
    choice: ExitChoice,
    impact: Impact,
) -> FaultPlan | None:
    """A route-map that applies ``setting`` to the chosen LAN, attached on ``device`` to its
    session with ``neighbour`` (``in`` at the source, ``out`` elsewhere); None if another fault
    removed that neighbour."""
    if not keep_named(ctx, device, neighbour):
        return None
    source, prefix = choice.source, choice.prefix
    via = address_towards(ctx.network, source, choice.intended)
    peer = address_towards(ctx.network, device, neighbour)
    direction = "in" if device == source else "out"
    name = f"{ctx.rng.choice(STEERING_NAMES[direction])}-{neighbour.upper()}"
    applied = f"neighbor {peer} route-map {name} {direction}"
    head = bgp_head(ctx.network, device)
    return FaultPlan(
        Fault(
            type=tag,
            device=device,
            params={"prefix": prefix, "intended_via": via},
            inject=[configure(device, *prefix_route_map(name, prefix, setting), *head, applied)],
            fix=[configure(device, *head, f"no {applied}")],
            present=[route_test(tag, source, prefix, False, via=via)],
        ),
        impact,
        [route_test(tag, source, prefix, True, via=via)],
    )


@fault("bgp.local_pref_steering", routing={"bgp"})
def local_pref_steering(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """An inbound route-map raises local preference on a longer path to one site."""
    if not (picked := exit_choice(ctx, slack=LOCAL_PREF_SLACK)):
        return None
    impact = Impact(preferred={picked.source: {picked.host: picked.other}})
    return _steering_plan(ctx, tag, picked.source, picked.other, LOCAL_PREF, picked, impact)


@fault("bgp.as_path_prepend_steering", routing={"bgp"})
def as_path_prepend_steering(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """The intended next router prepends its AS towards the source, pushing traffic around."""
    if not (picked := exit_choice(ctx, slack=PREPENDS - 1)):
        return None
    asn = ctx.network.node(picked.intended).asn
    setting = f"set as-path prepend {' '.join([str(asn)] * PREPENDS)}"
    impact = Impact(prepends={(picked.intended, picked.source, picked.host): PREPENDS})
    return _steering_plan(ctx, tag, picked.intended, picked.source, setting, picked, impact)
