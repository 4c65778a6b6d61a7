"""IS-IS faults: adjacencies lost to a router's level or area, a hello password, a passive
port or a port's shorter MTU, and transit steered away by a raised metric or an overload bit
left set.

A circuit-type mismatch is not among them: on a level-1 router FRR runs every circuit at
level 1 whatever its circuit type, so the adjacency stays up.
"""

from __future__ import annotations

from collections.abc import Callable

from netdojo.scenarios.faults.base import (
    FaultContext,
    FaultPlan,
    Injector,
    any_end,
    authenticated_end,
    config_line_test,
    end_fault,
    steering_fault,
)
from netdojo.scenarios.faults.interfaces import shorter_mtu
from netdojo.scenarios.forwarding import Impact
from netdojo.scenarios.hidden_tests import HiddenTest
from netdojo.scenarios.isis import PROCESS, isis_adjacency_test, net, password_line
from netdojo.scenarios.model import Fault, configure
from netdojo.scenarios.network import Iface, Network, Node
from netdojo.scenarios.registry import fault

ROUTER = f"router isis {PROCESS}"
WRONG_AREA = "49.0002"
STEERED_METRIC = 500


def _lost(network: Network, a: str, b: str, tag: str) -> list[HiddenTest]:
    return [isis_adjacency_test(network, a, b, False, tag)]


def _one_way(ctx: FaultContext, a: str, b: str, tag: str) -> tuple[Impact, list[HiddenTest]]:
    """``a`` no longer hears ``b``: it drops the adjacency and leaves ``b`` out of its LSP.
    ``b`` still hears ``a`` and keeps it Up, so routes into ``a``'s side still cross the link
    while routes out of it go round (or nowhere)."""
    return Impact(silenced={(b, a)}), [isis_adjacency_test(ctx.network, a, b, True, tag)]


# A port's MTU lowered on one end: FRR pads its hellos to the MTU (`isis hello padding`), so
# the shorter end drops the peer's full-size hellos.
hello_padding_mtu = fault("isis.hello_padding_mtu", routing={"isis"})(
    shorter_mtu(lambda ctx, a, b, tag: _lost(ctx.network, a, b, tag), _one_way)
)
passive_transit = fault("isis.passive_transit", routing={"isis"})(
    end_fault(any_end, "interface {iface}", [" isis passive"], [" no isis passive"], _lost)
)


def _transit_ports(ctx: FaultContext, router: Node) -> list[Iface]:
    return [i for i in router.ifaces if ctx.network.node(i.peer).role == "router"]


def _router_fault(lines: Callable[[Node], tuple[list[str], list[str]]]) -> Injector:
    """A fault in a router's IS-IS process that costs it every adjacency: each neighbour
    stops seeing it Up. ``lines`` gives the injection and the fix for the router."""

    def injector(ctx: FaultContext, tag: str) -> FaultPlan | None:
        routers = sorted(ctx.network.routers, key=lambda r: r.name)
        ctx.rng.shuffle(routers)
        for router in routers:
            ports = _transit_ports(ctx, router)
            keys = [f"isis.process:{router.name}"]
            keys += [f"if:{router.name}:{i.name}" for i in ports]
            keys += [f"link:{router.name}:{i.peer}" for i in ports]
            keys += [f"link:{i.peer}:{router.name}" for i in ports]
            if not ports or not ctx.take(*keys):
                continue
            inject, fix = lines(router)
            peers = [i.peer for i in ports]
            return FaultPlan(
                Fault(
                    type=tag,
                    device=router.name,
                    params={"peers": peers},
                    inject=[configure(router.name, ROUTER, *inject)],
                    fix=[configure(router.name, ROUTER, *fix)],
                    present=[
                        isis_adjacency_test(ctx.network, peer, router.name, False, tag)
                        for peer in peers
                    ],
                ),
                Impact(down_links={frozenset((router.name, peer)) for peer in peers}),
                [isis_adjacency_test(ctx.network, peer, router.name, True, tag) for peer in peers],
            )
        return None

    return injector


def _area_lines(router: Node) -> tuple[list[str], list[str]]:
    assert router.loopback is not None
    right, wrong = net(router.loopback), net(router.loopback, WRONG_AREA)
    return [f" no net {right}", f" net {wrong}"], [f" no net {wrong}", f" net {right}"]


level_mismatch = fault("isis.level_mismatch", routing={"isis"})(
    _router_fault(lambda _: ([" is-type level-2-only"], [" is-type level-1"]))
)
area_mismatch = fault("isis.area_mismatch", routing={"isis"})(_router_fault(_area_lines))


# One end of the link that authenticates its hellos is given another password.
auth_mismatch = fault("isis.auth_mismatch", routing={"isis"})(
    end_fault(
        authenticated_end(lambda network: network.ospf_md5),
        "interface {iface}",
        [password_line("{key}x")],
        [password_line("{key}")],
        _lost,
    )
)


# A raised IS-IS metric pushes traffic between two sites onto a longer path.
metric_steering = fault("isis.metric_steering", routing={"isis"})(
    steering_fault("metric", STEERED_METRIC, f" isis metric {STEERED_METRIC}", " no isis metric")
)


@fault("isis.overload_bit", routing={"isis"})
def overload_bit(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """The overload bit, set for maintenance and never cleared: the router still reaches and
    is reached, but carries no transit, so traffic that crossed it detours or is lost."""
    graph = ctx.router_graph
    routers = sorted(graph.nodes)
    ctx.rng.shuffle(routers)
    for router in routers:
        # Its links are taken too: a detour another fault relies on must not cross it.
        links = [f"link:{router}:{n}" for n in graph[router]]
        links += [f"link:{n}:{router}" for n in graph[router]]
        if graph.degree(router) < 2 or not ctx.take(f"isis.process:{router}", *links):
            continue
        return FaultPlan(
            Fault(
                type=tag,
                device=router,
                params={},
                inject=[configure(router, ROUTER, " set-overload-bit")],
                fix=[configure(router, ROUTER, " no set-overload-bit")],
                present=[config_line_test(tag, router, "set-overload-bit")],
            ),
            Impact(overloaded={router}),
            [],
        )
    return None
