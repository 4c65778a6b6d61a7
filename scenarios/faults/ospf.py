"""Single-area OSPF faults: adjacencies that break on one end of a link (areas, timers,
passive ports, network statements, network type, MD5 authentication), and routing that loses a
LAN or is steered onto a longer path."""

from __future__ import annotations

from netdojo.scenarios.faults.base import (
    FaultContext,
    FaultPlan,
    adjacency_test,
    any_end,
    authenticated_end,
    end_fault,
    route_test,
    router_id,
    steering_fault,
    transit_end,
    unannounced_lan,
)
from netdojo.scenarios.forwarding import Impact
from netdojo.scenarios.hidden_tests import HiddenTest
from netdojo.scenarios.model import Fault, configure
from netdojo.scenarios.network import Network
from netdojo.scenarios.registry import fault


def _lost(network: Network, a: str, b: str, tag: str) -> list[HiddenTest]:
    return [adjacency_test(network, a, b, False, tag)]


_md5_end = authenticated_end(lambda network: network.ospf_md5)


area_mismatch = fault("ospf.area_mismatch", routing={"ospf"})(
    end_fault(
        any_end,
        "router ospf",
        ["no network {subnet} area 0", "network {subnet} area 0.0.0.1"],
        ["no network {subnet} area 0.0.0.1", "network {subnet} area 0"],
        _lost,
    )
)
hello_mismatch = fault("ospf.hello_mismatch", routing={"ospf"})(
    end_fault(
        any_end,
        "interface {iface}",
        ["ip ospf hello-interval 3"],
        ["ip ospf hello-interval 1"],
        _lost,
    )
)
dead_mismatch = fault("ospf.dead_mismatch", routing={"ospf"})(
    end_fault(
        any_end,
        "interface {iface}",
        ["ip ospf dead-interval 9"],
        ["ip ospf dead-interval 4"],
        _lost,
    )
)
passive_transit = fault("ospf.passive_transit", routing={"ospf"})(
    end_fault(
        any_end,
        "router ospf",
        ["passive-interface {iface}"],
        ["no passive-interface {iface}"],
        _lost,
    )
)
missing_network_transit = fault("ospf.missing_network_transit", routing={"ospf"})(
    end_fault(
        any_end, "router ospf", ["no network {subnet} area 0"], ["network {subnet} area 0"], _lost
    )
)


@fault("ospf.network_type_mismatch", routing={"ospf"})
def network_type_mismatch(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """One end falls back to broadcast: the adjacency stays Full but carries no routes."""
    if not (picked := transit_end(ctx)):
        return None
    a, b, iface = picked
    loopback = f"{router_id(ctx.network, b)}/32"
    via = ctx.network.node(b).iface_to(a).address.split("/")[0]
    head = f"interface {iface.name}"
    return FaultPlan(
        Fault(
            type=tag,
            device=a,
            params={"interface": iface.name, "peer": b},
            inject=[configure(a, head, "no ip ospf network point-to-point")],
            fix=[configure(a, head, "ip ospf network point-to-point")],
            present=[route_test(tag, a, loopback, False, via=via)],
        ),
        Impact(down_links={frozenset((a, b))}, idle_links={frozenset((a, b))}),
        [route_test(tag, a, loopback, True, via=via)],
    )


auth_key_mismatch = fault("ospf.auth_key_mismatch", routing={"ospf"})(
    end_fault(
        _md5_end,
        "interface {iface}",
        ["no ip ospf message-digest-key 1", "ip ospf message-digest-key 1 md5 {key}x"],
        ["no ip ospf message-digest-key 1", "ip ospf message-digest-key 1 md5 {key}"],
        _lost,
    )
)
auth_one_side = fault("ospf.auth_one_side", routing={"ospf"})(
    end_fault(
        _md5_end,
        "interface {iface}",
        ["no ip ospf authentication message-digest"],
        ["ip ospf authentication message-digest"],
        _lost,
    )
)


# A LAN's network statement removed (sometimes retyped for a prefix nobody has).
missing_network_stub = fault("ospf.missing_network_stub", routing={"ospf"})(
    unannounced_lan("router ospf", "network {prefix} area 0", "OSPF")
)


# A raised OSPF cost pushes traffic between two sites onto a longer path.
cost_steering = fault("ospf.cost_steering", routing={"ospf"})(
    steering_fault("cost", 500, "ip ospf cost 500", "no ip ospf cost")
)
