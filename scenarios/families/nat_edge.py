from __future__ import annotations

from netdojo.scenarios.faults.nat import FAULTS
from netdojo.scenarios.nat_task import repair_instance
from netdojo.scenarios.registry import Family, register

register(
    Family(
        name="nat-edge",
        kind="reactive",
        summary="An edge router translates between private inside networks and an outside with "
        "no routes to them (source translation out, a port forward in); the translation or the "
        "way back through it broke.",
        build=repair_instance,
        kinds=tuple(FAULTS),
        packages=("iptables", "nftables", "python3"),
    )
)
