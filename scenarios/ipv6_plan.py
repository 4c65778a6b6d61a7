"""The networks the IPv6 families draw: the IPv4 plan of `plan_network`, readdressed in IPv6.

Each transit link ``tK`` of a plan whose point-to-point pool is ``10.P.0.0/16`` becomes
``2001:db8:P:K::/64`` (ends ``::1`` and ``::2``); a LAN ``A.B.C.0/24`` becomes ``fd00:B:C::/64``
with its gateway and host keeping their last octet as the last group (``.254`` -> ``::254``).
Router-ids stay the IPv4 loopbacks; no link authenticates.
"""

from __future__ import annotations

import ipaddress
import random

from netdojo.scenarios.ipv6 import eui64
from netdojo.scenarios.network import Iface, Network, Node, plan_network
from netdojo.scenarios.topology import Topology


def _lan(prefix: str) -> str:
    octets = str(ipaddress.ip_network(prefix).network_address).split(".")
    return str(ipaddress.ip_network(f"fd00:{octets[1]}:{octets[2]}::/64"))


def _in_lan(lan: str, address: str) -> str:
    """The IPv6 address in ``lan`` for the IPv4 ``address`` of its LAN (last octet kept)."""
    last = address.split("/")[0].split(".")[-1]
    return str(ipaddress.ip_network(lan).network_address + int(last, 16))


def _transit(link: str, pool: int, end: int) -> str:
    return str(ipaddress.ip_interface(f"2001:db8:{pool}:{int(link[1:]):x}::{end}/64"))


def readdress(network: Network) -> Network:
    """``network`` with every port in IPv6, as the module says."""
    pool = next(
        int(i.address.split(".")[1])
        for r in network.routers
        for i in r.ifaces
        if i.link.startswith("t")
    )
    lans = {host: _lan(prefix) for host, prefix in network.lans.items()}
    lan_of_link = {network.node(h).ifaces[0].link: lans[h] for h in network.lans}
    nodes: list[Node] = []
    for node in network.nodes:
        ifaces = []
        for iface in node.ifaces:
            if iface.link in lan_of_link:
                address = _in_lan(lan_of_link[iface.link], iface.address) + "/64"
            else:
                end = int(iface.address.split("/")[0].split(".")[-1]) % 4  # 1 or 2 in its /30
                address = _transit(iface.link, pool, end)
            ifaces.append(Iface(name=iface.name, link=iface.link, address=address, peer=iface.peer))
        gateway = None
        if node.gateway is not None:
            gateway = _in_lan(lans[node.name], node.gateway)
        nodes.append(node.model_copy(update={"ifaces": ifaces, "gateway": gateway}))
    return network.model_copy(update={"nodes": nodes, "lans": lans, "ospf_md5": {}})


def plan_ipv6(topology: Topology, level: int, rng: random.Random) -> Network:
    """An IPv6-only network on ``topology`` (see the module)."""
    return readdress(plan_network(topology, level, rng))


def slaac_mac(index: int, address: str) -> str:
    """The fixed MAC of the ``index``-th host, whose static address would be ``address``: a
    locally administered one carrying the index and that address's last group."""
    last = int(ipaddress.IPv6Interface(address).ip) & 0xFFFF
    return f"02:00:00:{index:02x}:{last >> 8:02x}:{last & 0xFF:02x}"


def plan_ipv6_slaac(topology: Topology, level: int, rng: random.Random) -> Network:
    """An IPv6-only network whose hosts take their address by SLAAC: each host's port has a
    fixed MAC (`slaac_mac`), so its address is its LAN's /64 with that MAC's EUI-64 id."""
    network = plan_ipv6(topology, level, rng)
    nodes = []
    for node in network.nodes:
        if node.name in network.lans:
            index = sorted(network.lans).index(node.name)
            port = node.ifaces[0]
            address = eui64(network.lans[node.name], slaac_mac(index, port.address))
            node = node.model_copy(
                update={"ifaces": [port.model_copy(update={"address": address})]}
            )
        nodes.append(node)
    return network.model_copy(update={"nodes": nodes})
