from __future__ import annotations

from netdojo.scenarios.families.shapes import REDUNDANT
from netdojo.scenarios.registry import Family, register

register(
    Family(
        name="ospf-build",
        kind="constructive",
        routing="ospf",
        shapes=REDUNDANT,
        summary="Routers are addressed but unrouted; configure single-area OSPF.",
        task="build.ospf_area0",
    )
)
