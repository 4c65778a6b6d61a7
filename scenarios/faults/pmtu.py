"""Path-MTU faults: a transit link narrowed on both ends (its MTU below the hosts' 1500) while
the ICMP "fragmentation needed" messages that path-MTU discovery lives on are filtered. Pings
pass; a TCP sender's full-size segments vanish at the narrow link and its transfer hangs.

The filter sits on the router before the narrow link, which can no longer send the message
(iptables or nftables, on its own output), or on the sender's gateway, which drops it on the
way back to the sender's LAN. The fix removes the filter; the narrow link may stay.
"""

from __future__ import annotations

from netdojo.scenarios.faults.base import FaultContext, FaultPlan
from netdojo.scenarios.faults.datapath import Pair, crossed_end, measured, transfer_test
from netdojo.scenarios.forwarding import Impact
from netdojo.scenarios.model import Fault, ToolCall, execute
from netdojo.scenarios.registry import fault
from netdojo.scenarios.symptoms import Observation

MTUS = (1280, 1400, 1420, 1450, 1476)
ICMP_MATCHES = ("--icmp-type fragmentation-needed", "--icmp-type 3/4")
NFT_TABLES = ("hardening", "icmp_guard", "edge_filter", "tmp")


def _narrowed(ctx: FaultContext) -> tuple[str, str, list[Pair], list[ToolCall], dict[str, object]]:
    """A transit link narrowed on both ends: (the end before it, the other end, the flows
    that cross it from that end, the injection, the parameters); no flows when none is left
    to fault."""
    picked = crossed_end(ctx)
    if picked is None:
        return "", "", [], [], {}
    x, y, near, pairs = picked
    far = ctx.network.node(y).iface_to(x)
    mtu = ctx.rng.choice(MTUS)
    inject = [
        execute(x, f"ip link set dev {near.name} mtu {mtu}"),
        execute(y, f"ip link set dev {far.name} mtu {mtu}"),
    ]
    params: dict[str, object] = {"link": f"{x}-{y}", "interface": near.name, "mtu": mtu}
    return x, y, pairs, inject, params


def _plan(
    ctx: FaultContext,
    tag: str,
    device: str,
    pairs: list[Pair],
    inject: list[ToolCall],
    fix: list[ToolCall],
    params: dict[str, object],
) -> FaultPlan:
    chosen = measured(ctx, pairs)
    healthy = [transfer_test(ctx.network, tag, pair, True) for pair in chosen]
    present = [transfer_test(ctx.network, tag, chosen[0], False)]
    return FaultPlan(
        Fault(type=tag, device=device, params=params, inject=inject, fix=fix, present=present),
        Impact(),
        healthy,
        frozenset(Observation("stalled", pair) for pair in chosen),
    )


@fault("pmtu.icmp_filtered_near")
def icmp_filtered_near(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """The router before the narrow link drops the "fragmentation needed" it sends."""
    x, _, pairs, inject, params = _narrowed(ctx)
    if not pairs or not ctx.take(f"pmtu:filter:{x}"):
        return None
    rule = f"OUTPUT -p icmp {ctx.rng.choice(ICMP_MATCHES)} -j DROP"
    inject.append(execute(x, f"iptables -A {rule}"))
    return _plan(ctx, tag, x, pairs, inject, [execute(x, f"iptables -D {rule}")], params)


@fault("pmtu.icmp_filtered_nft")
def icmp_filtered_nft(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """An nftables table on the router before the narrow link drops the "fragmentation
    needed" it sends."""
    x, _, pairs, inject, params = _narrowed(ctx)
    if not pairs or not ctx.take(f"pmtu:filter:{x}", f"pmtu:nft:{x}"):
        return None
    table = ctx.rng.choice(NFT_TABLES)
    chain = "{ type filter hook output priority 0 ; }"
    inject += [
        execute(x, f"nft add table ip {table}"),
        execute(x, f"nft add chain ip {table} output '{chain}'"),
        execute(
            x,
            f"nft add rule ip {table} output icmp type destination-unreachable "
            "icmp code frag-needed drop",
        ),
    ]
    fix = [execute(x, f"nft delete table ip {table}")]
    return _plan(ctx, tag, x, pairs, inject, fix, {**params, "table": table})


@fault("pmtu.icmp_filtered_edge")
def icmp_filtered_edge(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """A sender's gateway drops the "fragmentation needed" messages on their way back to the
    sender's LAN."""
    x, _, pairs, inject, params = _narrowed(ctx)
    network = ctx.network
    senders = sorted({a for a, _ in pairs if network.router_of(a) != x})
    if not senders:
        return None
    sender = ctx.rng.choice(senders)
    gateway = network.router_of(sender)
    if not ctx.take(f"pmtu:filter:{gateway}"):
        return None
    lan = network.lans[sender]
    rule = f"FORWARD -d {lan} -p icmp {ctx.rng.choice(ICMP_MATCHES)} -j DROP"
    inject.append(execute(gateway, f"iptables -I {rule}"))
    fix = [execute(gateway, f"iptables -D {rule}")]
    flows = [pair for pair in pairs if pair[0] == sender]
    return _plan(ctx, tag, gateway, flows, inject, fix, {**params, "filtered_for": lan})
