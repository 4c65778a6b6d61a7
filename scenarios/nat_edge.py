"""A network edge that translates: the plan of the NAT family's labs and its hidden tests.

One router, the edge, joins an inside part (private LANs behind inside routers, one prefix
for all of it) to an outside part (outside routers and a server, ``ext``). The edge
translates what the inside sends out to its own outside address, and forwards a TCP port of
that address to a server inside (``srv``). Outside routers have no route to the inside by
design, so nothing inside is reachable from the outside but through the translation. One
inside router also has a spare link to the first outside router, unused by the plan.

Routing is static, written per router here (not `network.static_routes`, which would give
every router a route to every LAN).
"""

from __future__ import annotations

import ipaddress
import random
from dataclasses import dataclass

from netdojo.labs.spec import LabSpec
from netdojo.scenarios.firewall import LISTENER, LISTENER_PATH
from netdojo.scenarios.hidden_tests import (
    ForwardParams,
    ForwardTest,
    HiddenTest,
    PingParams,
    PingTest,
    SeenSourceParams,
    SeenSourceTest,
)
from netdojo.scenarios.network import (
    Iface,
    Network,
    Node,
    attach_host,
    render_lab,
    router_config,
)

INSIDE_ROUTERS = {1: 1, 2: 2, 3: 3}
OUTSIDE_ROUTERS = {1: 1, 2: 2, 3: 2}
SERVICE_PORTS = ((80, 80), (8080, 80), (443, 443), (2222, 22), (8443, 443))
SOURCE_PORT = 9090  # where ``ext`` listens while a seen-source test runs


@dataclass(frozen=True)
class Edge:
    """The plan: the network and what its translation is made of."""

    network: Network
    edge: str
    inside: tuple[str, ...]  # inside routers, the edge aside, in the order they were wired
    outside: tuple[str, ...]  # outside routers, the first one next to the edge
    parents: dict[str, str]  # inside router -> the next router towards the edge
    aggregate: str  # the inside prefix
    public: str  # the edge's outside address
    server: str  # the inside server the port forward goes to
    ext: str  # the outside server
    port: int  # the forwarded port on the public address
    inner_port: int  # the port the inside server listens on
    masquerade: bool  # the edge writes its translation as MASQUERADE, else as SNAT
    spare: str  # the inside router with the unused link to the first outside router

    @property
    def out_iface(self) -> str:
        return self.network.node(self.edge).iface_to(self.outside[0]).name

    @property
    def inside_hosts(self) -> list[str]:
        return sorted(h.name for h in self.network.hosts if h.name != self.ext)

    def address(self, host: str) -> str:
        return self.network.host_address(host)

    def snat_rule(self) -> str:
        """The edge's source translation, as an iptables rule spec of the nat table."""
        target = "MASQUERADE" if self.masquerade else f"SNAT --to-source {self.public}"
        return f"POSTROUTING -s {self.aggregate} -o {self.out_iface} -j {target}"

    def dnat_rule(self) -> str:
        """The edge's port forward, as an iptables rule spec of the nat table."""
        inner = f"{self.address(self.server)}:{self.inner_port}"
        return (
            f"PREROUTING -i {self.out_iface} -d {self.public} -p tcp --dport {self.port} "
            f"-j DNAT --to-destination {inner}"
        )

    def below(self, router: str) -> set[str]:
        """``router`` and the inside routers whose way to the edge crosses it."""
        found = {router}
        for other in self.inside:
            hop = other
            while hop in self.parents:
                if hop == router:
                    found.add(other)
                hop = self.parents[hop]
        return found

    def hosts_below(self, router: str) -> list[str]:
        routers = self.below(router)
        return [h for h in self.inside_hosts if self.network.router_of(h) in routers]


