"""eBGP over IPv6, read from the routers' configurations (the topology's IPv6 addresses are
left to them): a session per transit link with the peer's own AS, every neighbour activated
in IPv6 unicast, each router announcing its LANs' /64s there and nothing else, no filter that
denies a prefix and no policy that rewrites next hops; and LAN ports that advertise their
prefix to their hosts without suppressing the advertisements.
"""

from __future__ import annotations

import ipaddress
import re

from netdojo.clients.heuristic.actor import Actor
from netdojo.clients.heuristic.model import RunningConfig, Snapshot

SUPPRESS = "ipv6 nd suppress-ra"
APPLIED = re.compile(r"neighbor (\S+) (prefix-list|route-map) (\S+) (in|out)$")


def port_address(config: RunningConfig, port: str) -> ipaddress.IPv6Interface | None:
    """The global IPv6 address a router's configuration gives ``port``."""
    for line in config.interfaces.get(port, []):
        if match := re.fullmatch(r"ipv6 address (\S+)", line):
            address = ipaddress.IPv6Interface(match.group(1))
            if not address.is_link_local:
                return address
    return None


def expected_peers(snap: Snapshot, router: str) -> dict[str, int]:
    """Peer address -> AS of each IPv6 BGP router across a transit link."""
    peers = {}
    for port in snap.topo.ports[router]:
        if not snap.topo.is_transit(port.link):
            continue
        for peer in snap.topo.peers(router, port.link):
            config = snap.config(peer)
            peer_port = snap.topo.port(peer, port.link)
            if peer_port is None or config.bgp_asn is None:
                continue
            if (address := port_address(config, peer_port.name)) is not None:
                peers[str(address.ip)] = config.bgp_asn
    return peers


def lan_prefixes(snap: Snapshot, router: str) -> set[str]:
    """The /64s of ``router``'s ports that face hosts."""
    prefixes = set()
    for link in snap.topo.lan_links():
        port = snap.topo.port(router, link)
        if port and (address := port_address(snap.config(router), port.name)) is not None:
            prefixes.add(str(address.network))
    return prefixes


async def fix_bgp6(snap: Snapshot, actor: Actor) -> None:
    for router in snap.topo.routers:
        if snap.runs_bgp6(router):
            await _fix_router(snap, actor, router)


async def _fix_router(snap: Snapshot, actor: Actor, router: str) -> None:
    config = snap.config(router)
    family = config.bgp6_af or []
    have = config.bgp_neighbors()
    lines: list[str] = []
    af_lines: list[str] = []
    reasons: list[str] = []
    clears: list[str] = []
    for peer, peer_as in sorted(expected_peers(snap, router).items()):
        if peer not in have:
            lines.append(f" neighbor {peer} remote-as {peer_as}")
            reasons.append(f"neighbour {peer} (AS {peer_as}) was missing")
        elif have[peer] != peer_as:
            lines.append(f" neighbor {peer} remote-as {peer_as}")
            reasons.append(
                f"neighbour {peer} was set to AS {have[peer]}; its router is AS {peer_as}"
            )
            clears.append(peer)
        if f"neighbor {peer} activate" not in family:
            af_lines.append(f"  neighbor {peer} activate")
            reasons.append(f"{peer} was not activated in IPv6 unicast")
    announced = {line.split()[1] for line in family if line.startswith("network ")}
    lans = lan_prefixes(snap, router)
    for prefix in sorted(lans - announced):
        af_lines.append(f"  network {prefix}")
        reasons.append(f"LAN {prefix} was not announced")
    for prefix in sorted(announced - lans):
        af_lines.append(f"  no network {prefix}")
        reasons.append(f"{prefix} is no LAN of {router}")
    for line in family:
        if (match := APPLIED.match(line)) and _departs(config, match.group(2), match.group(3)):
            af_lines.append(f"  no {line}")
            reasons.append(f"{match.group(2)} {match.group(3)} on {match.group(1)}")
    if af_lines:
        lines += [" address-family ipv6 unicast", *af_lines, " exit-address-family"]
    if lines:
        head = f"router bgp {config.bgp_asn}"
        await actor.configure(router, [head, *lines], "BGP (IPv6): " + "; ".join(reasons))
    for peer in clears:
        await actor.execute(router, f"clear bgp {peer}", "restart the session with its peer AS")


def _departs(config: RunningConfig, kind: str, name: str) -> bool:
    """Does the named IPv6 prefix-list deny something, or the route-map rewrite a next hop?
    The design has neither."""
    if kind == "prefix-list":
        return any(
            line.startswith(f"ipv6 prefix-list {name} ") and " deny " in line
            for line in config.prefix_lists
        )
    sets = config.route_map_sets.get(name, [])
    return any(line.startswith("set ipv6 next-hop") for line in sets) or any(
        line.startswith(f"route-map {name} deny") for line in config.route_maps
    )


async def fix_advertisements(snap: Snapshot, actor: Actor) -> None:
    """A LAN port configured with a prefix to advertise (`ipv6 nd prefix`) must send router
    advertisements: its hosts take their default route from them."""
    for router in snap.topo.routers:
        config = snap.config(router)
        for link in snap.topo.lan_links():
            port = snap.topo.port(router, link)
            lines = config.interfaces.get(port.name, []) if port else []
            if port is None or not any(line.startswith("ipv6 nd prefix ") for line in lines):
                continue
            if f"no {SUPPRESS}" not in lines:
                await actor.configure(
                    router,
                    [f"interface {port.name}", f" no {SUPPRESS}", "exit"],
                    f"router advertisements were suppressed on {port.name}",
                )
