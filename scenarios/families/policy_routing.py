from __future__ import annotations

from netdojo.scenarios.families.shapes import REDUNDANT
from netdojo.scenarios.faults import policy_routing
from netdojo.scenarios.registry import Family, register

register(
    Family(
        name="policy-routing",
        kind="reactive",
        routing="ospf",
        shapes=REDUNDANT,
        summary="Routers run OSPF correctly, but policy-routing rules (`ip rule`) send some "
        "traffic to tables whose routes are wrong or missing.",
        faults=(
            policy_routing.wrong_table_default,
            policy_routing.unroutable_table,
            policy_routing.source_unroutable,
            policy_routing.shadowed_rule,
        ),
        repair="datapath-ospf",
        packages=("iproute2",),
    )
)
