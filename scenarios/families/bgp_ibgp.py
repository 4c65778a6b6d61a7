from __future__ import annotations

from netdojo.scenarios.families.shapes import TREES
from netdojo.scenarios.faults import ibgp, interfaces, static
from netdojo.scenarios.ibgp import plan_ibgp
from netdojo.scenarios.registry import Family, register

register(
    Family(
        name="bgp-ibgp",
        kind="reactive",
        routing="ibgp",
        shapes=TREES,
        summary="A core AS runs iBGP between loopbacks over an OSPF underlay, with external ASes "
        "on border routers; the mesh, next hops or the underlay broke.",
        faults=(
            ibgp.next_hop_self_missing,
            ibgp.update_source_missing,
            ibgp.missing_loopback,
            interfaces.admin_down,
            static.blackhole,
        ),
        plan=plan_ibgp,
    )
)
