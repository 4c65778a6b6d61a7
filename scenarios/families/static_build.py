from __future__ import annotations

from netdojo.scenarios.families.shapes import LOOP_FREE
from netdojo.scenarios.registry import Family, register

register(
    Family(
        name="static-build",
        kind="constructive",
        routing="static",
        shapes=LOOP_FREE,
        summary="Routers are addressed but unrouted; add static routes for full reachability.",
        task="build.static_routes",
    )
)
