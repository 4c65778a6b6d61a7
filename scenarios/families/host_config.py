from __future__ import annotations

from netdojo.scenarios.families.shapes import REDUNDANT
from netdojo.scenarios.faults import hosts, interfaces
from netdojo.scenarios.registry import Family, register

register(
    Family(
        name="host-config",
        kind="reactive",
        routing="ospf",
        shapes=REDUNDANT,
        summary="Hosts lost connectivity through their own or their gateway's settings.",
        faults=(
            hosts.wrong_gateway,
            hosts.missing_default,
            hosts.wrong_mask,
            hosts.wrong_address,
            interfaces.lan_wrong_mask,
            interfaces.lan_port_down,
        ),
        repair="hosts",
    )
)
