from __future__ import annotations

from netdojo.scenarios.families.shapes import REDUNDANT
from netdojo.scenarios.faults import ipv6_bgp
from netdojo.scenarios.ipv6_plan import plan_ipv6_slaac
from netdojo.scenarios.registry import Family, register

register(
    Family(
        name="ipv6-bgp",
        kind="reactive",
        routing="bgp6",
        shapes=REDUNDANT,
        plan=plan_ipv6_slaac,
        summary="An IPv6-only network where each router is its own AS, peering over eBGP on "
        "IPv6, and hosts configure themselves from router advertisements; sessions, the IPv6 "
        "unicast family, its announcements or next hops, or the advertisements broke.",
        faults=(
            ipv6_bgp.af_not_activated,
            ipv6_bgp.lan_unannounced,
            ipv6_bgp.remote_as_wrong,
            ipv6_bgp.nexthop_unreachable,
            ipv6_bgp.linklocal_nexthop,
            ipv6_bgp.prefix_filtered,
            ipv6_bgp.ra_suppressed,
        ),
    )
)
