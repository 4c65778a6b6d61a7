"""eBGP: a session per transit link, no passwords or limits, LANs announced, no deny filters."""

from __future__ import annotations

import re

from netdojo.clients.heuristic.actor import Actor
from netdojo.clients.heuristic.model import RunningConfig, Snapshot


async def fix_bgp(snap: Snapshot, actor: Actor) -> None:
    for router in snap.topo.routers:
        if not snap.runs_bgp(router) or snap.runs_bgp6(router):  # IPv6: `fixes_bgp6`
            continue
        config = snap.config(router)
        await _fix_neighbors(snap, actor, router, config)
        await _fix_networks(snap, actor, router, config)


def expected_peers(snap: Snapshot, router: str) -> dict[str, int]:
    """Peer address -> AS of each BGP router across a transit link."""
    peers = {}
    for port in snap.topo.ports[router]:
        if not snap.topo.is_transit(port.link):
            continue
        for peer in snap.topo.peers(router, port.link):
            peer_port = snap.topo.port(peer, port.link)
            asn = snap.config(peer).bgp_asn
            if peer_port and peer_port.address and asn is not None:
                peers[str(peer_port.address.ip)] = asn
    return peers


async def _fix_neighbors(snap: Snapshot, actor: Actor, router: str, config: RunningConfig) -> None:
    asn = config.bgp_asn
    have = config.bgp_neighbors()
    connect_timer = any(
        "timers connect" in line for r in snap.topo.routers for line in snap.config(r).bgp
    )
    lines: list[str] = []
    af_lines: list[str] = []
    reasons: list[str] = []
    clears: list[str] = []
    for peer, peer_as in sorted(expected_peers(snap, router).items()):
        if peer not in have:
            lines.append(f" neighbor {peer} remote-as {peer_as}")
            if connect_timer:
                lines.append(f" neighbor {peer} timers connect 1")
            if any(line == "no bgp default ipv4-unicast" for line in config.bgp):
                af_lines.append(f"  neighbor {peer} activate")
            reasons.append(f"neighbour {peer} (AS {peer_as}) was missing")
    for line in config.bgp:
        if match := re.match(r"neighbor (\S+) password ", line):
            lines.append(f" no neighbor {match.group(1)} password")
            reasons.append(f"MD5 password on the session with {match.group(1)}")
    for line in config.bgp_af:
        if match := re.match(r"neighbor (\S+) maximum-prefix ", line):
            af_lines.append(f"  no {line}")
            clears.append(match.group(1))
            reasons.append(f"maximum-prefix shut the session with {match.group(1)}")
        elif (
            match := re.match(r"neighbor (\S+) (prefix-list|route-map) (\S+) (in|out)", line)
        ) and _denies(config, match.group(2), match.group(3)):
            af_lines.append(f"  no {line}")
            reasons.append(f"{match.group(2)} {match.group(3)} filtered {match.group(1)}")
    if af_lines:
        lines += [" address-family ipv4 unicast", *af_lines, " exit-address-family"]
    if lines:
        await actor.configure(router, [f"router bgp {asn}", *lines], "BGP: " + "; ".join(reasons))
    for peer in clears:
        await actor.execute(router, f"clear ip bgp {peer}", "restart the session after the limit")


def _denies(config: RunningConfig, kind: str, name: str) -> bool:
    """Does the named prefix-list or route-map deny anything (the design has no filtering)?"""
    if kind == "prefix-list":
        return any(
            line.startswith(f"ip prefix-list {name} ") and " deny " in line
            for line in config.prefix_lists
        )
    return any(line.startswith(f"route-map {name} deny") for line in config.route_maps)


async def _fix_networks(snap: Snapshot, actor: Actor, router: str, config: RunningConfig) -> None:
    """Announce each host LAN the router serves."""
    announced = config.bgp_networks()
    missing = []
    for link in snap.topo.lan_links():
        port = snap.topo.gateway_port(link)
        if port and port.device == router and port.address:
            missing += [port.address.network] if port.address.network not in announced else []
    if missing:
        lines = [f"router bgp {config.bgp_asn}", " address-family ipv4 unicast"]
        lines += [f"  network {net}" for net in missing]
        await actor.configure(
            router, lines, f"BGP: LAN {', '.join(map(str, missing))} not announced"
        )
