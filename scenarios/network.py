"""A seeded network plan: routers, hosts, interfaces, addresses, and the lab that runs it.

`plan_network` turns a `Topology` into a `Network` (who is wired to what, with which
addresses); `render_lab` turns a `Network` plus a routing mode into a `LabSpec`.
"""

from __future__ import annotations

import ipaddress
import random
from functools import cached_property, lru_cache
from typing import Any, Literal

import networkx as nx
from pydantic import BaseModel

from netdojo.labs.spec import DeviceSpec, LabSpec, LinkSpec
from netdojo.scenarios.ipv6 import ACCEPT_RA, address_lines, eui64_mac, host_startup, ospf6_lines
from netdojo.scenarios.ipv6_bgp import bgp6_lines
from netdojo.scenarios.isis import isis_lines
from netdojo.scenarios.model import DeviceFacts, InterfaceFacts
from netdojo.scenarios.rip import rip_lines
from netdojo.scenarios.topology import Topology

Routing = Literal["static", "ospf", "bgp", "ibgp", "rip", "isis", "ospf6", "bgp6", "none"]
IPV6_ROUTINGS = ("ospf6", "bgp6")  # the IPv6-only networks
HOSTS_BY_LEVEL = {1: 2, 2: 3, 3: 4}
HOST_PREFIXES = ("h", "pc", "srv", "ws", "host")


@lru_cache(maxsize=1 << 14)
def interface(address: str) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface:
    """An interface address (with its prefix length), parsed; remembered, as plans name the
    same addresses over and over."""
    return ipaddress.ip_interface(address)


