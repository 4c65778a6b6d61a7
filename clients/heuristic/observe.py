"""Read the topology and every device's state through the public `show` tool."""

from __future__ import annotations

import ipaddress
from typing import Any

import anyio

from netdojo.clients.heuristic.model import DeviceState, Link, RunningConfig, Snapshot, Topology
from netdojo.clients.session import ToolCallError, ToolSession

PARALLEL_READS = 4


async def read_topology(session: ToolSession) -> Topology:
    return Topology.parse(await session.call("topology"))


async def show(session: ToolSession, device: str, command: str) -> dict[str, Any]:
    """A `show` result, or an empty one when the device refuses (the agent carries on)."""
    try:
        return await session.call("show", {"device": device, "command": command})
    except ToolCallError:
        return {"text": "", "parsed": None}


async def observe(session: ToolSession, topo: Topology) -> Snapshot:
    devices: dict[str, DeviceState] = {}
    limiter = anyio.CapacityLimiter(PARALLEL_READS)

    async def one(name: str) -> None:
        async with limiter:
            devices[name] = await read_device(session, name, topo.roles[name])

    async with anyio.create_task_group() as group:
        for name in sorted(topo.roles):
            group.start_soon(one, name)
    return Snapshot(topo, devices)


async def read_device(session: ToolSession, name: str, role: str) -> DeviceState:
    state = DeviceState(name, role)
    links = (await show(session, name, "ip -j link show")).get("parsed") or []
    addresses = (await show(session, name, "ip -j address show")).get("parsed") or []
    by_name: dict[str, list[ipaddress.IPv4Interface]] = {}
    for entry in addresses:
        for info in entry.get("addr_info", []):
            if info.get("family") == "inet":
                by_name.setdefault(entry["ifname"], []).append(
                    ipaddress.IPv4Interface(f"{info['local']}/{info['prefixlen']}")
                )
    for entry in links:
        ifname = entry["ifname"].split("@")[0]
        state.links[ifname] = Link(
            up="UP" in entry.get("flags", []),
            mtu=int(entry.get("mtu", 1500)),
            addresses=by_name.get(entry["ifname"], []),
        )
    state.routes = (await show(session, name, "ip -j route show")).get("parsed") or []
    if role == "router":
        text = (await show(session, name, "show running-config")).get("text", "")
        state.config = RunningConfig.parse(text)
    return state
