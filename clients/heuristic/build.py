"""Constructive tasks: build static, OSPF, RIP, IS-IS or eBGP routing from the addressing plan."""

from __future__ import annotations

import re

from netdojo.clients.heuristic.actor import Actor
from netdojo.clients.heuristic.fixes_static import design
from netdojo.clients.heuristic.model import Iface, Snapshot


def build_kind(brief: str, snap: Snapshot) -> str | None:
    """Which protocol the brief asks to build, when no router runs any routing yet."""
    routers = snap.topo.routers
    if any(snap.runs_protocol(r) for r in routers):
        return None
    text = brief.lower()
    if re.search(r"\brip(v2)?\b", text):
        return "rip"
    if "bgp" in text and bgp_plan(brief):
        return "bgp"
    asked = re.search(r"\b(configure|enable|set up|build|deploy|run)\b", text)
    if "is-is" in text and (asked or "bring up" in text):  # first: it may forbid OSPF by name
        return "isis"
    if "ospf" in text and asked:
        return "ospf"
    has_statics = any(snap.config(r).statics for r in routers)
    if "static route" in text and not has_statics:
        return "static"
    return None


def bgp_plan(brief: str) -> dict[str, int]:
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"(\S+) is AS (\d+)", brief)}


def _addresses(snap: Snapshot, router: str) -> list[tuple[str, str, Iface]]:
    """(port, link, address) of the router's ports, intended address first, observed next."""
    found = []
    for port in snap.topo.ports[router]:
        address = port.address or next(iter(snap.devices[router].addresses(port.name)), None)
        if address is not None:
            found.append((port.name, port.link, address))
    return found


def _router_id(snap: Snapshot, router: str) -> str | None:
    loopback = snap.loopback(router)
    if loopback:
        return str(loopback.ip)
    addresses = [a.ip for _, _, a in _addresses(snap, router)]
    return str(max(addresses)) if addresses else None


async def build(kind: str, brief: str, snap: Snapshot, actor: Actor) -> None:
    for router in snap.topo.routers:
        if kind == "static":
            lines = [
                f"ip route {p} {hops[0]}" for p, hops in design(snap.topo)[router].items() if hops
            ]
        elif kind == "ospf":
            lines = ospf_lines(snap, router)
        elif kind == "rip":
            lines = rip_lines(snap, router)
        elif kind == "isis":
            lines = isis_lines(snap, router)
        else:
            lines = bgp_lines(snap, router, bgp_plan(brief))
        if lines:
            await actor.configure(router, lines, f"built {kind} routing")


def ospf_lines(snap: Snapshot, router: str) -> list[str]:
    lines: list[str] = []
    networks: list[str] = []
    passive: list[str] = []
    for name, link, address in _addresses(snap, router):
        networks.append(f" network {address.network} area 0")
        if snap.topo.is_transit(link):
            lines += [
                f"interface {name}",
                " ip ospf network point-to-point",
                " ip ospf hello-interval 1",
                " ip ospf dead-interval 4",
                "exit",
            ]
        else:
            passive.append(f" passive-interface {name}")
    loopback = snap.loopback(router)
    if loopback:
        networks.append(f" network {loopback.network} area 0")
    router_id = _router_id(snap, router)
    lines.append("router ospf")
    if router_id:
        lines.append(f" ospf router-id {router_id}")
    lines += [" timers throttle spf 0 50 500", *passive, *networks, "exit"]
    return lines


def rip_lines(snap: Snapshot, router: str) -> list[str]:
    """RIPv2 on every port and the loopback, host ports passive."""
    networks = [f" network {address.network}" for _, _, address in _addresses(snap, router)]
    passive = [
        f" passive-interface {name}"
        for name, link, _ in _addresses(snap, router)
        if not snap.topo.is_transit(link)
    ]
    if loopback := snap.loopback(router):
        networks.append(f" network {loopback.network}")
    return ["router rip", " version 2", " allow-ecmp", *networks, *passive, "exit"]


def isis_lines(snap: Snapshot, router: str) -> list[str]:
    """Level-1 IS-IS in area 49.0001, the system id spelt from the router-id; fast
    point-to-point hellos on transit ports, the other ports and the loopback passive."""
    router_id = _router_id(snap, router)
    if router_id is None:
        return []
    digits = "".join(f"{int(octet):03d}" for octet in router_id.split("."))
    system = ".".join(digits[k : k + 4] for k in range(0, 12, 4))
    lines: list[str] = []
    for name, link, _ in _addresses(snap, router):
        lines += [f"interface {name}", " ip router isis CORE"]
        if snap.topo.is_transit(link):
            lines += [
                " isis network point-to-point",
                " isis hello-interval 1",
                " isis hello-multiplier 4",
            ]
        else:
            lines.append(" isis passive")
        lines.append("exit")
    if snap.loopback(router):
        lines += ["interface lo", " ip router isis CORE", " isis passive", "exit"]
    return [
        *lines,
        "router isis CORE",
        f" net 49.0001.{system}.00",
        " is-type level-1",
        " metric-style wide",
        " lsp-gen-interval 1",
        "exit",
    ]


def bgp_lines(snap: Snapshot, router: str, plan: dict[str, int]) -> list[str]:
    if router not in plan:
        return []
    lines = [f"router bgp {plan[router]}"]
    if router_id := _router_id(snap, router):
        lines.append(f" bgp router-id {router_id}")
    lines += [" no bgp ebgp-requires-policy", " no bgp network import-check", " timers bgp 1 3"]
    networks = []
    for _, link, address in _addresses(snap, router):
        if snap.topo.is_transit(link):
            for peer in snap.topo.peers(router, link):
                peer_port = snap.topo.port(peer, link)
                if peer in plan and peer_port and peer_port.address:
                    ip = peer_port.address.ip
                    lines += [
                        f" neighbor {ip} remote-as {plan[peer]}",
                        f" neighbor {ip} timers connect 1",
                    ]
        elif any(snap.topo.roles[m] == "host" for m in snap.topo.links.get(link, [])):
            networks.append(f"  network {address.network}")
    loopback = snap.loopback(router)
    if loopback:
        networks.append(f"  network {loopback.network}")
    lines += [" address-family ipv4 unicast", *networks, " exit-address-family", "exit"]
    return lines
