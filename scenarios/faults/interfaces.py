"""Interface faults: a port down, readdressed or given a shorter MTU, on a transit link or on
the router port that faces a host."""

from __future__ import annotations

from collections.abc import Callable

from netdojo.scenarios.faults.base import (
    FaultContext,
    FaultPlan,
    Injector,
    address_test,
    adjacency_test,
    lan_port,
    link_down,
    narrower,
    route_test,
    transit_end,
)
from netdojo.scenarios.forwarding import Impact
from netdojo.scenarios.hidden_tests import HiddenTest, LinkParams, LinkUpTest, RouteTest
from netdojo.scenarios.model import Fault, configure, execute
from netdojo.scenarios.network import Iface
from netdojo.scenarios.registry import fault


def _port_down(
    tag: str, device: str, interface: str, impact: Impact, healthy: list[HiddenTest]
) -> FaultPlan:
    present = LinkUpTest(
        id=f"{tag}:{device}:{interface}",
        description=f"{device} {interface} is administratively down",
        device=device,
        params=LinkParams(interface=interface, expect=False),
    )
    return FaultPlan(
        Fault(
            type=tag,
            device=device,
            params={"interface": interface},
            inject=[execute(device, f"ip link set dev {interface} down")],
            fix=[execute(device, f"ip link set dev {interface} up")],
            present=[present],
        ),
        impact,
        healthy,
    )


def _readdress_port(
    tag: str, device: str, iface: Iface, wrong: str, impact: Impact, healthy: list[HiddenTest]
) -> FaultPlan:
    """A router port's address replaced through vtysh; the fix puts the intended one back."""
    head, good = f"interface {iface.name}", iface.address
    return FaultPlan(
        Fault(
            type=tag,
            device=device,
            params={"interface": iface.name, "wrong": wrong, "intended": good},
            inject=[configure(device, head, f"no ip address {good}", f"ip address {wrong}")],
            fix=[configure(device, head, f"no ip address {wrong}", f"ip address {good}")],
            present=[address_test(tag, device, iface.name, wrong)],
        ),
        impact,
        healthy,
    )


@fault("iface.admin_down")
def admin_down(ctx: FaultContext, tag: str) -> FaultPlan | None:
    if not (picked := transit_end(ctx, cut=True)):
        return None
    a, b, iface = picked
    impact, healthy = link_down(ctx, a, b, tag)
    return _port_down(tag, a, iface.name, impact, healthy)


@fault("iface.wrong_address")
def wrong_address(ctx: FaultContext, tag: str) -> FaultPlan | None:
    if not (picked := transit_end(ctx, cut=True)):
        return None
    a, b, iface = picked
    octets = iface.address.split("/")[0].split(".")
    wrong = f"{octets[0]}.{octets[1]}.254.{int(octets[3]) % 4 + 4 * ctx.rng.randint(1, 60)}/30"
    impact, healthy = link_down(ctx, a, b, tag)
    if ctx.routing == "isis":
        impact = Impact(unresolved={frozenset((a, b))})
        healthy += [_via_link(ctx, a, b, tag), _via_link(ctx, b, a, tag)]
    return _readdress_port(tag, a, iface, wrong, impact, healthy)


def _via_link(ctx: FaultContext, a: str, b: str, tag: str) -> RouteTest:
    """``a`` reaches ``b``'s loopback straight over their link. IS-IS checks no subnet in its
    point-to-point hellos, so a readdressed end keeps its adjacency Up while its routes over
    the link point at an address no longer on the link; only these routes show it repaired.
    Routing still crosses the link, so no flow goes round it: each end forwards over its other
    best next hops, or drops (`Impact.unresolved`)."""
    loopback = ctx.network.node(b).loopback
    assert loopback is not None
    via = ctx.network.node(b).iface_to(a).address.split("/")[0]
    return route_test(tag, a, f"{loopback}/32", True, via=via)


@fault("iface.lan_wrong_mask")
def lan_wrong_mask(ctx: FaultContext, tag: str) -> FaultPlan | None:
    if not (picked := lan_port(ctx)):
        return None
    router, host, iface = picked
    wrong = narrower(iface.address, ctx.network.host_address(host), ctx.rng)
    return _readdress_port(tag, router, iface, wrong, Impact(isolated={host}), [])


@fault("iface.lan_port_down")
def lan_port_down(ctx: FaultContext, tag: str) -> FaultPlan | None:
    if not (picked := lan_port(ctx)):
        return None
    router, host, iface = picked
    return _port_down(tag, router, iface.name, Impact(isolated={host}), [])


SHORT_MTU = 1400
STANDARD_MTU = 1500

Shown = Callable[[FaultContext, str, str, str], list[HiddenTest]]
"""The tests that show a fault on a transit link end: (context, router, peer, tag)."""
Outcome = Callable[[FaultContext, str, str, str], tuple[Impact, list[HiddenTest]]]
"""What a fault on a transit link end does to forwarding, and the tests that show it repaired:
(context, router, peer, tag)."""


def shorter_mtu(present: Shown, outcome: Outcome = link_down) -> Injector:
    """An injector for one end of a transit link given a shorter MTU with `ip link`, as an
    operator might on a port meant for a tunnel; the fix puts the standard MTU
    back. ``present`` gives the tests that show the fault, ``outcome`` its impact and the
    state that shows the link back (by default, the link is down)."""

    def injector(ctx: FaultContext, tag: str) -> FaultPlan | None:
        picked = transit_end(ctx)
        if picked is None:
            return None
        a, b, iface = picked
        impact, healthy = outcome(ctx, a, b, tag)
        return FaultPlan(
            Fault(
                type=tag,
                device=a,
                params={"interface": iface.name, "mtu": SHORT_MTU},
                inject=[execute(a, f"ip link set dev {iface.name} mtu {SHORT_MTU}")],
                fix=[execute(a, f"ip link set dev {iface.name} mtu {STANDARD_MTU}")],
                present=present(ctx, a, b, tag),
            ),
            impact,
            healthy,
        )

    return injector


# OSPF stops at the database exchange: the shorter end refuses its peer's larger DBD packets.
mtu_mismatch = fault("iface.mtu_mismatch", routing={"ospf"})(
    shorter_mtu(lambda ctx, a, b, tag: [adjacency_test(ctx.network, a, b, False, tag)])
)
