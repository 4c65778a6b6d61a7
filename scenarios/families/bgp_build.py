from __future__ import annotations

from netdojo.scenarios.families.shapes import REDUNDANT
from netdojo.scenarios.registry import Family, register

register(
    Family(
        name="bgp-build",
        kind="constructive",
        routing="bgp",
        shapes=REDUNDANT,
        summary="Routers are addressed but unrouted; build eBGP with one AS per router.",
        task="build.ebgp_per_router_as",
    )
)
