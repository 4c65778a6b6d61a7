from __future__ import annotations

from netdojo.scenarios.families.shapes import REDUNDANT
from netdojo.scenarios.firewall import plan_with_server
from netdojo.scenarios.registry import Family, register

register(
    Family(
        name="acl-build",
        kind="constructive",
        routing="ospf",
        shapes=REDUNDANT,
        summary="Routing works; write the access policy for a server as router firewall rules.",
        task="build.acl_policy",
        firewall=True,
        plan=plan_with_server,
    )
)
