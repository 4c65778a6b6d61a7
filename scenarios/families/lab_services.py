from __future__ import annotations

from netdojo.scenarios.families.shapes import SURE_PATHS
from netdojo.scenarios.faults import services
from netdojo.scenarios.model import SERVICE_TOOLS
from netdojo.scenarios.registry import Family, register
from netdojo.scenarios.services import furnish_services

register(
    Family(
        name="lab-services",
        kind="reactive",
        routing="ospf",
        shapes=SURE_PATHS,
        summary="Hosts take their address, gateway and resolver from DHCP servers in the lab, "
        "and names from the lab's DNS server (dnsmasq); a server's scope, options or records "
        "went wrong.",
        faults=(
            services.scope_outside,
            services.scope_exhausted,
            services.config_broken,
            services.wrong_router,
            services.wrong_resolver,
            services.wrong_record,
            services.zone_broken,
        ),
        repair="services",
        furnish=furnish_services,
        tools=SERVICE_TOOLS,
        packages=("dnsmasq-base", "isc-dhcp-client", "bind9-dnsutils"),
    )
)
