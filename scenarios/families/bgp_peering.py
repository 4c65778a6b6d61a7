from __future__ import annotations

from netdojo.scenarios.families.shapes import REDUNDANT
from netdojo.scenarios.faults import bgp
from netdojo.scenarios.registry import Family, register

register(
    Family(
        name="bgp-peering",
        kind="reactive",
        routing="bgp",
        shapes=REDUNDANT,
        summary="Each router is its own AS, peering over eBGP; sessions or announcements broke.",
        faults=(
            bgp.missing_neighbor,
            bgp.md5_one_side,
            bgp.md5_mismatch,
            bgp.max_prefix,
            bgp.missing_network,
        ),
    )
)
