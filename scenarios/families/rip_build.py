from __future__ import annotations

from netdojo.scenarios.families.shapes import RIP
from netdojo.scenarios.registry import Family, register
from netdojo.scenarios.rip_plan import plan_rip_build

register(
    Family(
        name="rip-build",
        kind="constructive",
        routing="rip",
        shapes=RIP,
        plan=plan_rip_build,
        summary="Routers are addressed but unrouted; configure RIPv2.",
        task="build.rip",
    )
)
