from __future__ import annotations

from netdojo.scenarios.families.shapes import REDUNDANT
from netdojo.scenarios.faults import interfaces, isis
from netdojo.scenarios.registry import Family, register

register(
    Family(
        name="isis-adjacency",
        kind="reactive",
        routing="isis",
        shapes=REDUNDANT,
        summary="A level-1 IS-IS network lost adjacencies or steers transit astray; repair it.",
        faults=(
            isis.level_mismatch,
            isis.area_mismatch,
            isis.auth_mismatch,
            isis.passive_transit,
            isis.metric_steering,
            isis.overload_bit,
            interfaces.admin_down,
            interfaces.wrong_address,
            isis.hello_padding_mtu,
        ),
    )
)
