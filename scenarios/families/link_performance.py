from __future__ import annotations

from netdojo.scenarios.families.shapes import SURE_PATHS
from netdojo.scenarios.faults import link_perf
from netdojo.scenarios.registry import Family, register

register(
    Family(
        name="link-performance",
        kind="reactive",
        routing="static",
        shapes=SURE_PATHS,
        summary="Forwarding works, but a rate limit or a random drop left on a router port "
        "keeps throughput or loss outside the tolerance the brief states.",
        faults=(
            link_perf.rate_limit,
            link_perf.shaper_class,
            link_perf.lan_rate_limit,
            link_perf.random_drop,
        ),
        repair="datapath-static",
        packages=("iperf3", "iproute2", "iptables"),
    )
)
