from __future__ import annotations

from netdojo.scenarios.families.shapes import LOOP_FREE
from netdojo.scenarios.faults import bgp
from netdojo.scenarios.registry import Family, register

register(
    Family(
        name="bgp-policy",
        kind="reactive",
        routing="bgp",
        shapes=LOOP_FREE,
        summary="Export policy on eBGP sessions drops prefixes that other sites need.",
        faults=(
            bgp.prefix_list_out,
            bgp.prefix_list_in,
            bgp.route_map_out_deny,
            bgp.route_map_in_deny,
            bgp.missing_network,
        ),
    )
)
