"""Path-MTU faults: a transit link narrowed on both ends (its MTU below the hosts' 1500) while
the ICMP "fragmentation needed" messages that path-MTU discovery lives on are filtered. Pings
pass; a TCP sender's full-size segments vanish at the narrow link and its transfer hangs.

The filter sits on the router before the narrow link, which can no longer send the message
(iptables or nftables, on its own output), or on the sender's gateway, which drops it on the
way back to the sender's LAN. The fix removes the filter; the narrow link may stay.

Faults of one instance interact: a sender that learns a smaller MTU from a narrow link whose
messages get through never meets a later one. Each fault records its narrow link, its filter
and the flows it stalls in the context's keys, and lands only where every flow recorded
still stalls with it in place.
"""

from __future__ import annotations

import itertools

from netdojo.scenarios.faults.base import FaultContext, FaultPlan
from netdojo.scenarios.faults.datapath import Pair, crossed_end, measured, transfer_test
from netdojo.scenarios.forwarding import Impact
from netdojo.scenarios.model import Fault, ToolCall, execute
from netdojo.scenarios.network import Iface
from netdojo.scenarios.registry import fault
from netdojo.scenarios.symptoms import Observation

HOST_MTU = 1500
MTUS = (1280, 1400, 1420, 1450, 1476)
ICMP_MATCHES = ("--icmp-type fragmentation-needed", "--icmp-type 3/4")
NFT_TABLES = ("hardening", "icmp_guard", "edge_filter", "tmp")


def _keys(used: set[str], kind: str) -> list[list[str]]:
    return [key.split(":")[2:] for key in used if key.startswith(f"pmtu:{kind}:")]


def _stalls(ctx: FaultContext, used: set[str], pair: Pair) -> bool:
    """Whether a transfer from the pair's sender hangs on every way, under the narrow links
    and filters recorded in ``used``: it hangs at the first link narrower than what the
    sender has learnt whose "fragmentation needed" does not come back."""
    narrow = {(x, y): int(mtu) for x, y, mtu in _keys(used, "narrow")}
    silent = {router for (router,) in _keys(used, "silent")}
    guarded = {(router, lan) for router, lan in _keys(used, "guard")}
    a, _ = pair
    gateway, lan = ctx.network.router_of(a), ctx.network.lans[a]
    course = ctx.courses[pair]
    if not course.arrives:
        return False
    for path in course.paths:
        learnt, hung = HOST_MTU, False
        for x, y in itertools.pairwise(path):
            mtu = narrow.get((x, y), HOST_MTU)
            if mtu >= learnt:
                continue
            if x in silent or (x != gateway and (gateway, lan) in guarded):
                hung = True
                break
            learnt = mtu
        if not hung:
            return False
    return True


def _narrowed(ctx: FaultContext) -> tuple[str, str, Iface, list[Pair], int] | None:
    picked = crossed_end(ctx)
    if picked is None:
        return None
    x, y, near, pairs = picked
    return x, y, near, pairs, ctx.rng.choice(MTUS)


def _land(
    ctx: FaultContext,
    tag: str,
    device: str,
    narrowed: tuple[str, str, Iface, list[Pair], int],
    filter_key: str,
    filtering: list[ToolCall],
    fix: list[ToolCall],
    params: dict[str, object],
) -> FaultPlan | None:
    """The plan of a fault that narrows a link and filters, if the flows it is to stall do,
    and every flow stalled by the faults already placed still does."""
    x, y, near, pairs, mtu = narrowed
    keys = {f"pmtu:narrow:{x}:{y}:{mtu}", f"pmtu:narrow:{y}:{x}:{mtu}", filter_key}
    with_it = ctx.used | keys
    stalled = [pair for pair in pairs if _stalls(ctx, with_it, pair)]
    recorded = [(a, b) for a, b in _keys(ctx.used, "stall")]
    if not stalled or not all(_stalls(ctx, with_it, pair) for pair in recorded):
        return None
    chosen = measured(ctx, stalled)
    if not ctx.take(*keys, *(f"pmtu:stall:{a}:{b}" for a, b in chosen)):
        return None
    far = ctx.network.node(y).iface_to(x)
    inject = [
        execute(x, f"ip link set dev {near.name} mtu {mtu}"),
        execute(y, f"ip link set dev {far.name} mtu {mtu}"),
        *filtering,
    ]
    healthy = [transfer_test(ctx.network, tag, pair, True) for pair in chosen]
    present = [transfer_test(ctx.network, tag, chosen[0], False)]
    params = {"link": f"{x}-{y}", "interface": near.name, "mtu": mtu, **params}
    return FaultPlan(
        Fault(type=tag, device=device, params=params, inject=inject, fix=fix, present=present),
        Impact(),
        healthy,
        frozenset(Observation("stalled", pair) for pair in chosen),
    )


@fault("pmtu.icmp_filtered_near")
def icmp_filtered_near(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """The router before the narrow link drops the "fragmentation needed" it sends."""
    if not (narrowed := _narrowed(ctx)):
        return None
    x = narrowed[0]
    rule = f"OUTPUT -p icmp {ctx.rng.choice(ICMP_MATCHES)} -j DROP"
    filtering, fix = [execute(x, f"iptables -A {rule}")], [execute(x, f"iptables -D {rule}")]
    return _land(ctx, tag, x, narrowed, f"pmtu:silent:{x}", filtering, fix, {})


@fault("pmtu.icmp_filtered_nft")
def icmp_filtered_nft(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """An nftables table on the router before the narrow link drops the "fragmentation
    needed" it sends."""
    if not (narrowed := _narrowed(ctx)):
        return None
    x = narrowed[0]
    table = ctx.rng.choice(NFT_TABLES)
    chain = "{ type filter hook output priority 0 ; }"
    filtering = [
        execute(x, f"nft add table ip {table}"),
        execute(x, f"nft add chain ip {table} output '{chain}'"),
        execute(
            x,
            f"nft add rule ip {table} output icmp type destination-unreachable "
            "icmp code frag-needed drop",
        ),
    ]
    fix = [execute(x, f"nft delete table ip {table}")]
    params = {"table": table}
    return _land(ctx, tag, x, narrowed, f"pmtu:silent:{x}", filtering, fix, params)


@fault("pmtu.icmp_filtered_edge")
def icmp_filtered_edge(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """A sender's gateway drops the "fragmentation needed" messages on their way back to the
    sender's LAN."""
    if not (narrowed := _narrowed(ctx)):
        return None
    x, y, near, pairs, mtu = narrowed
    network = ctx.network
    senders = sorted({a for a, _ in pairs if network.router_of(a) != x})
    if not senders:
        return None
    sender = ctx.rng.choice(senders)
    gateway, lan = network.router_of(sender), network.lans[sender]
    rule = f"FORWARD -d {lan} -p icmp {ctx.rng.choice(ICMP_MATCHES)} -j DROP"
    filtering = [execute(gateway, f"iptables -I {rule}")]
    fix = [execute(gateway, f"iptables -D {rule}")]
    flows = [pair for pair in pairs if pair[0] == sender]
    key = f"pmtu:guard:{gateway}:{lan}"
    narrowed = (x, y, near, flows, mtu)
    return _land(ctx, tag, gateway, narrowed, key, filtering, fix, {"filtered_for": lan})
