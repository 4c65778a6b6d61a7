from __future__ import annotations

from netdojo.scenarios.families.shapes import LOOP_FREE
from netdojo.scenarios.faults import interfaces, static
from netdojo.scenarios.registry import Family, register

register(
    Family(
        name="static-routing",
        kind="reactive",
        routing="static",
        shapes=LOOP_FREE,
        summary=(
            "Routers forward with static routes; repair routes and links that broke forwarding."
        ),
        faults=(
            static.missing_route,
            static.wrong_next_hop,
            static.wrong_prefix,
            static.blackhole,
            static.more_specific_hijack,
            interfaces.admin_down,
            interfaces.wrong_address,
            interfaces.lan_port_down,
        ),
    )
)
