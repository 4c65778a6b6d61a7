"""The `topology` tool: the devices, roles, interfaces and links an agent may see, and a Mermaid
diagram of them."""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from netdojo.scenarios.model import DeviceFacts, PublicHalf
from netdojo.tools.spec import ToolArguments, ToolSpec


class TopologyArguments(ToolArguments):
    pass  # the topology is the whole network: no arguments


class LinkView(BaseModel):
    name: str
    devices: list[str]


class TopologyView(BaseModel):
    devices: list[DeviceFacts]
    links: list[LinkView]
    mermaid: str = Field(description="a Mermaid flowchart of the devices and links")


TOPOLOGY = ToolSpec(
    name="topology",
    title="Network topology",
    arguments=TopologyArguments,
    result=TopologyView,
    description="The network: devices with roles and interfaces (addresses where given), links, "
    "and a Mermaid diagram.",
    run=lambda tools, a: tools.topology(),
    read_only=True,
    destructive=False,
)


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