def plan_edge(level: int, rng: random.Random) -> Edge:
    inside_count, outside_count = INSIDE_ROUTERS[level], OUTSIDE_ROUTERS[level]
    names = [f"r{i + 1}" for i in range(1 + inside_count + outside_count)]
    rng.shuffle(names)
    edge, inside, outside = names[0], names[1 : 1 + inside_count], names[1 + inside_count :]
    inner = rng.randint(1, 250)
    aggregate = ipaddress.ip_network(f"10.{inner}.0.0/16")
    outer = rng.randint(64, 127)
    inside_p2p = ipaddress.IPv4Network(f"10.{inner}.250.0/24").subnets(new_prefix=30)
    outside_p2p = ipaddress.IPv4Network(f"100.{outer}.0.0/24").subnets(new_prefix=30)
    ifaces: dict[str, list[Iface]] = {r: [] for r in names}
    links: list[tuple[str, list[tuple[str, int]]]] = []

    def wire(a: str, b: str, subnet: ipaddress.IPv4Network) -> None:
        first, second = list(subnet.hosts())
        link = f"t{len(links)}"
        links.append((link, [(a, len(ifaces[a])), (b, len(ifaces[b]))]))
        for here, there, ip in ((a, b, first), (b, a, second)):
            name = f"eth{len(ifaces[here])}"
            ifaces[here].append(Iface(name=name, link=link, address=f"{ip}/30", peer=there))

    parents: dict[str, str] = {}
    for index, router in enumerate(inside):
        parent = edge if index == 0 else rng.choice([edge, *inside[:index]])
        parents[router] = parent
        wire(parent, router, next(inside_p2p))
    wire(edge, outside[0], next(outside_p2p))
    for index in range(1, len(outside)):
        wire(outside[index - 1], outside[index], next(outside_p2p))
    spare = rng.choice(inside)
    wire(spare, outside[0], next(outside_p2p))
    public = ifaces[edge][-1].address.split("/")[0]

    hosts: list[Node] = []
    lans: dict[str, str] = {}
    numbers = rng.sample(range(1, 250), len(inside) + 1)
    server_router = rng.choice(inside)
    clients = [r for r in [edge, *inside] if r != server_router]
    attach = [(server_router, "srv")] + [(r, f"pc{i + 1}") for i, r in enumerate(clients)]
    lan_nets = [ipaddress.ip_network(f"10.{inner}.{n}.0/24") for n in numbers]
    lan_nets.append(ipaddress.ip_network(f"100.{outer}.{rng.randint(1, 250)}.0/24"))
    attach.append((outside[-1], "ext"))
    for k, ((router, host), lan) in enumerate(zip(attach, lan_nets, strict=True)):
        gateway = lan.network_address + rng.choice([1, 254])
        address = lan.network_address + rng.randint(10, 200)
        lans[host] = str(lan)
        hosts.append(attach_host(router, host, f"lan{k}", gateway, address, ifaces, links))
    loopbacks = rng.sample(range(1, 250), len(names))
    routers = [
        Node(name=r, role="router", ifaces=ifaces[r], loopback=f"10.255.0.{loopbacks[i]}")
        for i, r in enumerate(sorted(names))
    ]
    network = Network(nodes=routers + hosts, links=links, lans=lans)
    port, inner_port = rng.choice(SERVICE_PORTS)
    return Edge(
        network=network,
        edge=edge,
        inside=tuple(inside),
        outside=tuple(outside),
        parents=parents,
        aggregate=str(aggregate),
        public=public,
        server="srv",
        ext="ext",
        port=port,
        inner_port=inner_port,
        masquerade=rng.random() < 0.5,
        spare=spare,
    )


def _hop(network: Network, router: str, towards: str) -> str:
    return network.node(towards).iface_to(router).address.split("/")[0]


def static_plan(plan: Edge) -> dict[str, list[tuple[str, str]]]:
    """Each router's static routes: inside routers default towards the edge and reach the LANs
    below them; the edge reaches every inside LAN and the outside LAN; outside routers reach
    only the outside LAN and the edge's outside link."""
    network = plan.network
    routes: dict[str, list[tuple[str, str]]] = {r.name: [] for r in network.routers}
    for router, parent in plan.parents.items():
        routes[router].append(("0.0.0.0/0", _hop(network, router, parent)))
    for host in plan.inside_hosts:
        home = network.router_of(host)
        hop = home
        while hop in plan.parents:
            parent = plan.parents[hop]
            routes[parent].append((network.lans[host], _hop(network, parent, hop)))
            hop = parent
    ext_lan = network.lans[plan.ext]
    chain = [plan.edge, *plan.outside]
    edge_link = str(ipaddress.ip_interface(network.node(plan.edge).iface_to(chain[1]).address))
    edge_subnet = str(ipaddress.ip_interface(edge_link).network)
    for index, router in enumerate(chain[:-1]):
        routes[router].append((ext_lan, _hop(network, router, chain[index + 1])))
    for index in range(2, len(chain)):
        routes[chain[index]].append((edge_subnet, _hop(network, chain[index], chain[index - 1])))
    return routes


def render(plan: Edge, lab_name: str) -> LabSpec:
    """The lab: static routes, the edge's translation and the inside server's listener."""
    network = plan.network
    lab = render_lab(network, "none", lab_name)
    statics = static_plan(plan)
    for router in network.routers:
        config = router_config(network, router, "static", statics)
        lab.device(router.name).files["/etc/frr/frr.conf"] = config
    edge = lab.device(plan.edge).startup
    edge += [f"iptables -t nat -A {plan.snat_rule()}", f"iptables -t nat -A {plan.dnat_rule()}"]
    server = lab.device(plan.server)
    server.files[LISTENER_PATH] = LISTENER
    server.startup.append(
        f"setsid nohup python3 {LISTENER_PATH} {plan.inner_port} >/dev/null 2>&1 </dev/null &"
    )
    return lab


def forward_test(plan: Edge) -> ForwardTest:
    return ForwardTest(
        id=f"nat:forward:{plan.ext}-{plan.server}:{plan.port}",
        description=f"{plan.ext} reaches {plan.server} through TCP {plan.port} on {plan.public}",
        device=plan.ext,
        params=ForwardParams(target=plan.public, port=plan.port, server=plan.server),
    )


def ping_out(plan: Edge, host: str) -> PingTest:
    target = plan.address(plan.ext)
    return PingTest(
        id=f"nat:ping:{host}-{plan.ext}",
        description=f"{host} can ping {plan.ext} ({target})",
        device=host,
        params=PingParams(target=target),
    )


def source_test(plan: Edge, host: str) -> SeenSourceTest:
    target = plan.address(plan.ext)
    return SeenSourceTest(
        id=f"nat:source:{host}-{plan.ext}",
        description=f"{plan.ext} sees TCP connections from {host} come from {plan.public}",
        device=host,
        params=SeenSourceParams(
            target=target, port=SOURCE_PORT, server=plan.ext, source=plan.public
        ),
    )


def flows(plan: Edge) -> list[HiddenTest]:
    """Every flow the design promises: the forward, and each inside host's way out."""
    tests: list[HiddenTest] = [forward_test(plan)]
    for host in plan.inside_hosts:
        tests += [ping_out(plan, host), source_test(plan, host)]
    return tests
