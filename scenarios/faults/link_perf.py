"""Link-performance faults: a queueing discipline left on a router port that caps the rate
(a token bucket, or a shaping class), on a transit link or on the port facing a host, and a
random drop that makes a link lossy. Pings pass; a throughput measured with iperf3, or the
loss over a burst of pings, is far outside the tolerance the brief states.

The device kernel has no `netem`, so loss is made by the netfilter `statistic` match, the
other way operators drop a share of packets on Linux.
"""

from __future__ import annotations

from netdojo.scenarios.faults.base import FaultContext, FaultPlan, lan_port, transit_end
from netdojo.scenarios.faults.datapath import (
    MAX_LOSS_PERCENT,
    MIN_MBPS,
    Pair,
    arriving,
    crossed_end,
    latency_test,
    measured,
    throughput_test,
)
from netdojo.scenarios.forwarding import Impact
from netdojo.scenarios.model import Fault, ToolCall, execute
from netdojo.scenarios.network import Iface
from netdojo.scenarios.registry import fault
from netdojo.scenarios.symptoms import Observation

RATES_MBIT = (1, 2, 4, 5)
DROP_SHARES = ("0.08", "0.1", "0.12")


def _slow(
    ctx: FaultContext,
    tag: str,
    device: str,
    pairs: list[Pair],
    inject: list[ToolCall],
    fix: list[ToolCall],
    params: dict[str, object],
) -> FaultPlan:
    chosen = measured(ctx, pairs)
    return FaultPlan(
        Fault(
            type=tag,
            device=device,
            params=params,
            inject=inject,
            fix=fix,
            present=[throughput_test(ctx.network, tag, chosen[0], False)],
        ),
        Impact(),
        [throughput_test(ctx.network, tag, pair, True) for pair in chosen],
        frozenset(Observation("slow", pair, figure=MIN_MBPS) for pair in chosen),
    )


def _token_bucket(
    ctx: FaultContext, tag: str, router: str, iface: Iface, pairs: list[Pair]
) -> FaultPlan:
    """A token bucket on ``iface`` that caps what leaves through it at a drawn rate."""
    rate = ctx.rng.choice(RATES_MBIT)
    tbf = f"tbf rate {rate}mbit burst 32kbit latency 50ms"
    inject = [execute(router, f"tc qdisc add dev {iface.name} root {tbf}")]
    fix = [execute(router, f"tc qdisc del dev {iface.name} root")]
    params = {"interface": iface.name, "rate_mbit": rate}
    return _slow(ctx, tag, router, pairs, inject, fix, params)


@fault("perf.rate_limit")
def rate_limit(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """A token bucket on a transit port caps what leaves through it."""
    if not (picked := crossed_end(ctx)):
        return None
    x, _, iface, pairs = picked
    return _token_bucket(ctx, tag, x, iface, pairs)


@fault("perf.shaper_class")
def shaper_class(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """An HTB shaper on a transit port whose default class is capped far below the link."""
    if not (picked := crossed_end(ctx)):
        return None
    x, _, iface, pairs = picked
    rate = ctx.rng.choice(RATES_MBIT)
    dev = iface.name
    inject = [
        execute(x, f"tc qdisc add dev {dev} root handle 1: htb default 10"),
        execute(
            x, f"tc class add dev {dev} parent 1: classid 1:10 htb rate {rate}mbit ceil {rate}mbit"
        ),
    ]
    fix = [execute(x, f"tc qdisc del dev {dev} root")]
    params = {"interface": dev, "rate_mbit": rate}
    return _slow(ctx, tag, x, pairs, inject, fix, params)


@fault("perf.lan_rate_limit")
def lan_rate_limit(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """A token bucket on the router port facing a host caps everything sent to that host."""
    if not (picked := lan_port(ctx)):
        return None
    router, host, iface = picked
    pairs = arriving(ctx, host)
    if not pairs:
        return None
    return _token_bucket(ctx, tag, router, iface, pairs)


@fault("perf.random_drop")
def random_drop(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """A rule on a transit port drops a random share of what leaves through it."""
    if not (picked := transit_end(ctx)):
        return None
    x, y, iface = picked
    crossing = set(ctx.crossings.get((x, y), []))
    pairs = sorted(
        (a, b)
        for (a, b), there in ctx.courses.items()
        if a < b
        and there.arrives
        and ctx.courses[b, a].arrives
        and ((a, b) in crossing or (b, a) in crossing)
    )
    if not pairs or not ctx.take(f"perf:drop:{x}"):
        return None
    share = ctx.rng.choice(DROP_SHARES)
    rule = f"FORWARD -o {iface.name} -m statistic --mode random --probability {share} -j DROP"
    chosen = measured(ctx, pairs)
    return FaultPlan(
        Fault(
            type=tag,
            device=x,
            params={"interface": iface.name, "share": share},
            inject=[execute(x, f"iptables -I {rule}")],
            fix=[execute(x, f"iptables -D {rule}")],
            present=[latency_test(ctx.network, tag, chosen[0], False)],
        ),
        Impact(),
        [latency_test(ctx.network, tag, pair, True) for pair in chosen],
        frozenset(Observation("lossy", pair, figure=MAX_LOSS_PERCENT) for pair in chosen),
    )
