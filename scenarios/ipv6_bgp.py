"""eBGP over IPv6 (FRR `bgpd`): how a router of an IPv6-only network peers, and what it
announces.

Every router is its own AS and peers with each neighbour on the global addresses of their
transit /64 (fast timers, as the IPv4 eBGP labs run). Neighbours are activated in the IPv6
unicast address family, which carries every route: each router announces its LANs' /64s
there. IPv4 unicast stays on for the sessions as FRR's traditional defaults have it but
carries nothing (no router announces an IPv4 prefix, and no host has an IPv4 address), so a
neighbour left out of the IPv6 family still has an Established session that brings it no
IPv6 route. Routers forward IPv6 (`ipv6 forwarding`); the loopback keeps its IPv4 address
only as the BGP router-id.

Hosts configure themselves from their router's advertisements (SLAAC): each LAN port
advertises its /64 and the router as default gateway, and a host's address is its /64 with
the EUI-64 id of its fixed MAC (`ipv6_plan.plan_ipv6_slaac`), so the plan knows it.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from netdojo.scenarios.network import Network, Node

AF = "address-family ipv6 unicast"
RA_INTERVAL = 2  # seconds between unsolicited router advertisements
RA_LIFETIME = 60  # seconds a host keeps its default route without hearing one


def ra_lines(prefix: str) -> list[str]:
    """A LAN port's router advertisements: its /64 for SLAAC, and the router as the default
    route; FRR suppresses advertisements unless told otherwise."""
    return [
        f" ipv6 nd prefix {prefix}",
        f" ipv6 nd ra-interval {RA_INTERVAL}",
        f" ipv6 nd ra-lifetime {RA_LIFETIME}",
        " no ipv6 nd suppress-ra",
    ]


def bgp6_head(network: Network, router: str) -> tuple[str, str]:
    """The config context of ``router``'s IPv6 unicast address family."""
    return f"router bgp {network.node(router).asn}", AF


def lan_prefixes(network: Network, router: Node) -> list[str]:
    """The /64s of ``router``'s LAN ports, in port order."""
    return [
        str(ipaddress.ip_interface(i.address).network)
        for i in router.ifaces
        if network.node(i.peer).role == "host"
    ]


def bgp6_lines(network: Network, router: Node, sessions: list[tuple[str, int, str]]) -> list[str]:
    """IPv6 forwarding on; eBGP with every neighbour in ``sessions`` (peer, its AS, its
    address), activated in IPv6 unicast, announcing the router's LANs there."""
    lines = ["ipv6 forwarding"]
    for iface in router.ifaces:
        if network.node(iface.peer).role == "host":
            prefix = str(ipaddress.ip_interface(iface.address).network)
            lines += [f"interface {iface.name}", *ra_lines(prefix), "exit"]
    lines += [
        f"router bgp {router.asn}",
        f" bgp router-id {router.loopback}",
        " no bgp ebgp-requires-policy",
        " no bgp network import-check",
        " timers bgp 1 3",
        " coalesce-time 100",
    ]
    for _, asn, address in sessions:
        lines += [f" neighbor {address} remote-as {asn}", f" neighbor {address} timers connect 1"]
    lines.append(f" {AF}")
    lines += [f"  network {prefix}" for prefix in lan_prefixes(network, router)]
    lines += [f"  neighbor {address} activate" for _, _, address in sessions]
    return [*lines, " exit-address-family", "exit", "bgp route-map delay-timer 1"]