@lru_cache(maxsize=1 << 14)
def parsed_prefix(prefix: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    """A prefix, parsed; remembered like `interface`."""
    return ipaddress.ip_network(prefix)


@lru_cache(maxsize=1 << 14)
def subnet(address: str) -> str:
    """The prefix of an interface address: 10.4.0.0/30 for 10.4.0.1/30."""
    return str(interface(address).network)


class Iface(BaseModel):
    name: str
    link: str
    address: str  # CIDR, e.g. 10.4.0.1/30
    peer: str  # device at the other end (for a LAN port: the host)


class Node(BaseModel):
    name: str
    role: Literal["router", "host"]
    ifaces: list[Iface]
    loopback: str | None = None  # router-id, /32 on lo
    asn: int | None = None  # routers' own AS, used by BGP plans
    gateway: str | None = None  # hosts only

    def iface(self, name: str) -> Iface:
        for iface in self.ifaces:
            if iface.name == name:
                return iface
        raise KeyError(f"{self.name} has no interface {name}")

    def iface_to(self, peer: str) -> Iface:
        for iface in self.ifaces:
            if iface.peer == peer:
                return iface
        raise KeyError(f"{self.name} has no interface towards {peer}")


class Network(BaseModel):
    nodes: list[Node]  # each with a name of its own
    links: list[tuple[str, list[tuple[str, int]]]]
    lans: dict[str, str]  # host -> LAN prefix
    ospf_md5: dict[str, str] = {}  # transit link -> MD5 key, where OSPF authenticates
    ospf_areas: dict[str, int] = {}  # link -> OSPF area where not the backbone (multi-area plans)
    router_areas: dict[str, int] = {}  # router -> area of its loopback where not the backbone
    redistributed: list[str] = []  # LAN links announced by redistribution, not `network`
    core_as: int | None = None  # iBGP plans: the AS of every router but the externals
    externals: list[str] = []  # iBGP plans: routers of other ASes, one eBGP link each
    rip_auth: dict[str, str] = {}  # transit link -> MD5 key, where RIP authenticates

    def node(self, name: str) -> Node:
        """The node called ``name``, found at its position in `_positions`, which is worked
        out again when the node there is not that one: the nodes may have changed since."""
        position = self._positions.get(name, -1)
        if not (0 <= position < len(self.nodes) and self.nodes[position].name == name):
            del self._positions
            position = self._positions[name]
        return self.nodes[position]

    @cached_property
    def _positions(self) -> dict[str, int]:
        """Each node's position in `nodes`, by name (the first's, for a name given twice)."""
        positions: dict[str, int] = {}
        for index, node in enumerate(self.nodes):
            positions.setdefault(node.name, index)
        return positions

    @property
    def routers(self) -> list[Node]:
        return [n for n in self.nodes if n.role == "router"]

    @property
    def hosts(self) -> list[Node]:
        return [n for n in self.nodes if n.role == "host"]

    def router_of(self, host: str) -> str:
        return self.node(host).ifaces[0].peer

    def host_address(self, host: str) -> str:
        return self.node(host).ifaces[0].address.split("/")[0]

    def router_graph(self) -> nx.Graph:
        graph = nx.Graph()
        graph.add_nodes_from(r.name for r in self.routers)
        for router in self.routers:
            for iface in router.ifaces:
                if self.node(iface.peer).role == "router":
                    graph.add_edge(router.name, iface.peer)
        return graph

    def internal(self, router: str) -> bool:
        """Whether ``router`` belongs to the core AS of an iBGP plan."""
        return (
            self.core_as is not None
            and self.node(router).role == "router"
            and router not in self.externals
        )

    def transit_links(self) -> list[tuple[str, str]]:
        """Each pair of linked routers once, as (lesser name, greater name), in order."""
        pairs = {
            (min(router.name, iface.peer), max(router.name, iface.peer))
            for router in self.routers
            for iface in router.ifaces
            if self.node(iface.peer).role == "router"
        }
        return sorted(pairs)


def plan_network(
    topology: Topology,
    level: int,
    rng: random.Random,
    extra_hosts: int = 0,
    host_routers: list[str] | None = None,
) -> Network:
    """Wire hosts to distinct routers (``host_routers`` when given) and give every interface
    an address, all seeded."""
    p2p_octet = rng.randint(0, 200)
    p2p_pool = ipaddress.IPv4Address(f"10.{p2p_octet}.0.0")  # a /16 of /30s, one per link
    lan_base = rng.choice(["192.168.{}.0/24", "172.{}.0.0/24", "10.{}.1.0/24"])
    ifaces: dict[str, list[Iface]] = {r: [] for r in topology.routers}
    links: list[tuple[str, list[tuple[str, int]]]] = []
    for index, (a, b) in enumerate(topology.links):
        first, second = p2p_pool + 4 * index + 1, p2p_pool + 4 * index + 2
        link = f"t{index}"
        links.append((link, [(a, len(ifaces[a])), (b, len(ifaces[b]))]))
        ifaces[a].append(
            Iface(name=f"eth{len(ifaces[a])}", link=link, address=f"{first}/30", peer=b)
        )
        ifaces[b].append(
            Iface(name=f"eth{len(ifaces[b])}", link=link, address=f"{second}/30", peer=a)
        )
    host_count = min(HOSTS_BY_LEVEL.get(level, 2) + extra_hosts, len(topology.routers))
    edge_routers = sorted(topology.routers, key=lambda r: (len(topology.neighbours(r)), r))
    if host_routers is not None:
        host_count, attach = len(host_routers), sorted(host_routers)
    else:
        candidates = edge_routers[: max(host_count, len(edge_routers) // 2)]
        attach = sorted(rng.sample(candidates, host_count))
    host_prefix = rng.choice(HOST_PREFIXES)
    lan_numbers = rng.sample([n for n in range(1, 250) if n != p2p_octet], host_count)
    hosts: list[Node] = []
    lans: dict[str, str] = {}
    for k, router in enumerate(attach):
        host = f"{host_prefix}{k + 1}"
        lan = ipaddress.ip_network(
            lan_base.format(lan_numbers[k] if not lan_base.startswith("172") else 16 + k)
        )
        gateway = lan.network_address + rng.choice([1, 254])
        address = lan.network_address + rng.randint(10, 200)
        hosts.append(attach_host(router, host, f"lan{k}", gateway, address, ifaces, links))
        lans[host] = str(lan)
    loopback_ids = rng.sample(range(1, 250), len(topology.routers))
    asns = rng.sample(range(64512, 65535), len(topology.routers))
    routers = [
        Node(
            name=r,
            role="router",
            ifaces=ifaces[r],
            loopback=f"10.255.0.{loopback_ids[i]}",
            asn=asns[i],
        )
        for i, r in enumerate(topology.routers)
    ]
    md5_link = rng.choice([name for name, _ in links if name.startswith("t")])
    key = f"{rng.choice(('k', 'sec', 'ospf', 'lnk'))}{rng.randint(100, 999)}"
    return Network(nodes=routers + hosts, links=links, lans=lans, ospf_md5={md5_link: key})


DAEMONS = """zebra=yes
{protocols}
vtysh_enable=yes
zebra_options="  -A 127.0.0.1 -s 90000000"
ospfd_options="  -A 127.0.0.1"
bgpd_options="  -A 127.0.0.1"
staticd_options="-A 127.0.0.1"
MAX_FDS=1024
"""
PROTOCOLS = ("bgpd", "ospfd", "ospf6d", "ripd", "ripngd", "isisd", "pimd", "ldpd", "bfdd")


def daemons_file(enabled: set[str]) -> str:
    lines = "\n".join(f"{p}={'yes' if p in enabled else 'no'}" for p in PROTOCOLS)
    text = DAEMONS.format(protocols=lines + "\nstaticd=yes")
    text += 'ospf6d_options="  -A 127.0.0.1"\n' if "ospf6d" in enabled else ""
    return text + ('isisd_options="  -A 127.0.0.1"\n' if "isisd" in enabled else "")


def static_routes(network: Network) -> dict[str, list[tuple[str, str]]]:
    """Per router, ``(prefix, next hop address)`` for every LAN it is not attached to.

    Next hops follow shortest paths; ties are broken by router name, so the plan is stable.
    """
    graph = network.router_graph()
    routes: dict[str, list[tuple[str, str]]] = {r.name: [] for r in network.routers}
    for host, prefix in sorted(network.lans.items()):
        target = network.router_of(host)
        hops = nx.single_source_shortest_path_length(graph, target)
        for router in sorted(routes):
            if router == target:
                continue
            next_router = network.node(min(n for n in graph[router] if hops[n] < hops[router]))
            next_hop = next_router.iface_to(router).address.split("/")[0]
            routes[router].append((prefix, next_hop))
    return routes


REDISTRIBUTION = ("PL-LAN", "RM-LAN")  # prefix-list and route-map of redistributed LANs


def redistribution_lines(network: Network, router: Node) -> list[str]:
    """The prefix-list and route-map that pick the router's redistributed LANs."""
    lans = [i for i in router.ifaces if i.link in network.redistributed]
    if not lans:
        return []
    prefix_list, route_map = REDISTRIBUTION
    lines = [
        f"ip prefix-list {prefix_list} seq {5 * (k + 1)} permit {subnet(i.address)}"
        for k, i in enumerate(lans)
    ]
    return [
        *lines,
        f"route-map {route_map} permit 10",
        f" match ip address prefix-list {prefix_list}",
        "exit",
    ]


def ospf_lines(network: Network, router: Node, ports: list[Iface] | None = None) -> list[str]:
    """Fast point-to-point OSPF on transit ports, LAN ports passive; area 0 unless the plan
    puts a link in another area; LANs marked for redistribution come in as externals.
    ``ports`` limits OSPF to some of the router's interfaces."""
    ports = router.ifaces if ports is None else ports
    lines: list[str] = redistribution_lines(network, router)
    for iface in ports:
        if network.node(iface.peer).role == "router":
            lines += [
                f"interface {iface.name}",
                " ip ospf network point-to-point",
                " ip ospf hello-interval 1",
                " ip ospf dead-interval 4",
            ]
            if iface.link in network.ospf_md5:
                lines += [
                    " ip ospf authentication message-digest",
                    f" ip ospf message-digest-key 1 md5 {network.ospf_md5[iface.link]}",
                ]
            lines.append("exit")
    lines += [
        "router ospf",
        f" ospf router-id {router.loopback}",
        " timers throttle spf 0 50 500",
        " timers throttle lsa all 0",
        " timers lsa min-arrival 0",
    ]
    lines += [f" passive-interface {i.name}" for i in ports if network.node(i.peer).role == "host"]
    if any(i.link in network.redistributed for i in ports):
        lines.append(f" redistribute connected route-map {REDISTRIBUTION[1]}")
    lines += [
        f" network {subnet(i.address)} area {network.ospf_areas.get(i.link, 0)}"
        for i in ports
        if i.link not in network.redistributed
    ]
    lines += [f" network {router.loopback}/32 area {network.router_areas.get(router.name, 0)}"]
    return [*lines, "exit"]


def bgp_neighbours(network: Network, router: Node) -> list[tuple[str, int, str]]:
    """``(peer router, peer AS, peer address)`` for every eBGP session of ``router``."""
    sessions = []
    for iface in router.ifaces:
        peer = network.node(iface.peer)
        if peer.role == "router" and peer.asn is not None:
            sessions.append((peer.name, peer.asn, peer.iface_to(router.name).address.split("/")[0]))
    return sessions


def bgp_lines(network: Network, router: Node) -> list[str]:
    """eBGP with every neighbour on a direct link; announce the router's LANs and loopback."""
    lines = [
        f"router bgp {router.asn}",
        f" bgp router-id {router.loopback}",
        " no bgp ebgp-requires-policy",
        " no bgp network import-check",
        " timers bgp 1 3",
        " coalesce-time 100",
    ]
    for _, asn, address in bgp_neighbours(network, router):
        lines += [f" neighbor {address} remote-as {asn}", f" neighbor {address} timers connect 1"]
    lines.append(" address-family ipv4 unicast")
    for iface in router.ifaces:
        if network.node(iface.peer).role == "host":
            lines.append(f"  network {subnet(iface.address)}")
    lines += [f"  network {router.loopback}/32", " exit-address-family", "exit"]
    return lines


def ospf_link(network: Network, routing: Routing, a: str, b: str) -> bool:
    """Whether OSPF runs on the transit link between ``a`` and ``b``: every link of an OSPF
    network, the links inside the core AS of an iBGP one."""
    return routing == "ospf" or (routing == "ibgp" and network.internal(a) and network.internal(b))


def ibgp_lines(network: Network, router: Node) -> list[str]:
    """A core router: OSPF for links and loopbacks only, iBGP full mesh between loopbacks,
    next-hop-self towards the mesh where it has an external peer; an external router: eBGP
    with its one border router. Both announce their LANs in BGP."""
    if not network.internal(router.name):
        return bgp_lines(network, router)
    transit = [i for i in router.ifaces if network.internal(i.peer)]
    ospf = ospf_lines(network, router, transit)
    mesh = [r for r in network.routers if network.internal(r.name) and r.name != router.name]
    externals = [i for i in router.ifaces if i.peer in network.externals]
    lines = [
        f"router bgp {network.core_as}",
        f" bgp router-id {router.loopback}",
        " no bgp ebgp-requires-policy",
        " no bgp network import-check",
        # Sessions ride on the underlay: a longer hold keeps them up through a busy moment.
        " timers bgp 3 9",
        " coalesce-time 100",
    ]
    for peer in mesh:
        lines += [
            f" neighbor {peer.loopback} remote-as {network.core_as}",
            f" neighbor {peer.loopback} update-source lo",
            f" neighbor {peer.loopback} timers connect 1",
        ]
    for iface in externals:
        address = network.node(iface.peer).iface_to(router.name).address.split("/")[0]
        lines += [
            f" neighbor {address} remote-as {network.node(iface.peer).asn}",
            f" neighbor {address} timers connect 1",
        ]
    lines.append(" address-family ipv4 unicast")
    lines += [
        f"  network {subnet(i.address)}"
        for i in router.ifaces
        if network.node(i.peer).role == "host"
    ]
    if externals:
        lines += [f"  neighbor {peer.loopback} next-hop-self" for peer in mesh]
    return [*ospf, *lines, " exit-address-family", "exit"]


def static_lines(routes: list[tuple[str, str]]) -> list[str]:
    """A router's static routes (its entry of `static_routes`) as configuration lines."""
    return [f"ip route {prefix} {hop}" for prefix, hop in routes]


def router_config(
    network: Network, router: Node, routing: Routing, statics: dict[str, list[tuple[str, str]]]
) -> str:
    """``router``'s FRR configuration; ``statics`` is the network's static plan when routing
    is static."""
    lines = [
        "frr defaults traditional",
        f"hostname {router.name}",
        "log file /var/log/frr/frr.log informational",
        "service integrated-vtysh-config",
        "!",
    ]
    if routing in IPV6_ROUTINGS:
        if routing == "ospf6":
            protocol = ospf6_lines(network, router)
        else:
            protocol = bgp6_lines(network, router, bgp_neighbours(network, router))
        lines += [*address_lines(router), *protocol, "!", ""]
        return "\n".join(lines)
    for iface in router.ifaces:
        lines += [f"interface {iface.name}", f" ip address {iface.address}", "exit"]
    lines += ["interface lo", f" ip address {router.loopback}/32", "exit"]
    if routing == "static":
        lines += static_lines(statics[router.name])
    elif routing == "ospf":
        lines += ospf_lines(network, router)
    elif routing == "bgp":
        lines += [*bgp_lines(network, router), "bgp route-map delay-timer 1"]
    elif routing == "ibgp":
        lines += [*ibgp_lines(network, router), "bgp route-map delay-timer 1"]
    elif routing == "rip":
        lines += rip_lines(network, router)
    elif routing == "isis":
        lines += isis_lines(network, router)
    lines += ["!", ""]
    return "\n".join(lines)


def render_lab(
    network: Network, routing: Routing, name: str, daemons: set[str] | None = None
) -> LabSpec:
    """The lab for ``network``; ``daemons`` defaults to what ``routing`` needs."""
    devices: list[DeviceSpec] = []
    needs = {
        "ospf": {"ospfd"},
        "bgp": {"bgpd"},
        "ibgp": {"ospfd", "bgpd"},
        "rip": {"ripd"},
        "isis": {"isisd"},
        "ospf6": {"ospf6d"},
        "bgp6": {"bgpd"},
    }
    enabled = daemons if daemons is not None else needs.get(routing, set())
    statics = static_routes(network) if routing == "static" else {}
    ipv6 = {"ipv6": True} if routing in IPV6_ROUTINGS else {}  # other labs are written as before
    for node in network.nodes:
        if node.role == "router":
            devices.append(
                DeviceSpec(
                    name=node.name,
                    role="router",
                    files={
                        "/etc/frr/daemons": daemons_file(enabled),
                        "/etc/frr/frr.conf": router_config(network, node, routing, statics),
                    },
                    startup=["/usr/lib/frr/frrinit.sh start"],
                    **ipv6,
                )
            )
        else:
            iface = node.ifaces[0]
            assert node.gateway is not None
            startup = [
                f"ip address add {iface.address} dev eth0",
                f"ip route add default via {node.gateway}",
            ]
            slaac: dict[str, Any] = {}
            if routing == "bgp6":  # address and default route from the router's advertisements
                startup, slaac = [], {"sysctls": ACCEPT_RA, "macs": {0: eui64_mac(iface.address)}}
            elif ipv6:
                startup = host_startup(iface.address, node.gateway)
            devices.append(
                DeviceSpec(name=node.name, role="host", startup=startup, **ipv6, **slaac)
            )
    links = [LinkSpec(name=name_, endpoints=ends) for name_, ends in network.links]
    return LabSpec.build(name=name, devices=devices, links=links)


def attach_host(
    router: str,
    host: str,
    link: str,
    gateway: ipaddress.IPv4Address | ipaddress.IPv6Address,
    address: ipaddress.IPv4Address | ipaddress.IPv6Address,
    ifaces: dict[str, list[Iface]],
    links: list[tuple[str, list[tuple[str, int]]]],
) -> Node:
    """Give ``router`` a /24 port on ``link`` at ``gateway`` (recorded in ``ifaces`` and
    ``links``); the host on its other end, at ``address``."""
    index = len(ifaces[router])
    links.append((link, [(router, index), (host, 0)]))
    ifaces[router].append(Iface(name=f"eth{index}", link=link, address=f"{gateway}/24", peer=host))
    return Node(
        name=host,
        role="host",
        ifaces=[Iface(name="eth0", link=link, address=f"{address}/24", peer=router)],
        gateway=str(gateway),
    )


def public_facts(network: Network) -> list[DeviceFacts]:
    """What the public half tells of ``network``: each device's role, ports, links, addresses."""
    return [
        DeviceFacts(
            name=node.name,
            role=node.role,
            interfaces=[
                InterfaceFacts(name=i.name, link=i.link, address=i.address) for i in node.ifaces
            ],
        )
        for node in network.nodes
    ]
