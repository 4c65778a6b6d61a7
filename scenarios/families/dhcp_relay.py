from __future__ import annotations

from netdojo.scenarios.families.shapes import SURE_PATHS
from netdojo.scenarios.faults import relay
from netdojo.scenarios.model import SERVICE_TOOLS
from netdojo.scenarios.registry import Family, register
from netdojo.scenarios.relay import furnish_relays

register(
    Family(
        name="dhcp-relay",
        kind="reactive",
        routing="ospf",
        shapes=SURE_PATHS,
        summary="Hosts take their address, gateway and resolver from one DHCP server in the "
        "lab through a relay on their gateway (dnsmasq); a relay or the server's scopes went "
        "wrong.",
        faults=(relay.relay_wrong_server, relay.relay_missing, relay.relay_scope_missing),
        repair="services",
        furnish=furnish_relays,
        tools=SERVICE_TOOLS,
        packages=("dnsmasq-base", "isc-dhcp-client", "bind9-dnsutils"),
    )
)
