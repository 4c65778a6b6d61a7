from __future__ import annotations

from netdojo.scenarios.capacity.task import planning_instance
from netdojo.scenarios.model import PLANNING_TOOLS
from netdojo.scenarios.registry import Family, register

register(
    Family(
        name="capacity-planning",
        kind="constructive",
        summary="Answer and carry out capacity-planning queries on a data-centre model, in code.",
        task="capacity.plan",
        build=planning_instance,
        tools=PLANNING_TOOLS,
    )
)
