from __future__ import annotations

from netdojo.scenarios.families.shapes import DETOURS
from netdojo.scenarios.registry import Family, register

register(
    Family(
        name="bgp-exit-build",
        kind="constructive",
        routing="bgp",
        shapes=DETOURS,
        summary="Routers are addressed but unrouted; build eBGP with one AS per router, and make "
        "one AS leave for one site through a neighbour on a longer path.",
        task="build.ebgp_preferred_exit",
        intent="preferred_exit",
    )
)
