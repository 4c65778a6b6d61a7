"""Faults of an iBGP core over an OSPF underlay (`scenarios.ibgp`): a border that stops
rewriting the next hop, a session that loses its loopback source, a loopback gone from the
underlay."""

from __future__ import annotations

from netdojo.scenarios.faults.base import FaultContext, FaultPlan, absent_line_test, router_id
from netdojo.scenarios.forwarding import Impact
from netdojo.scenarios.hidden_tests import BgpSessionParams, BgpSessionTest
from netdojo.scenarios.model import Fault, configure
from netdojo.scenarios.network import Network
from netdojo.scenarios.registry import fault


def _core(network: Network) -> list[str]:
    return sorted(r.name for r in network.routers if network.internal(r.name))


def _mesh_peers(network: Network, router: str) -> list[str]:
    return [router_id(network, r) for r in _core(network) if r != router]


def _ibgp_session(network: Network, a: str, b: str, expect: bool, tag: str) -> BgpSessionTest:
    state = "is" if expect else "is not"
    return BgpSessionTest(
        id=f"{tag}:ibgp:{a}-{b}",
        description=f"{a}'s iBGP session with {b} ({router_id(network, b)}) {state} Established",
        device=a,
        params=BgpSessionParams(peer=router_id(network, b), expect=expect),
    )


@fault("bgp.next_hop_self_missing", routing={"ibgp"})
def next_hop_self_missing(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """A border stops rewriting the next hop: its external routes are unusable in the core."""
    network = ctx.network
    borders = sorted(network.node(e).ifaces[0].peer for e in network.externals)
    ctx.rng.shuffle(borders)
    border = next((b for b in borders if ctx.take(f"bgp.nhs:{b}")), None)
    if border is None:
        return None
    peers = _mesh_peers(network, border)
    head = (f"router bgp {network.core_as}", "address-family ipv4 unicast")
    line = f"neighbor {peers[0]} next-hop-self"
    return FaultPlan(
        Fault(
            type=tag,
            device=border,
            params={"peers": peers},
            inject=[configure(border, *head, *(f"no neighbor {p} next-hop-self" for p in peers))],
            fix=[configure(border, *head, *(f"neighbor {p} next-hop-self" for p in peers))],
            present=[
                absent_line_test(
                    tag,
                    border,
                    line,
                    f"{border} does not set itself as next hop towards the core",
                )
            ],
        ),
        Impact(no_next_hop_self={border}),
        [],
    )


@fault("bgp.update_source_missing", routing={"ibgp"})
def update_source_missing(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """Both ends of one iBGP session lose `update-source lo`: each connects from an interface
    address the other does not know (one end alone would heal: the other still connects)."""
    network = ctx.network
    core = _core(network)
    pairs = [(a, b) for a in core for b in core if a < b]
    ctx.rng.shuffle(pairs)
    for a, b in pairs:
        if not ctx.take(f"bgp.ibgp:{a}:{b}"):
            continue
        head = f"router bgp {network.core_as}"
        to_b, to_a = router_id(network, b), router_id(network, a)
        return FaultPlan(
            Fault(
                type=tag,
                device=a,
                params={"peer": b},
                inject=[
                    configure(a, head, f"no neighbor {to_b} update-source lo"),
                    configure(b, head, f"no neighbor {to_a} update-source lo"),
                ],
                fix=[
                    configure(a, head, f"neighbor {to_b} update-source lo"),
                    configure(b, head, f"neighbor {to_a} update-source lo"),
                ],
                present=[_ibgp_session(network, a, b, False, tag)],
            ),
            Impact(down_sessions={frozenset((a, b))}),
            [_ibgp_session(network, a, b, True, tag)],
        )
    return None


@fault("ospf.missing_loopback", routing={"ibgp"})
def missing_loopback(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """A core router's loopback leaves the underlay: every iBGP session to it drops."""
    network = ctx.network
    core = _core(network)
    ctx.rng.shuffle(core)
    router = next((r for r in core if ctx.take(f"ospf.loopback:{r}")), None)
    if router is None:
        return None
    line = f"network {router_id(network, router)}/32 area 0"
    others = [r for r in _core(network) if r != router]
    return FaultPlan(
        Fault(
            type=tag,
            device=router,
            params={"loopback": router_id(network, router)},
            inject=[configure(router, "router ospf", f"no {line}")],
            fix=[configure(router, "router ospf", line)],
            present=[
                absent_line_test(
                    tag,
                    router,
                    line,
                    f"{router} does not announce its loopback in OSPF",
                )
            ],
        ),
        Impact(down_sessions={frozenset((router, other)) for other in others}),
        [_ibgp_session(network, other, router, True, tag) for other in others[:2]],
    )
