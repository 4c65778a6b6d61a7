from __future__ import annotations

from netdojo.scenarios.families.shapes import REDUNDANT
from netdojo.scenarios.faults import interfaces, ospf
from netdojo.scenarios.registry import Family, register

register(
    Family(
        name="ospf-adjacency",
        kind="reactive",
        routing="ospf",
        shapes=REDUNDANT,
        summary="A single-area OSPF network lost adjacencies; restore them.",
        faults=(
            ospf.area_mismatch,
            ospf.hello_mismatch,
            ospf.dead_mismatch,
            ospf.passive_transit,
            ospf.missing_network_transit,
            ospf.network_type_mismatch,
            ospf.auth_key_mismatch,
            ospf.auth_one_side,
            interfaces.mtu_mismatch,
            interfaces.admin_down,
            interfaces.wrong_address,
        ),
    )
)
