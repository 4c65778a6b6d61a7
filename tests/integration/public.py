"""The public half of a sample lab, for tests that serve tools on a lab without a scenario."""

from __future__ import annotations

from netdojo.labs.spec import LabSpec
from netdojo.scenarios.model import DeviceFacts, InterfaceFacts, PublicHalf


def public_half(spec: LabSpec, brief: str = "a sample lab") -> PublicHalf:
    """Devices, roles, interfaces and links of ``spec`` (no addresses: the tools look them up)."""
    devices = [
        DeviceFacts(
            name=d.name,
            role=d.role,
            interfaces=[InterfaceFacts(name=f"eth{i}", link=n) for i, n in spec.interfaces(d.name)],
        )
        for d in spec.devices
    ]
    links = [(link.name, [device for device, _ in link.endpoints]) for link in spec.links]
    return PublicHalf(brief=brief, devices=devices, links=links)
