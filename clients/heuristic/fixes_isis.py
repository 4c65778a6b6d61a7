"""IS-IS: compare each router's process with what most routers run, and the two ends of every
transit link.

The network's convention (the routers' level and area, no overload bit, no raised metric) is
what most routers or transit ports carry; a router or port that departs from it is brought
back. On a link whose hello passwords differ nothing says which is right, so the later-named
end takes the other's.
"""

from __future__ import annotations

import re
from collections import Counter

from netdojo.clients.heuristic.actor import Actor
from netdojo.clients.heuristic.model import Snapshot

PASSWORD = "isis password "
NET = re.compile(r"net (\S+)\.([0-9a-f]{4}\.[0-9a-f]{4}\.[0-9a-f]{4})\.00$")


def _majority(values: list[str | None]) -> str | None:
    counts = Counter(values)
    return max(sorted(counts, key=str), key=lambda v: counts[v]) if counts else None


def _level(lines: list[str]) -> str:
    return next((line.split()[1] for line in lines if line.startswith("is-type ")), "level-1-2")


def _nets(lines: list[str]) -> list[tuple[str, str, str]]:
    """(area, system id, line) of each NET."""
    return [(m.group(1), m.group(2), line) for line in lines if (m := NET.match(line))]


async def fix_isis(snap: Snapshot, actor: Actor) -> None:
    routers = [r for r in snap.topo.routers if snap.runs_isis(r)]
    if not routers:
        return
    levels = {r: _level(snap.config(r).isis) for r in routers}
    areas = {r: [area for area, _, _ in _nets(snap.config(r).isis)] for r in routers}
    level = _majority(list(levels.values()))
    area = _majority([a for found in areas.values() for a in found])
    for router in routers:
        config = snap.config(router)
        lines, reasons = [], []
        if level and levels[router] != level:
            lines.append(f" is-type {level}")
            reasons.append(f"is-type {levels[router]} where the others run {level}")
        for own, system, line in _nets(config.isis):
            if area and own != area:
                lines += [f" no {line}", f" net {area}.{system}.00"]
                reasons.append(f"area {own} where the others are in {area}")
        if "set-overload-bit" in config.isis:
            lines.append(" no set-overload-bit")
            reasons.append("the overload bit kept transit off the router")
        if lines:
            head = f"router isis {config.isis_process}"
            await actor.configure(router, [head, *lines], "IS-IS: " + ", ".join(reasons))
    await _fix_ports(snap, actor, routers)


async def _fix_ports(snap: Snapshot, actor: Actor, routers: list[str]) -> None:
    ends = [
        (router, port.name, peer)
        for link, members in sorted(snap.topo.links.items())
        if snap.topo.is_transit(link)
        for router in members
        if router in routers and (port := snap.topo.port(router, link)) is not None
        for peer in snap.topo.peers(router, link)
    ]
    metrics = [snap.config(r).iface_value(port, "isis metric") for r, port, _ in ends]
    usual = _majority(metrics)
    ports = {(r, peer): port for r, port, peer in ends}
    for router, port, peer in ends:
        config = snap.config(router)
        lines, reasons = [], []
        if "isis passive" in config.interfaces.get(port, []):
            lines.append(" no isis passive")
            reasons.append("transit port was passive")
        metric = config.iface_value(port, "isis metric")
        if metric is not None and usual is None:
            lines.append(" no isis metric")
            reasons.append(f"metric {metric} steered traffic off this link")
        own = config.iface_value(port, PASSWORD)
        other_port = ports.get((peer, router))
        other = snap.config(peer).iface_value(other_port, PASSWORD) if other_port else None
        if other and own != other and router > peer:
            lines.append(f" {PASSWORD}{other}")
            reasons.append("hello password differs from the neighbour's")
        if lines:
            await actor.configure(
                router,
                [f"interface {port}", *lines, "exit"],
                f"IS-IS on {port}: " + ", ".join(reasons),
            )
