from __future__ import annotations

from netdojo.scenarios.families.shapes import RIP
from netdojo.scenarios.faults import interfaces, rip, static
from netdojo.scenarios.registry import Family, register
from netdojo.scenarios.rip_plan import plan_rip

register(
    Family(
        name="rip-routing",
        kind="reactive",
        routing="rip",
        shapes=RIP,
        plan=plan_rip,
        summary="A RIPv2 network lost routes or takes long ways round; repair the routing.",
        faults=(
            rip.version_mismatch,
            rip.passive_transit,
            rip.missing_network_transit,
            rip.missing_network_stub,
            rip.distribute_list,
            rip.offset_steering,
            rip.auth_key_mismatch,
            rip.auth_one_side,
            interfaces.admin_down,
            interfaces.wrong_address,
            static.route_override,
            rip.slow_timers,
        ),
    )
)
