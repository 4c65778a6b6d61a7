from __future__ import annotations

from netdojo.scenarios.families.shapes import REDUNDANT
from netdojo.scenarios.registry import Family, register

register(
    Family(
        name="isis-build",
        kind="constructive",
        routing="isis",
        shapes=REDUNDANT,
        summary="Routers are addressed but unrouted; configure single-area IS-IS.",
        task="build.isis_single_area",
    )
)
