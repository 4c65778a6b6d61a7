"""OSPF: compare the two ends of every transit link and the LANs' network statements.

The network's convention (timers, network type, authentication) is what most transit ends
carry; on a link whose ends disagree, the end that departs from the convention is changed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from netdojo.clients.heuristic.actor import Actor
from netdojo.clients.heuristic.model import Iface, Port, Snapshot

DEFAULTS = {"hello": "10", "dead": "40", "type": "broadcast"}
BACKBONE = "0.0.0.0"


@dataclass
class End:
    router: str
    port: Port
    address: Iface
    hello: str
    dead: str
    type: str
    auth: bool
    key: str | None
    cost: str | None
    area: str | None
    statement: str | None
    passive: str | None  # where the passive setting is: 'router', 'interface' or None


def transit_ends(snap: Snapshot) -> list[tuple[End, End]]:
    pairs = []
    for link, members in sorted(snap.topo.links.items()):
        if not snap.topo.is_transit(link) or len(members) != 2:
            continue
        ends = [_end(snap, member, link) for member in members]
        if ends[0] and ends[1]:
            pairs.append((ends[0], ends[1]))
    return pairs


def _end(snap: Snapshot, router: str, link: str) -> End | None:
    port = snap.topo.port(router, link)
    if port is None or not snap.runs_ospf(router):
        return None
    config = snap.config(router)
    address = port.address or next(iter(snap.devices[router].addresses(port.name)), None)
    if address is None:
        return None
    area = config.ospf_area_of(address)
    key = config.iface_value(port.name, "ip ospf message-digest-key 1 md5")
    return End(
        router=router,
        port=port,
        address=address,
        hello=config.iface_value(port.name, "ip ospf hello-interval") or DEFAULTS["hello"],
        dead=config.iface_value(port.name, "ip ospf dead-interval") or DEFAULTS["dead"],
        type=config.iface_value(port.name, "ip ospf network") or DEFAULTS["type"],
        auth=config.iface_value(port.name, "ip ospf authentication message-digest") is not None,
        key=key,
        cost=config.iface_value(port.name, "ip ospf cost"),
        area=area[0] if area else None,
        statement=area[1] if area else None,
        passive=config.passive(port.name),
    )


def convention(pairs: list[tuple[End, End]], attribute: str) -> str:
    values = Counter(getattr(end, attribute) for pair in pairs for end in pair)
    return max(sorted(values), key=lambda v: values[v]) if values else DEFAULTS[attribute]


async def fix_ospf(snap: Snapshot, actor: Actor) -> None:
    pairs = transit_ends(snap)
    norms = {attr: convention(pairs, attr) for attr in ("hello", "dead", "type")}
    for a, b in pairs:
        for end, other in ((a, b), (b, a)):
            await _fix_end(actor, end, other, norms)
    await fix_stub_networks(snap, actor)


async def _fix_end(actor: Actor, end: End, other: End, norms: dict[str, str]) -> None:
    iface = end.port.name
    iface_lines: list[str] = []
    router_lines: list[str] = []
    reasons: list[str] = []
    if end.hello != other.hello and end.hello != norms["hello"]:
        iface_lines.append(f" ip ospf hello-interval {norms['hello']}")
        reasons.append(f"hello {end.hello} vs {other.hello}")
    if end.dead != other.dead and end.dead != norms["dead"]:
        iface_lines.append(f" ip ospf dead-interval {norms['dead']}")
        reasons.append(f"dead {end.dead} vs {other.dead}")
    if end.type != other.type and end.type != norms["type"]:
        iface_lines.append(f" ip ospf network {norms['type']}")
        reasons.append(f"network type {end.type} vs {other.type}")
    if other.auth and not end.auth:
        iface_lines.append(" ip ospf authentication message-digest")
        reasons.append("MD5 authentication missing on this end")
    if other.auth and other.key and end.key != other.key and end.router > other.router:
        # Keys differ: nothing says which is right, so the later-named end takes the other's.
        if end.key:
            iface_lines.append(" no ip ospf message-digest-key 1")
        iface_lines.append(f" ip ospf message-digest-key 1 md5 {other.key}")
        reasons.append("MD5 key differs from the neighbour's")
    if end.cost is not None and other.cost is None:
        iface_lines.append(" no ip ospf cost")
        reasons.append(f"cost {end.cost} steered traffic off this link")
    if end.passive == "router":
        router_lines.append(f" no passive-interface {iface}")
    elif end.passive == "interface":
        iface_lines.append(" no ip ospf passive")
    if end.passive:
        reasons.append("transit port was passive")
    if end.area is None and other.area is not None:
        router_lines.append(f" network {end.address.network} area {other.area}")
        reasons.append("no network statement for the link")
    elif end.area and other.area and end.area != other.area and end.area != BACKBONE:
        router_lines += [f" no {end.statement}", f" network {end.address.network} area 0"]
        reasons.append(f"area {end.area} vs {other.area}")
    lines = ([f"interface {iface}", *iface_lines, "exit"] if iface_lines else []) + (
        ["router ospf", *router_lines] if router_lines else []
    )
    if lines:
        await actor.configure(end.router, lines, f"OSPF on {iface}: " + ", ".join(reasons))


async def fix_stub_networks(snap: Snapshot, actor: Actor) -> None:
    """A router's host LAN must be in OSPF (as a passive network) for others to reach it."""
    for link in snap.topo.lan_links():
        port = snap.topo.gateway_port(link)
        if port is None or port.address is None or not snap.runs_ospf(port.device):
            continue
        if snap.config(port.device).ospf_area_of(port.address) is None:
            await actor.configure(
                port.device,
                ["router ospf", f" network {port.address.network} area 0"],
                f"LAN {port.address.network} was not in OSPF",
            )
