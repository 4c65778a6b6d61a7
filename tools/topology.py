"""The topology an agent may see: devices, roles, interfaces, links, and a Mermaid diagram."""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from netdojo.scenarios.model import DeviceFacts, PublicHalf


class LinkView(BaseModel):
    name: str
    devices: list[str]


class TopologyView(BaseModel):
    devices: list[DeviceFacts]
    links: list[LinkView]
    mermaid: str = Field(description="a Mermaid flowchart of the devices and links")


def topology_view(public: PublicHalf) -> TopologyView:
    links = [LinkView(name=name, devices=devices) for name, devices in public.links]
    return TopologyView(devices=public.devices, links=links, mermaid=mermaid(public))


def mermaid(public: PublicHalf) -> str:
    """Routers as boxes, hosts as rounded nodes, each link an edge (a LAN of many, a node)."""
    lines = ["flowchart LR"]
    for device in public.devices:
        node = _node(device.name)
        shape = (
            f'{node}["{device.name}"]' if device.role == "router" else f'{node}("{device.name}")'
        )
        lines.append(f"  {shape}")
    ports = {
        (device.name, iface.link): iface.name
        for device in public.devices
        for iface in device.interfaces
    }
    for name, members in public.links:
        if len(members) == 2:
            a, b = members
            label = f"{ports.get((a, name), '?')} - {ports.get((b, name), '?')}"
            lines.append(f'  {_node(a)} ---|"{label}"| {_node(b)}')
        elif len(members) > 2:
            lan = _node(f"lan_{name}")
            lines.append(f"  {lan}{{{{{name}}}}}")
            lines += [f"  {_node(m)} --- {lan}" for m in members]
    return "\n".join(lines)


def _node(name: str) -> str:
    return "n_" + re.sub(r"\W", "_", name)
