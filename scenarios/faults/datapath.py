"""What the data-plane fault types share: which host flows cross a link in a direction, and
the hidden tests that measure a flow (a transfer, a throughput, a burst of pings)."""

from __future__ import annotations

from netdojo.scenarios.faults.base import FaultContext
from netdojo.scenarios.hidden_tests import (
    LatencyParams,
    LatencyTest,
    ThroughputParams,
    ThroughputTest,
    TransferParams,
    TransferTest,
)
from netdojo.scenarios.network import Iface, Network

Pair = tuple[str, str]  # (sender, receiver)

TRANSFER_KB = 512
TRANSFER_WITHIN_S = 8
THROUGHPUT_SECONDS = 3
MIN_MBPS = 50.0
"""The throughput every flow must reach; a link runs at hundreds of Mbit/s or more."""
PINGS = 200
MAX_RTT_MS = 100.0
MAX_LOSS_PERCENT = 2.0
MEASURED_PAIRS = 3
"""Flows a fault's targets measure, at most (each measure takes seconds)."""


def crossing(ctx: FaultContext, x: str, y: str) -> list[Pair]:
    """The ordered host pairs whose every way from sender to receiver goes from x to y."""
    return list(ctx.crossings.get((x, y), []))


def crossed_end(ctx: FaultContext) -> tuple[str, str, Iface, list[Pair]] | None:
    """A transit link end not yet faulted that some flows cross from it: (router, peer,
    router's interface towards the peer, those flows)."""
    ends = [(a, b) for a, b in ctx.transit_links] + [(b, a) for a, b in ctx.transit_links]
    ctx.rng.shuffle(ends)
    for x, y in ends:
        pairs = crossing(ctx, x, y)
        iface = ctx.network.node(x).iface_to(y)
        if pairs and ctx.take(f"link:{x}:{y}", f"link:{y}:{x}", f"if:{x}:{iface.name}"):
            return x, y, iface, pairs
    return None


def arriving(ctx: FaultContext, receiver: str) -> list[Pair]:
    """The ordered host pairs towards ``receiver`` whose traffic arrives."""
    return sorted(
        pair for pair, course in ctx.courses.items() if pair[1] == receiver and course.arrives
    )


def measured(ctx: FaultContext, pairs: list[Pair]) -> list[Pair]:
    """Some of ``pairs`` for the targets to measure, drawn with the context's generator."""
    return sorted(ctx.rng.sample(pairs, min(MEASURED_PAIRS, len(pairs))))


def transfer_test(network: Network, tag: str, pair: Pair, expect: bool) -> TransferTest:
    a, b = pair
    state = "finishes" if expect else "hangs"
    return TransferTest(
        id=f"{tag}:transfer:{a}-{b}",
        description=f"a {TRANSFER_KB} kB TCP transfer from {a} to {b} {state}",
        device=a,
        params=TransferParams(
            target=network.host_address(b),
            server=b,
            kilobytes=TRANSFER_KB,
            within_s=TRANSFER_WITHIN_S,
            expect=expect,
        ),
    )


def throughput_test(network: Network, tag: str, pair: Pair, expect: bool) -> ThroughputTest:
    a, b = pair
    state = "reaches" if expect else "stays below"
    return ThroughputTest(
        id=f"{tag}:throughput:{a}-{b}",
        description=f"TCP throughput from {a} to {b} {state} {MIN_MBPS:g} Mbit/s",
        device=a,
        params=ThroughputParams(
            target=network.host_address(b),
            server=b,
            seconds=THROUGHPUT_SECONDS,
            min_mbps=MIN_MBPS,
            expect=expect,
        ),
    )


def latency_test(network: Network, tag: str, pair: Pair, expect: bool) -> LatencyTest:
    a, b = pair
    state = "lose no more than" if expect else "lose more than"
    return LatencyTest(
        id=f"{tag}:latency:{a}-{b}",
        description=f"{PINGS} pings from {a} to {b} {state} {MAX_LOSS_PERCENT:g}%",
        device=a,
        params=LatencyParams(
            target=network.host_address(b),
            count=PINGS,
            max_rtt_ms=MAX_RTT_MS,
            max_loss_percent=MAX_LOSS_PERCENT,
            expect=expect,
        ),
    )
