"""Policy-routing faults: an `ip rule` on a router that sends some traffic to a routing table
other than the main one, where the route is wrong or missing. The routing protocol's tables
are intact, so `show ip route` looks right; `ip rule` and the table it names tell the story.

A rule for the traffic to a LAN picks a table whose default points at another neighbour (the
traffic detours or loops) or is unreachable (it is dropped); a rule for the traffic from a
host's LAN, on its gateway, picks an unreachable table (the host is cut off); a rule for a
wide prefix, above the right one for a LAN, shadows it with a wrong default.
"""

from __future__ import annotations

import ipaddress
import itertools

from netdojo.scenarios.faults.base import FaultContext, FaultPlan, hosts_in
from netdojo.scenarios.forwarding import Impact
from netdojo.scenarios.hidden_tests import IpRuleParams, IpRuleTest
from netdojo.scenarios.model import Fault, ToolCall, execute
from netdojo.scenarios.network import interface
from netdojo.scenarios.registry import fault

UNROUTABLE = ("unreachable", "blackhole", "prohibit")
SUPERNETS = (16, 12)


def _places(ctx: FaultContext, host: str) -> dict[str, set[str]]:
    """Routers that forward traffic towards ``host`` (its gateway aside) and the next routers
    they use for it, over every way at baseline."""
    gateway = ctx.network.router_of(host)
    following: dict[str, set[str]] = {}
    for (_, b), course in ctx.courses.items():
        if b != host:
            continue
        for path in course.paths:
            for here, there in itertools.pairwise(path):
                if here != gateway:
                    following.setdefault(here, set()).add(there)
    return following


def _rule(ctx: FaultContext, router: str) -> tuple[int, int] | None:
    """A priority and a table for a new rule on ``router``, not used by another fault."""
    priority = ctx.rng.choice(range(100, 32000, 100))
    table = ctx.rng.randint(100, 250)
    if not ctx.take(f"prule:pref:{router}:{priority}", f"prule:table:{router}:{table}"):
        return None
    return priority, table


def _present(tag: str, router: str, priority: int) -> IpRuleTest:
    return IpRuleTest(
        id=f"{tag}:{router}:{priority}",
        description=f"{router} has a policy-routing rule at priority {priority}",
        device=router,
        params=IpRuleParams(priority=priority),
    )


def _plan(
    tag: str,
    router: str,
    priority: int,
    inject: list[ToolCall],
    fix: list[ToolCall],
    impact: Impact,
    params: dict[str, object],
) -> FaultPlan:
    return FaultPlan(
        Fault(
            type=tag,
            device=router,
            params={"priority": priority, **params},
            inject=inject,
            fix=fix,
            present=[_present(tag, router, priority)],
        ),
        impact,
        [],
    )


def _added(router: str, route: str, match: str, priority: int, table: int) -> list[ToolCall]:
    """``route`` put in ``table``, and a rule at ``priority`` that sends the traffic ``match``
    selects (``to 10.1.0.0/24``) to that table."""
    return [
        execute(router, f"ip route add {route} table {table}"),
        execute(router, f"ip rule add {match} lookup {table} pref {priority}"),
    ]


def _removed(router: str, route: str, priority: int, table: int) -> list[ToolCall]:
    """The rule at ``priority`` removed, and ``route`` from ``table``."""
    return [
        execute(router, f"ip rule del pref {priority}"),
        execute(router, f"ip route del {route} table {table}"),
    ]


def _wrong_neighbour(ctx: FaultContext, router: str, right: set[str]) -> tuple[str, str] | None:
    """A neighbour router of ``router`` it does not use, and that neighbour's address."""
    node = ctx.network.node(router)
    others = sorted(
        i.peer
        for i in node.ifaces
        if ctx.network.node(i.peer).role == "router" and i.peer not in right
    )
    if not others:
        return None
    wrong = ctx.rng.choice(others)
    return wrong, ctx.network.node(wrong).iface_to(router).address.split("/")[0]


