from __future__ import annotations

from netdojo.scenarios.families.shapes import REDUNDANT
from netdojo.scenarios.faults import interfaces, ospf, static
from netdojo.scenarios.registry import Family, register

register(
    Family(
        name="ospf-routing",
        kind="reactive",
        routing="ospf",
        shapes=REDUNDANT,
        summary="OSPF is up but some prefixes are missing or overridden; repair the routing.",
        faults=(
            ospf.missing_network_stub,
            ospf.cost_steering,
            static.blackhole,
            static.more_specific_hijack,
            static.route_override,
            interfaces.lan_wrong_mask,
        ),
    )
)
