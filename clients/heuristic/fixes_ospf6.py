"""OSPFv3 on an IPv6 network: a router that stopped forwarding IPv6, transit ports that
depart from what the others run (passive, another hello or dead interval, another area), and
LAN ports left out of OSPFv3.

The convention is what most transit ports carry; on a link whose two ends differ, the end
that departs from it is brought back. LAN ports are passive by design: that is left as it is,
but one outside OSPFv3 goes back into the transit ports' area.
"""

from __future__ import annotations

from collections import Counter

from netdojo.clients.heuristic.actor import Actor
from netdojo.clients.heuristic.model import Snapshot

HELLO = "ipv6 ospf6 hello-interval"
DEAD = "ipv6 ospf6 dead-interval"
AREA = "ipv6 ospf6 area"
PASSIVE = "ipv6 ospf6 passive"


def _majority(values: list[str | None]) -> str | None:
    counts = Counter(v for v in values if v is not None)
    return max(sorted(counts), key=lambda v: counts[v]) if counts else None


async def fix_ospf6(snap: Snapshot, actor: Actor) -> None:
    routers = [r for r in snap.topo.routers if snap.runs_ospf6(r)]
    for router in routers:
        if snap.config(router).ipv6_forwarding_off:
            await actor.configure(router, ["ipv6 forwarding"], "IPv6 forwarding was off")
    ends = [
        (router, port.name)
        for link, members in sorted(snap.topo.links.items())
        if snap.topo.is_transit(link)
        for router in members
        if router in routers and (port := snap.topo.port(router, link)) is not None
    ]
    hello = _majority([snap.config(r).iface_value(p, HELLO) for r, p in ends])
    dead = _majority([snap.config(r).iface_value(p, DEAD) for r, p in ends])
    area = _majority([snap.config(r).iface_value(p, AREA) for r, p in ends])
    for router, port in ends:
        config = snap.config(router)
        lines, reasons = [], []
        if PASSIVE in config.interfaces.get(port, []):
            lines.append(f" no {PASSIVE}")
            reasons.append("transit port was passive")
        own_hello = config.iface_value(port, HELLO)
        if hello and own_hello != hello:
            lines.append(f" {HELLO} {hello}")
            reasons.append(f"hello interval {own_hello} where the others use {hello}")
        own_dead = config.iface_value(port, DEAD)
        if dead and own_dead != dead:
            lines.append(f" {DEAD} {dead}")
            reasons.append(f"dead interval {own_dead} where the others use {dead}")
        own_area = config.iface_value(port, AREA)
        if area and own_area and own_area != area:
            lines += [f" no {AREA} {own_area}", f" {AREA} {area}"]
            reasons.append(f"area {own_area} where the others are in {area}")
        if lines:
            await actor.configure(
                router,
                [f"interface {port}", *lines, "exit"],
                f"OSPFv3 on {port}: " + ", ".join(reasons),
            )
    if area:
        await _fix_lans(snap, actor, routers, area)


async def _fix_lans(snap: Snapshot, actor: Actor, routers: list[str], area: str) -> None:
    """A LAN port left out of OSPFv3 is put back in the area the transit ports run: its
    prefix is announced again."""
    for link in snap.topo.lan_links():
        for router in snap.topo.links.get(link, []):
            port = snap.topo.port(router, link) if router in routers else None
            if port is None:
                continue
            if snap.config(router).iface_value(port.name, AREA) is None:
                lines = [f"interface {port.name}", f" {AREA} {area}", "exit"]
                await actor.configure(router, lines, f"LAN port {port.name} was not in OSPFv3")