@fault("prule.wrong_table_default")
def wrong_table_default(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """A rule sends the traffic to a LAN to a table whose default goes to the wrong
    neighbour."""
    host = ctx.rng.choice(sorted(ctx.network.lans))
    places = _places(ctx, host)
    if not places:
        return None
    router = ctx.rng.choice(sorted(places))
    picked = _wrong_neighbour(ctx, router, places[router])
    if picked is None or not (rule := _rule(ctx, router)):
        return None
    wrong, address = picked
    priority, table = rule
    lan = ctx.network.lans[host]
    inject = _added(router, f"default via {address}", f"to {lan}", priority, table)
    fix = _removed(router, "default", priority, table)
    impact = Impact(redirects={router: {h: wrong for h in hosts_in(ctx.network, lan)}})
    return _plan(tag, router, priority, inject, fix, impact, {"to": lan, "table": table})


@fault("prule.unroutable_table")
def unroutable_table(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """A rule sends the traffic to a LAN to a table that holds only an unreachable,
    blackhole or prohibit default (a table never filled in: an empty one would fall through
    to the main table)."""
    host = ctx.rng.choice(sorted(ctx.network.lans))
    places = _places(ctx, host)
    if not places:
        return None
    router = ctx.rng.choice(sorted(places))
    if not (rule := _rule(ctx, router)):
        return None
    priority, table = rule
    kind = ctx.rng.choice(UNROUTABLE)
    lan = ctx.network.lans[host]
    inject = _added(router, f"{kind} default", f"to {lan}", priority, table)
    fix = _removed(router, f"{kind} default", priority, table)
    impact = Impact(drops={router: hosts_in(ctx.network, lan)})
    return _plan(tag, router, priority, inject, fix, impact, {"to": lan, "table": table})


@fault("prule.source_unroutable")
def source_unroutable(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """On a host's gateway, a rule sends everything from the host's LAN to a table with no
    usable route: the host is cut off."""
    host = ctx.rng.choice(sorted(ctx.network.lans))
    router = ctx.network.router_of(host)
    if not ctx.take(f"host:{host}") or not (rule := _rule(ctx, router)):
        return None
    priority, table = rule
    kind = ctx.rng.choice(UNROUTABLE)
    lan = ctx.network.lans[host]
    inject = _added(router, f"{kind} default", f"from {lan}", priority, table)
    fix = _removed(router, f"{kind} default", priority, table)
    impact = Impact(isolated=hosts_in(ctx.network, lan))
    return _plan(tag, router, priority, inject, fix, impact, {"from": lan, "table": table})


def _supernet(ctx: FaultContext, lan: str, router: str) -> str | None:
    """A wide prefix around ``lan`` that covers no router address and no LAN of a host whose
    gateway is ``router``."""
    length = ctx.rng.choice(SUPERNETS)
    wide = ipaddress.ip_network(lan).supernet(new_prefix=length)
    network = ctx.network
    for node in network.routers:
        for iface in node.ifaces:
            lan_port = network.node(iface.peer).role == "host"
            inside = interface(iface.address).ip in wide
            if inside and (not lan_port or node.name == router):
                return None
    return str(wide)


@fault("prule.shadowed_rule")
def shadowed_rule(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """A rule for a LAN pins its traffic to a table with the right next hop; a rule above it,
    for a wide prefix around that LAN, sends the traffic to a table whose default goes to the
    wrong neighbour. The fix removes the shadowing rule; the right one may stay."""
    host = ctx.rng.choice(sorted(ctx.network.lans))
    places = _places(ctx, host)
    single = sorted(r for r, hops in places.items() if len(hops) == 1)
    if not single:
        return None
    router = ctx.rng.choice(single)
    lan = ctx.network.lans[host]
    wide = _supernet(ctx, lan, router)
    picked = _wrong_neighbour(ctx, router, places[router])
    if wide is None or picked is None:
        return None
    right = next(iter(places[router]))
    right_address = ctx.network.node(right).iface_to(router).address.split("/")[0]
    wrong, wrong_address = picked
    if not (good := _rule(ctx, router)) or not (bad := _rule(ctx, router)):
        return None
    (low, high), (good_table, bad_table) = sorted((good[0], bad[0])), (good[1], bad[1])
    if low == high or good_table == bad_table:
        return None
    inject = [
        *_added(router, f"default via {right_address}", f"to {lan}", high, good_table),
        *_added(router, f"default via {wrong_address}", f"to {wide}", low, bad_table),
    ]
    fix = _removed(router, "default", low, bad_table)
    impact = Impact(redirects={router: {h: wrong for h in hosts_in(ctx.network, wide)}})
    params = {"to": wide, "table": bad_table, "shadows": lan}
    return _plan(tag, router, low, inject, fix, impact, params)
