from __future__ import annotations

from netdojo.scenarios.families.shapes import REDUNDANT
from netdojo.scenarios.faults import ipv6
from netdojo.scenarios.ipv6_plan import plan_ipv6
from netdojo.scenarios.registry import Family, register

register(
    Family(
        name="ipv6-routing",
        kind="reactive",
        routing="ospf6",
        shapes=REDUNDANT,
        plan=plan_ipv6,
        summary="An IPv6-only network routed by OSPFv3 lost adjacencies or prefixes; repair it.",
        faults=(
            ipv6.area_mismatch,
            ipv6.hello_mismatch,
            ipv6.dead_mismatch,
            ipv6.passive_transit,
            ipv6.lan_unannounced,
            ipv6.lan_wrong_prefix,
            ipv6.static_blackhole,
        ),
    )
)
