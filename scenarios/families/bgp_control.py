from __future__ import annotations

from netdojo.scenarios.families.shapes import REDUNDANT
from netdojo.scenarios.faults import bgp, bgp_control
from netdojo.scenarios.registry import Family, register

register(
    Family(
        name="bgp-control",
        kind="reactive",
        routing="bgp",
        shapes=REDUNDANT,
        summary="One AS per router over eBGP; a peer AS, a policy requirement or a path preference "
        "went wrong.",
        faults=(
            bgp_control.wrong_remote_as,
            bgp_control.requires_policy,
            bgp_control.local_pref_steering,
            bgp_control.as_path_prepend_steering,
            bgp.missing_neighbor,
        ),
    )
)
