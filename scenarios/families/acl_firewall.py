from __future__ import annotations

from netdojo.scenarios.families.shapes import REDUNDANT
from netdojo.scenarios.faults import acl
from netdojo.scenarios.firewall import plan_with_server
from netdojo.scenarios.registry import Family, register

register(
    Family(
        name="acl-firewall",
        kind="reactive",
        routing="ospf",
        shapes=REDUNDANT,
        summary="A server sits behind an iptables policy on a router in front of it; rules on that "
        "firewall or on a hop of the flows broke the policy.",
        faults=(
            acl.needed_flow_dropped,
            acl.forbidden_flow_allowed,
            acl.rule_order,
            acl.nft_drop,
            acl.rule_wrong_hop,
            acl.stray_accept,
        ),
        firewall=True,
        plan=plan_with_server,
    )
)
