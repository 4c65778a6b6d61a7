from __future__ import annotations

from netdojo.scenarios.families.shapes import CYCLES
from netdojo.scenarios.registry import Family, register

register(
    Family(
        name="ospf-path-build",
        kind="constructive",
        routing="ospf",
        shapes=CYCLES,
        summary="Routers are addressed but unrouted; build OSPF and pin one flow to a designated "
        "path with link costs.",
        task="build.ospf_path_intent",
        intent="path",
    )
)
