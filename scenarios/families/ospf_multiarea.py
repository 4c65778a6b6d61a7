from __future__ import annotations

from netdojo.scenarios.families.shapes import TREES
from netdojo.scenarios.faults import interfaces, multiarea, ospf
from netdojo.scenarios.multiarea import plan_multiarea
from netdojo.scenarios.registry import Family, register

register(
    Family(
        name="ospf-multiarea",
        kind="reactive",
        routing="ospf",
        shapes=TREES,
        summary="Multi-area OSPF with externals redistributed from LANs; areas, externals or "
        "router identity broke.",
        faults=(
            multiarea.stub_area_mismatch,
            multiarea.missing_redistribution,
            multiarea.redistribution_filter,
            multiarea.router_id_clash,
            ospf.hello_mismatch,
            interfaces.admin_down,
        ),
        plan=plan_multiarea,
    )
)
