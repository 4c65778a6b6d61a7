from __future__ import annotations

from netdojo.scenarios.families.shapes import CYCLES
from netdojo.scenarios.registry import Family, register

register(
    Family(
        name="bgp-transit-build",
        kind="constructive",
        routing="bgp",
        shapes=CYCLES,
        summary=(
            "Routers are addressed but unrouted; build eBGP with one AS per router, and keep "
            "one AS from giving transit."
        ),
        task="build.ebgp_no_transit",
        intent="no_transit",
    )
)
