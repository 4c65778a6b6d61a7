from __future__ import annotations

from netdojo.scenarios.families.shapes import SURE_PATHS
from netdojo.scenarios.faults import pmtu
from netdojo.scenarios.registry import Family, register

register(
    Family(
        name="path-mtu",
        kind="reactive",
        routing="ospf",
        shapes=SURE_PATHS,
        summary="A transit link runs with a smaller MTU and the ICMP messages path-MTU "
        "discovery needs are filtered: pings pass, large TCP transfers hang.",
        faults=(pmtu.icmp_filtered_near, pmtu.icmp_filtered_nft, pmtu.icmp_filtered_edge),
        repair="datapath-ospf",
        packages=("iperf3", "nftables"),
    )
)
