"""DHCP through relays: one router serves every host's scope, and each host's gateway relays.

One router that is no host's gateway, picked by a hash of the plan, runs the lab's DHCP server
and its DNS server (`scenarios.services`), both on its loopback, which the routing protocol
carries. Its DHCP file holds one scope per host LAN (a one-address range, the host's planned
address, tagged with the host's name, and the router option of that LAN's gateway); dnsmasq
picks the scope by the relay's address in a request (giaddr). Each host's gateway runs a
relay, dnsmasq with `port=0` and `dhcp-relay=<its LAN address>,<the server's loopback>`, that
forwards its LAN's requests to the server and the answers back. Hosts take their address,
gateway and resolver with `dhclient` at boot, as in `lab-services`, once routing reaches the
server.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from netdojo.labs.spec import LabSpec
from netdojo.scenarios.network import Network
from netdojo.scenarios.services import (
    DHCP_CONF,
    DHCP_TAIL,
    LEASE,
    RELAY_CONF,
    SERVER_PID,
    ZONE,
    Services,
    furnish_client,
    furnish_dns,
    start_server,
)

BOOT_TRIES = 10
"""How often a host asks for its lease at boot: each try gives up after
`services.CLIENT_TIMEOUT_S`, and the first fail until routing reaches the server."""
RELAY_TAIL = (f"pid-file={SERVER_PID['dhcp-relay']}", "log-facility=/var/log/dnsmasq-relay.log")


@dataclass(frozen=True)
class Relays:
    """Where the DHCP server runs (a router and its loopback) and each host's relay: its
    gateway and the gateway's address on the host's LAN."""

    server: str
    address: str
    relays: dict[str, tuple[str, str]]  # host -> (gateway, its LAN address)

    @property
    def services(self) -> Services:
        """The DNS server's place, for `scenarios.services`: the same router."""
        return Services(dns_router=self.server, dns_address=self.address, dhcp={})


def place_relays(network: Network) -> Relays:
    """The server is a router that is no host's gateway, picked by a hash of the plan; each
    host's relay is its gateway."""
    gateways = {network.router_of(host) for host in network.lans}
    candidates = sorted(
        (r for r in network.routers if r.name not in gateways), key=lambda r: r.name
    )
    if not candidates:
        raise ValueError("every router is a host's gateway: no router is left for the server")
    digest = hashlib.sha256(f"relay/{network.model_dump_json()}".encode()).digest()
    server = candidates[int.from_bytes(digest[:4], "big") % len(candidates)]
    assert server.loopback is not None
    relays: dict[str, tuple[str, str]] = {}
    for host in sorted(network.lans):
        gateway = network.node(host).gateway
        assert gateway is not None
        relays[host] = (network.router_of(host), gateway)
    return Relays(server=server.name, address=server.loopback, relays=relays)


def server_identifiers(network: Network, relays: Relays) -> list[str]:
    """The addresses a lease from the lab's server may name as its server: dnsmasq names the
    port a relayed request arrived on, any of the server router's, or its loopback."""
    router = network.node(relays.server)
    ports = [iface.address.split("/")[0] for iface in router.ifaces]
    return sorted({*ports, relays.address})


@dataclass(frozen=True)
class RelayedScope:
    """One host LAN's scope on the server: a fault drops it."""

    tag: str
    address: str
    router: str


def relayed_scopes(network: Network, relays: Relays) -> list[RelayedScope]:
    return [
        RelayedScope(host, network.host_address(host), gateway)
        for host, (_, gateway) in relays.relays.items()
    ]


def scope_lines(scope: RelayedScope) -> list[str]:
    return [
        f"dhcp-range=set:{scope.tag},{scope.address},{scope.address},255.255.255.0,{LEASE}",
        f"dhcp-option=tag:{scope.tag},option:router,{scope.router}",
    ]


def server_conf(relays: Relays, scopes: list[RelayedScope]) -> str:
    """The central DHCP server's file: no DNS, no interface named (relayed requests arrive on
    transit ports), a scope per relayed LAN, and the options every LAN shares."""
    return "\n".join(
        [
            "port=0",
            "dhcp-authoritative",
            *(line for scope in scopes for line in scope_lines(scope)),
            f"dhcp-option=option:dns-server,{relays.address}",
            f"dhcp-option=option:domain-name,{ZONE}",
            *DHCP_TAIL,
            "",
        ]
    )


def relay_conf(local: str | None, server: str) -> str:
    """A gateway's relay file: requests arriving on its port with address ``local`` go to
    ``server``; with no ``local`` the file lost its relay line and the relay relays nothing."""
    relay = [f"dhcp-relay={local},{server}"] if local is not None else []
    return "\n".join(["port=0", *relay, *RELAY_TAIL, ""])


def furnish_relays(lab: LabSpec, network: Network) -> None:
    """Install the central DHCP and DNS servers, a relay on every host's gateway, and make
    every host a DHCP client."""
    relays = place_relays(network)
    server = lab.device(relays.server)
    server.files[DHCP_CONF] = server_conf(relays, relayed_scopes(network, relays))
    server.startup.append(start_server("dhcp-server"))
    for host, (gateway, local) in relays.relays.items():
        device = lab.device(gateway)
        device.files[RELAY_CONF] = relay_conf(local, relays.address)
        device.startup.append(start_server("dhcp-relay"))
        furnish_client(lab, host, tries=BOOT_TRIES)
    furnish_dns(lab, network, relays.services)
