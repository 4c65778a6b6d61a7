"""The fault catalogue: how each fault type is injected, detected, fixed, and what it breaks.

Each injector picks a target in the network with the seeded `random.Random`, and returns a
`FaultPlan`: the `Fault` (inject and fix as tool calls, probes that hold while it is active),
its `Impact` on forwarding, and functional probes that hold once it is repaired. Injections
use the means an operator would: vtysh configuration lines and `ip` commands.
"""

from __future__ import annotations

import ipaddress
import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import networkx as nx

from netdojo.scenarios.forwarding import Impact
from netdojo.scenarios.model import Fault, Probe, configure, execute
from netdojo.scenarios.network import Iface, Network, Routing, ospf_link, static_routes
from netdojo.scenarios.symptoms import Observation


@dataclass
class FaultContext:
    network: Network
    routing: Routing
    rng: random.Random
    used: set[str] = field(default_factory=set)  # devices and interfaces already faulted

    def take(self, *keys: str) -> bool:
        """Reserve ``keys``; False when one is already used by another fault."""
        if any(key in self.used for key in keys):
            return False
        self.used.update(keys)
        return True

    @cached_property
    def static_plan(self) -> dict[str, list[tuple[str, str]]]:
        return static_routes(self.network)

    @cached_property
    def transit_links(self) -> list[tuple[str, str]]:
        return self.network.transit_links()


@dataclass
class FaultPlan:
    fault: Fault
    impact: Impact
    healthy: list[Probe]  # functional checks that hold once the fault is repaired
    flows: frozenset[Observation] = frozenset()  # policy flows it breaks (forwarding aside)


Injector = Callable[[FaultContext], FaultPlan | None]


def router_id(network: Network, router: str) -> str:
    loopback = network.node(router).loopback
    assert loopback is not None
    return loopback


def subnet_of(iface: Iface) -> str:
    return str(ipaddress.ip_interface(iface.address).network)


def adjacency_probe(network: Network, a: str, b: str, expect: bool, tag: str) -> Probe:
    state = "is" if expect else "is not"
    return Probe(
        id=f"{tag}:ospf:{a}-{b}",
        description=f"{a} {state} in a Full OSPF adjacency with {b}",
        kind="ospf_full",
        device=a,
        params={"neighbor": router_id(network, b), "expect": expect},
    )


def transit_end(ctx: FaultContext) -> tuple[str, str, Iface] | None:
    """A router-to-router link end not yet faulted: (router, peer, router's interface)."""
    links = list(ctx.transit_links)
    ctx.rng.shuffle(links)
    for a, b in links:
        if ctx.rng.random() < 0.5:
            a, b = b, a
        iface = ctx.network.node(a).iface_to(b)
        if ctx.take(f"link:{a}:{b}", f"link:{b}:{a}", f"if:{a}:{iface.name}"):
            return a, b, iface
    return None


def link_down(ctx: FaultContext, a: str, b: str, tag: str) -> tuple[Impact, list[Probe]]:
    """A transit link that stops carrying traffic, and the protocol state that shows it is back:
    the OSPF adjacency where OSPF runs on the link, the eBGP session elsewhere; nothing for a
    statically routed link, whose repair shows only in what it forwards."""
    impact = Impact(down_links={frozenset((a, b))})
    if ctx.routing == "static":
        return impact, []
    if ospf_link(ctx.network, ctx.routing, a, b):
        return impact, [adjacency_probe(ctx.network, a, b, True, tag)]
    return impact, [session_probe(ctx.network, a, b, True, tag)]


def _ospf_link_fault(type_: str, inject: list[str], fix: list[str], under: str) -> Injector:
    """An OSPF fault on one end of a transit link, written as config lines.

    ``under`` is ``interface`` or ``router``; ``{iface}`` and ``{subnet}`` are filled in.
    """

    def injector(ctx: FaultContext) -> FaultPlan | None:
        if ctx.routing != "ospf":
            return None
        picked = transit_end(ctx)
        if picked is None:
            return None
        a, b, iface = picked
        head = f"interface {iface.name}" if under == "interface" else "router ospf"
        values = {"iface": iface.name, "subnet": subnet_of(iface)}
        impact, healthy = link_down(ctx, a, b, type_)
        present = [adjacency_probe(ctx.network, a, b, False, type_)]
        return FaultPlan(
            Fault(
                type=type_,
                device=a,
                params={"interface": iface.name, "peer": b},
                inject=[configure(a, head, *(line.format(**values) for line in inject))],
                fix=[configure(a, head, *(line.format(**values) for line in fix))],
                present=present,
            ),
            impact,
            healthy,
        )

    return injector


def _address_probe(tag: str, device: str, interface: str, address: str) -> Probe:
    return Probe(
        id=f"{tag}:{device}:{interface}",
        description=f"{device} {interface} carries {address}",
        kind="address",
        device=device,
        params={"interface": interface, "address": address, "expect": True},
    )


def _port_down(
    tag: str, device: str, interface: str, impact: Impact, healthy: list[Probe]
) -> FaultPlan:
    present = Probe(
        id=f"{tag}:{device}:{interface}",
        description=f"{device} {interface} is administratively down",
        kind="link_up",
        device=device,
        params={"interface": interface, "expect": False},
    )
    return FaultPlan(
        Fault(
            type=tag,
            device=device,
            params={"interface": interface},
            inject=[execute(device, f"ip link set dev {interface} down")],
            fix=[execute(device, f"ip link set dev {interface} up")],
            present=[present],
        ),
        impact,
        healthy,
    )


def _readdress_port(
    tag: str, device: str, iface: Iface, wrong: str, impact: Impact, healthy: list[Probe]
) -> FaultPlan:
    """A router port's address replaced through vtysh; the fix puts the intended one back."""
    head, good = f"interface {iface.name}", iface.address
    return FaultPlan(
        Fault(
            type=tag,
            device=device,
            params={"interface": iface.name, "wrong": wrong, "intended": good},
            inject=[configure(device, head, f"no ip address {good}", f"ip address {wrong}")],
            fix=[configure(device, head, f"no ip address {wrong}", f"ip address {good}")],
            present=[_address_probe(tag, device, iface.name, wrong)],
        ),
        impact,
        healthy,
    )


def admin_down(ctx: FaultContext) -> FaultPlan | None:
    if not (picked := transit_end(ctx)):
        return None
    a, b, iface = picked
    impact, healthy = link_down(ctx, a, b, "iface.admin_down")
    return _port_down("iface.admin_down", a, iface.name, impact, healthy)


def wrong_address(ctx: FaultContext) -> FaultPlan | None:
    if not (picked := transit_end(ctx)):
        return None
    a, b, iface = picked
    octets = iface.address.split("/")[0].split(".")
    wrong = f"{octets[0]}.{octets[1]}.254.{int(octets[3]) % 4 + 4 * ctx.rng.randint(1, 60)}/30"
    impact, healthy = link_down(ctx, a, b, "iface.wrong_address")
    return _readdress_port("iface.wrong_address", a, iface, wrong, impact, healthy)


def _lan_port(ctx: FaultContext) -> tuple[str, str, Iface] | None:
    """A router port facing a host, not yet faulted: (router, host, router's interface)."""
    hosts = sorted(ctx.network.lans)
    ctx.rng.shuffle(hosts)
    for host in hosts:
        router = ctx.network.router_of(host)
        iface = ctx.network.node(router).iface_to(host)
        if ctx.take(f"if:{router}:{iface.name}", f"host:{host}"):
            return router, host, iface
    return None


def _narrower(address: str, outside: str, rng: random.Random) -> str:
    """``address`` with a longer mask (/25 to /30) that leaves ``outside`` off its subnet."""
    ip = address.split("/")[0]
    lengths = [
        n
        for n in range(25, 31)
        if ipaddress.ip_address(outside) not in ipaddress.ip_interface(f"{ip}/{n}").network
    ]
    return f"{ip}/{rng.choice(lengths)}"


def lan_wrong_mask(ctx: FaultContext) -> FaultPlan | None:
    if not (picked := _lan_port(ctx)):
        return None
    router, host, iface = picked
    wrong = _narrower(iface.address, ctx.network.host_address(host), ctx.rng)
    return _readdress_port(
        "iface.lan_wrong_mask", router, iface, wrong, Impact(isolated={host}), []
    )


def mtu_mismatch(ctx: FaultContext) -> FaultPlan | None:
    if ctx.routing != "ospf":
        return None
    picked = transit_end(ctx)
    if picked is None:
        return None
    a, b, iface = picked
    impact, healthy = link_down(ctx, a, b, "iface.mtu_mismatch")
    return FaultPlan(
        Fault(
            type="iface.mtu_mismatch",
            device=a,
            params={"interface": iface.name, "mtu": 1400},
            inject=[execute(a, f"ip link set dev {iface.name} mtu 1400")],
            fix=[execute(a, f"ip link set dev {iface.name} mtu 1500")],
            present=[adjacency_probe(ctx.network, a, b, False, "iface.mtu_mismatch")],
        ),
        impact,
        healthy,
    )


def _static_route(ctx: FaultContext, need_alternative: bool) -> tuple[str, str, str] | None:
    """A router's static route to a LAN: (router, prefix, next hop); static plan only."""
    candidates = [
        (router, prefix, hop)
        for router, routes in ctx.static_plan.items()
        for prefix, hop in routes
    ]
    ctx.rng.shuffle(candidates)
    for router, prefix, hop in candidates:
        if need_alternative and len(ctx.network.node(router).ifaces) < 2:
            continue
        if ctx.take(f"route:{router}:{prefix}"):
            return router, prefix, hop
    return None


def hosts_in(network: Network, prefix: str) -> set[str]:
    net = ipaddress.ip_network(prefix)
    return {h for h in network.lans if ipaddress.ip_address(network.host_address(h)) in net}


def route_probe(tag: str, device: str, prefix: str, expect: bool, **extra: object) -> Probe:
    what = "has" if expect else "has no"
    via = f" via {extra['via']}" if "via" in extra else ""
    via += " only" if extra.get("sole") else ""
    return Probe(
        id=f"{tag}:{device}:{prefix}",
        description=f"{device} {what} a selected route to {prefix}{via}",
        kind="route",
        device=device,
        params={"prefix": prefix, "expect": expect, **extra},
    )


def missing_route(ctx: FaultContext) -> FaultPlan | None:
    if ctx.routing != "static" or not (picked := _static_route(ctx, False)):
        return None
    router, prefix, hop = picked
    return FaultPlan(
        Fault(
            type="static.missing_route",
            device=router,
            params={"prefix": prefix},
            inject=[configure(router, f"no ip route {prefix} {hop}")],
            fix=[configure(router, f"ip route {prefix} {hop}")],
            present=[route_probe("static.missing_route", router, prefix, False)],
        ),
        Impact(drops={router: hosts_in(ctx.network, prefix)}),
        [],
    )


def _wrong_neighbour(ctx: FaultContext, router: str, hop: str) -> tuple[str, str] | None:
    """Another router next to ``router`` and the address to reach it: (router, address)."""
    options = [
        (i.peer, ctx.network.node(i.peer).iface_to(router).address.split("/")[0])
        for i in ctx.network.node(router).ifaces
        if ctx.network.node(i.peer).role == "router"
    ]
    options = [option for option in options if option[1] != hop]
    return ctx.rng.choice(sorted(options)) if options else None


def wrong_next_hop(ctx: FaultContext) -> FaultPlan | None:
    if ctx.routing != "static" or not (picked := _static_route(ctx, True)):
        return None
    router, prefix, hop = picked
    wrong = _wrong_neighbour(ctx, router, hop)
    if wrong is None:
        return None
    peer, address = wrong
    present = route_probe("static.wrong_next_hop", router, prefix, True, via=address)
    hosts = hosts_in(ctx.network, prefix)
    return FaultPlan(
        Fault(
            type="static.wrong_next_hop",
            device=router,
            params={"prefix": prefix, "wrong": address, "intended": hop},
            inject=[
                configure(router, f"no ip route {prefix} {hop}", f"ip route {prefix} {address}")
            ],
            fix=[configure(router, f"no ip route {prefix} {address}", f"ip route {prefix} {hop}")],
            present=[present],
        ),
        Impact(redirects={router: dict.fromkeys(hosts, peer)}),
        [],
    )


def _mistyped(ctx: FaultContext, prefix: str) -> str | None:
    """``prefix`` with its third octet mistyped; None when that is another LAN."""
    octets = prefix.split("/")[0].split(".")
    octets[2] = str((int(octets[2]) + 10 * ctx.rng.randint(1, 9)) % 250)
    typo = f"{'.'.join(octets)}/24"
    return None if typo in ctx.network.lans.values() else typo


def wrong_prefix(ctx: FaultContext) -> FaultPlan | None:
    if ctx.routing != "static" or not (picked := _static_route(ctx, False)):
        return None
    router, prefix, hop = picked
    typo = _mistyped(ctx, prefix)
    if typo is None:
        return None
    return FaultPlan(
        Fault(
            type="static.wrong_prefix",
            device=router,
            params={"prefix": prefix, "typo": typo},
            inject=[configure(router, f"no ip route {prefix} {hop}", f"ip route {typo} {hop}")],
            fix=[configure(router, f"no ip route {typo} {hop}", f"ip route {prefix} {hop}")],
            present=[route_probe("static.wrong_prefix", router, prefix, False)],
        ),
        Impact(drops={router: hosts_in(ctx.network, prefix)}),
        [],
    )


def _transit_router_for(ctx: FaultContext) -> tuple[str, str] | None:
    """A router and a remote LAN prefix, the router not attached to that LAN."""
    pairs = [
        (router.name, prefix)
        for router in ctx.network.routers
        for host, prefix in sorted(ctx.network.lans.items())
        if ctx.network.router_of(host) != router.name
    ]
    ctx.rng.shuffle(pairs)
    for router, prefix in pairs:
        if ctx.take(f"route:{router}:{prefix}"):
            return router, prefix
    return None


def blackhole(ctx: FaultContext) -> FaultPlan | None:
    picked = _transit_router_for(ctx)
    if picked is None:
        return None
    router, prefix = picked
    # A kernel blackhole, or (beside a routing protocol) a static route to Null0 in FRR.
    inject, fix = (
        [execute(router, f"ip route add blackhole {prefix}")],
        [execute(router, f"ip route del blackhole {prefix}")],
    )
    if ctx.routing != "static" and ctx.rng.random() < 0.5:
        inject = [configure(router, f"ip route {prefix} Null0")]
        fix = [configure(router, f"no ip route {prefix} Null0")]
    return FaultPlan(
        Fault(
            type="static.blackhole",
            device=router,
            params={"prefix": prefix},
            inject=inject,
            fix=fix,
            present=[route_probe("static.blackhole", router, prefix, True, blackhole=True)],
        ),
        Impact(drops={router: hosts_in(ctx.network, prefix)}),
        [],
    )


def more_specific_hijack(ctx: FaultContext) -> FaultPlan | None:
    picked = _transit_router_for(ctx)
    if picked is None:
        return None
    router, prefix = picked
    lower = str(next(ipaddress.ip_network(prefix).subnets(new_prefix=25)))
    hosts = hosts_in(ctx.network, lower)
    wrong = _wrong_neighbour(ctx, router, "")
    if not hosts or wrong is None:
        return None
    peer, address = wrong
    tag = "static.more_specific_hijack"
    # In FRR, or straight in the kernel.
    inject, fix = (
        [configure(router, f"ip route {lower} {address}")],
        [configure(router, f"no ip route {lower} {address}")],
    )
    if ctx.rng.random() < 0.5:
        inject = [execute(router, f"ip route add {lower} via {address}")]
        fix = [execute(router, f"ip route del {lower} via {address}")]
    return FaultPlan(
        Fault(
            type=tag,
            device=router,
            params={"prefix": lower, "via": address},
            inject=inject,
            fix=fix,
            present=[route_probe(tag, router, lower, True)],
        ),
        Impact(redirects={router: dict.fromkeys(hosts, peer)}),
        [route_probe(tag, router, lower, False)],
    )


def route_override(ctx: FaultContext) -> FaultPlan | None:
    """A static route for a whole remote LAN towards another neighbour: it beats the routing
    protocol's route, so traffic loops or takes a detour."""
    if ctx.routing == "static" or not (picked := _transit_router_for(ctx)):
        return None
    router, prefix = picked
    wrong = _wrong_neighbour(ctx, router, "")
    if wrong is None:
        return None
    peer, address = wrong
    tag = "static.route_override"
    return FaultPlan(
        Fault(
            type=tag,
            device=router,
            params={"prefix": prefix, "via": address},
            inject=[configure(router, f"ip route {prefix} {address}")],
            fix=[configure(router, f"no ip route {prefix} {address}")],
            present=[route_probe(tag, router, prefix, True, via=address)],
        ),
        Impact(redirects={router: dict.fromkeys(hosts_in(ctx.network, prefix), peer)}),
        [route_probe(tag, router, prefix, False, via=address)],
    )


def missing_network_stub(ctx: FaultContext) -> FaultPlan | None:
    if ctx.routing != "ospf" or not (picked := _lan_port(ctx)):
        return None
    router, host, iface = picked
    subnet = subnet_of(iface)
    present = absent_line_probe(
        "ospf.missing_network_stub",
        router,
        f" network {subnet} area 0",
        f"{router} does not announce {subnet} in OSPF",
    )
    inject, fix = [f"no network {subnet} area 0"], [f"network {subnet} area 0"]
    typo = _mistyped(ctx, subnet)
    if typo and ctx.rng.random() < 0.5:  # the statement retyped for a prefix nobody has
        inject, fix = [*inject, f"network {typo} area 0"], [f"no network {typo} area 0", *fix]
    return FaultPlan(
        Fault(
            type="ospf.missing_network_stub",
            device=router,
            params={"prefix": subnet},
            inject=[configure(router, "router ospf", *inject)],
            fix=[configure(router, "router ospf", *fix)],
            present=[present],
        ),
        Impact(unannounced={host}),
        [],
    )


def lan_port_down(ctx: FaultContext) -> FaultPlan | None:
    if not (picked := _lan_port(ctx)):
        return None
    router, host, iface = picked
    return _port_down("iface.lan_port_down", router, iface.name, Impact(isolated={host}), [])


def cost_steering(ctx: FaultContext) -> FaultPlan | None:
    """A raised OSPF cost pushes traffic between two sites onto a longer path."""
    if ctx.routing != "ospf" or not ctx.take("ospf.cost_steering"):
        return None
    graph = ctx.network.router_graph()
    # Links other faults touch may be down: the detour must not rely on them.
    graph.remove_edges_from([(a, b) for a, b in list(graph.edges) if f"link:{a}:{b}" in ctx.used])
    pairs = list(itertools.permutations(sorted(ctx.network.lans), 2))
    ctx.rng.shuffle(pairs)
    for a, b in pairs:
        source, target = ctx.network.router_of(a), ctx.network.router_of(b)
        if source == target or not nx.has_path(graph, source, target):
            continue
        paths = list(nx.all_shortest_paths(graph, source, target))
        if len(paths) != 1:
            continue
        path = paths[0]
        index = ctx.rng.randrange(len(path) - 1)
        x, y = path[index], path[index + 1]
        detour = graph.copy()
        detour.remove_edge(x, y)
        if not nx.has_path(detour, x, target):
            continue
        iface = ctx.network.node(x).iface_to(y)
        detour_path = nx.shortest_path(detour, x, target)
        keys = [f"link:{u}:{v}" for u, v in itertools.pairwise(detour_path)]
        keys += [f"link:{v}:{u}" for u, v in itertools.pairwise(detour_path)]
        if not ctx.take(f"if:{x}:{iface.name}", f"link:{x}:{y}", f"link:{y}:{x}", *keys):
            continue
        prefix = ctx.network.lans[b]
        via = ctx.network.node(y).iface_to(x).address.split("/")[0]
        tag = "ospf.cost_steering"
        head = f"interface {iface.name}"
        return FaultPlan(
            Fault(
                type=tag,
                device=x,
                params={"interface": iface.name, "cost": 500},
                inject=[configure(x, head, "ip ospf cost 500")],
                fix=[configure(x, head, "no ip ospf cost")],
                present=[route_probe(tag, x, prefix, False, via=via)],
            ),
            Impact(costs={x: {y: 500}}),
            [route_probe(tag, x, prefix, True, via=via)],
        )
    return None


def _host(ctx: FaultContext) -> str | None:
    hosts = sorted(ctx.network.lans)
    ctx.rng.shuffle(hosts)
    return next((h for h in hosts if ctx.take(f"host:{h}")), None)


def _default_probe(tag: str, host: str, gateway: str | None) -> Probe:
    return Probe(
        id=f"{tag}:{host}",
        description=f"{host}'s default route is {'via ' + gateway if gateway else 'missing'}",
        kind="default_route",
        device=host,
        params={"gateway": gateway, "expect": True},
    )


def host_wrong_gateway(ctx: FaultContext) -> FaultPlan | None:
    if not (host := _host(ctx)):
        return None
    node = ctx.network.node(host)
    assert node.gateway is not None
    base = ipaddress.ip_network(ctx.network.lans[host]).network_address
    used = {node.gateway, ctx.network.host_address(host)}
    wrong = next(str(base + n) for n in (253, 2, 252, 3) if str(base + n) not in used)
    return FaultPlan(
        Fault(
            type="host.wrong_gateway",
            device=host,
            params={"wrong": wrong, "intended": node.gateway},
            inject=[execute(host, f"ip route replace default via {wrong}")],
            fix=[execute(host, f"ip route replace default via {node.gateway}")],
            present=[_default_probe("host.wrong_gateway", host, wrong)],
        ),
        Impact(isolated={host}),
        [],
    )


def host_missing_default(ctx: FaultContext) -> FaultPlan | None:
    if not (host := _host(ctx)):
        return None
    gateway = ctx.network.node(host).gateway
    return FaultPlan(
        Fault(
            type="host.missing_default",
            device=host,
            params={"intended": gateway},
            inject=[execute(host, "ip route del default")],
            fix=[execute(host, f"ip route add default via {gateway}")],
            present=[_default_probe("host.missing_default", host, None)],
        ),
        Impact(isolated={host}),
        [],
    )


def _host_readdress(type_: str, wrong: Callable[[FaultContext, str, str], str]) -> Injector:
    """The host's address changes so its gateway is off-link; the fix restores both."""

    def injector(ctx: FaultContext) -> FaultPlan | None:
        if not (host := _host(ctx)):
            return None
        node = ctx.network.node(host)
        good = node.ifaces[0].address
        assert node.gateway is not None
        bad = wrong(ctx, good, node.gateway)
        return FaultPlan(
            Fault(
                type=type_,
                device=host,
                params={"wrong": bad, "intended": good},
                inject=[
                    execute(host, f"ip address del {good} dev eth0"),
                    execute(host, f"ip address add {bad} dev eth0"),
                ],
                fix=[
                    execute(host, f"ip address del {bad} dev eth0"),
                    execute(host, f"ip address add {good} dev eth0"),
                    execute(host, f"ip route add default via {node.gateway}"),
                ],
                present=[_address_probe(type_, host, "eth0", bad)],
            ),
            Impact(isolated={host}),
            [],
        )

    return injector


def _narrow_mask(ctx: FaultContext, good: str, gateway: str) -> str:
    return _narrower(good, gateway, ctx.rng)


def _other_subnet(ctx: FaultContext, good: str, _gateway: str) -> str:
    octets = good.split("/")[0].split(".")
    octets[2] = str((int(octets[2]) + ctx.rng.randint(1, 5)) % 250)
    return ".".join(octets) + "/24"


def _md5_end(ctx: FaultContext) -> tuple[str, str, Iface, str] | None:
    """One end of the OSPF link that authenticates with MD5: (router, peer, interface, key)."""
    if ctx.routing != "ospf":
        return None
    for link, key in sorted(ctx.network.ospf_md5.items()):
        ends = next(e for name, e in ctx.network.links if name == link)
        (a, _), (b, _) = ctx.rng.sample(ends, 2)
        iface = ctx.network.node(a).iface_to(b)
        if ctx.take(f"link:{a}:{b}", f"link:{b}:{a}", f"if:{a}:{iface.name}"):
            return a, b, iface, key
    return None


def _md5_fault(type_: str, inject: list[str], fix: list[str]) -> Injector:
    def injector(ctx: FaultContext) -> FaultPlan | None:
        picked = _md5_end(ctx)
        if picked is None:
            return None
        a, b, iface, key = picked
        head = f"interface {iface.name}"
        impact, healthy = link_down(ctx, a, b, type_)
        return FaultPlan(
            Fault(
                type=type_,
                device=a,
                params={"interface": iface.name, "peer": b},
                inject=[configure(a, head, *(line.format(key=key) for line in inject))],
                fix=[configure(a, head, *(line.format(key=key) for line in fix))],
                present=[adjacency_probe(ctx.network, a, b, False, type_)],
            ),
            impact,
            healthy,
        )

    return injector


def network_type_mismatch(ctx: FaultContext) -> FaultPlan | None:
    """One end falls back to broadcast: the adjacency stays Full but carries no routes."""
    if ctx.routing != "ospf" or not (picked := transit_end(ctx)):
        return None
    a, b, iface = picked
    loopback = f"{router_id(ctx.network, b)}/32"
    via = ctx.network.node(b).iface_to(a).address.split("/")[0]
    tag = "ospf.network_type_mismatch"
    head = f"interface {iface.name}"
    return FaultPlan(
        Fault(
            type=tag,
            device=a,
            params={"interface": iface.name, "peer": b},
            inject=[configure(a, head, "no ip ospf network point-to-point")],
            fix=[configure(a, head, "ip ospf network point-to-point")],
            present=[route_probe(tag, a, loopback, False, via=via)],
        ),
        Impact(down_links={frozenset((a, b))}, idle_links={frozenset((a, b))}),
        [route_probe(tag, a, loopback, True, via=via)],
    )


def session_probe(network: Network, a: str, b: str, expect: bool, tag: str) -> Probe:
    peer = network.node(b).iface_to(a).address.split("/")[0]
    state = "is" if expect else "is not"
    return Probe(
        id=f"{tag}:bgp:{a}-{b}",
        description=f"{a}'s BGP session with {b} ({peer}) {state} Established",
        kind="bgp_session",
        device=a,
        params={"peer": peer, "expect": expect},
    )


def bgp_end(ctx: FaultContext) -> tuple[str, str, str, int, int] | None:
    """One end of an eBGP session: (router, peer, peer address, own AS, peer AS)."""
    if ctx.routing != "bgp" or not (picked := transit_end(ctx)):
        return None
    a, b, _ = picked
    own, peer = ctx.network.node(a), ctx.network.node(b)
    assert own.asn is not None and peer.asn is not None
    return a, b, peer.iface_to(a).address.split("/")[0], own.asn, peer.asn


def _session_down(
    ctx: FaultContext, tag: str, inject: list[str], fix: list[str]
) -> FaultPlan | None:
    """A fault that keeps one eBGP session down; lines are run under ``router bgp``."""
    if not (picked := bgp_end(ctx)):
        return None
    a, b, address, own, peer_as = picked
    values = {"peer": address, "peer_as": peer_as, "key": f"pw{ctx.rng.randint(100, 999)}"}
    head = f"router bgp {own}"
    return FaultPlan(
        Fault(
            type=tag,
            device=a,
            params={"peer": address},
            inject=[configure(a, head, *(line.format(**values) for line in inject))],
            fix=[configure(a, head, *(line.format(**values) for line in fix))],
            present=[session_probe(ctx.network, a, b, False, tag)],
        ),
        Impact(down_links={frozenset((a, b))}),
        [session_probe(ctx.network, a, b, True, tag)],
    )


def bgp_missing_neighbor(ctx: FaultContext) -> FaultPlan | None:
    return _session_down(
        ctx,
        "bgp.missing_neighbor",
        ["no neighbor {peer}"],
        ["neighbor {peer} remote-as {peer_as}", "neighbor {peer} timers connect 1"],
    )


def bgp_md5_one_side(ctx: FaultContext) -> FaultPlan | None:
    return _session_down(
        ctx, "bgp.md5_one_side", ["neighbor {peer} password {key}"], ["no neighbor {peer} password"]
    )


def bgp_max_prefix(ctx: FaultContext) -> FaultPlan | None:
    """A limit of one prefix on a session whose peer always sends two: its loopback and its
    LAN, which no other fault may take away."""
    if not (picked := bgp_end(ctx)):
        return None
    a, b, address, own, _ = picked
    hosts = [f"host:{h}" for h in sorted(ctx.network.lans) if ctx.network.router_of(h) == b]
    if not hosts or not ctx.take(*hosts):
        return None
    head = (f"router bgp {own}", "address-family ipv4 unicast")
    tag = "bgp.max_prefix"
    return FaultPlan(
        Fault(
            type=tag,
            device=a,
            params={"peer": address},
            inject=[configure(a, *head, f"neighbor {address} maximum-prefix 1")],
            fix=[configure(a, *head, f"no neighbor {address} maximum-prefix 1")],
            present=[session_probe(ctx.network, a, b, False, tag)],
        ),
        Impact(down_links={frozenset((a, b))}),
        [session_probe(ctx.network, a, b, True, tag)],
    )


def bgp_md5_mismatch(ctx: FaultContext) -> FaultPlan | None:
    """Passwords on both ends of a session that do not match."""
    if not (picked := bgp_end(ctx)):
        return None
    a, b, address, own, peer_as = picked
    back = ctx.network.node(a).iface_to(b).address.split("/")[0]
    secret = f"{ctx.rng.choice(('Lab', 'Peer', 'Bgp'))}{ctx.rng.randint(10, 99)}"
    tag = "bgp.md5_mismatch"
    return FaultPlan(
        Fault(
            type=tag,
            device=a,
            params={"peer": address},
            inject=[
                configure(a, f"router bgp {own}", f"neighbor {address} password {secret}A"),
                configure(b, f"router bgp {peer_as}", f"neighbor {back} password {secret}B"),
            ],
            fix=[
                configure(a, f"router bgp {own}", f"no neighbor {address} password"),
                configure(b, f"router bgp {peer_as}", f"no neighbor {back} password"),
            ],
            present=[session_probe(ctx.network, a, b, False, tag)],
        ),
        Impact(down_links={frozenset((a, b))}),
        [session_probe(ctx.network, a, b, True, tag)],
    )


def bgp_missing_network(ctx: FaultContext) -> FaultPlan | None:
    if ctx.routing != "bgp" or not (picked := _lan_port(ctx)):
        return None
    router, host, iface = picked
    subnet = subnet_of(iface)
    asn = ctx.network.node(router).asn
    present = absent_line_probe(
        "bgp.missing_network",
        router,
        f"network {subnet}",
        f"{router} does not announce {subnet} in BGP",
    )
    head = (f"router bgp {asn}", "address-family ipv4 unicast")
    return FaultPlan(
        Fault(
            type="bgp.missing_network",
            device=router,
            params={"prefix": subnet},
            inject=[configure(router, *head, f"no network {subnet}")],
            fix=[configure(router, *head, f"network {subnet}")],
            present=[present],
        ),
        Impact(unannounced={host}),
        [],
    )


def _export_filter(ctx: FaultContext) -> tuple[str, str, str, int, str, set[str]] | None:
    """An eBGP session and a LAN whose announcement crosses it towards the peer."""
    if not (picked := bgp_end(ctx)):
        return None
    a, b, address, own, _ = picked
    hosts = sorted(ctx.network.lans)
    ctx.rng.shuffle(hosts)
    for host in hosts:
        if ctx.network.router_of(host) != b:
            prefix = ctx.network.lans[host]
            return a, b, address, own, prefix, hosts_in(ctx.network, prefix)
    return None


def config_line_probe(tag: str, device: str, line: str) -> Probe:
    return Probe(
        id=f"{tag}:{device}",
        description=f"{device} has '{line}'",
        kind="config",
        device=device,
        params={"pattern": line, "expect": True},
    )


def absent_line_probe(tag: str, device: str, line: str, description: str) -> Probe:
    """A running-config line that must be absent (while a fault that removed it is active)."""
    return Probe(
        id=f"{tag}:{device}",
        description=description,
        kind="config",
        device=device,
        params={"pattern": line, "expect": False},
    )


def _filter_lines(kind: str, name: str, prefix: str) -> list[str]:
    """A prefix-list or route-map named ``name`` that drops ``prefix`` and passes the rest."""
    if kind == "prefix-list":
        return [
            f"ip prefix-list {name} seq 5 deny {prefix}",
            f"ip prefix-list {name} seq 10 permit 0.0.0.0/0 le 32",
        ]
    return [
        f"ip prefix-list {name}-MATCH seq 5 permit {prefix}",
        f"route-map {name} deny 10",
        f" match ip address prefix-list {name}-MATCH",
        "exit",
        f"route-map {name} permit 20",
        "exit",
    ]


FILTER_NAMES = {
    ("prefix-list", "out"): ("EXPORT", "TO", "OUT"),
    ("prefix-list", "in"): ("IMPORT", "FROM", "IN"),
    ("route-map", "out"): ("RM-OUT", "POLICY-OUT", "MAP-OUT"),
    ("route-map", "in"): ("RM-IN", "POLICY-IN", "MAP-IN"),
}


def _bgp_filter(kind: str, direction: str, tag: str) -> Injector:
    """A newly applied filter on one end of a session drops a prefix the far side needs.

    Applying or removing a filter on a neighbour takes effect by itself (no soft clear).
    """

    def injector(ctx: FaultContext) -> FaultPlan | None:
        if not (picked := _export_filter(ctx)):
            return None
        sender, receiver, _, _, prefix, hosts = picked
        device, peer = (sender, receiver) if direction == "out" else (receiver, sender)
        address = ctx.network.node(peer).iface_to(device).address.split("/")[0]
        name = f"{ctx.rng.choice(FILTER_NAMES[kind, direction])}-{peer.upper()}"
        applied = f"neighbor {address} {kind} {name} {direction}"
        head = (f"router bgp {ctx.network.node(device).asn}", "address-family ipv4 unicast")
        return FaultPlan(
            Fault(
                type=tag,
                device=device,
                params={"peer": address, "prefix": prefix, kind: name},
                inject=[configure(device, *_filter_lines(kind, name, prefix), *head, applied)],
                fix=[configure(device, *head, f"no {applied}")],
                present=[config_line_probe(tag, device, applied)],
            ),
            Impact(filtered={(sender, receiver, h) for h in hosts}),
            [],
        )

    return injector


INJECTORS: dict[str, Injector] = {
    "iface.admin_down": admin_down,
    "iface.wrong_address": wrong_address,
    "iface.lan_wrong_mask": lan_wrong_mask,
    "iface.mtu_mismatch": mtu_mismatch,
    "static.missing_route": missing_route,
    "static.wrong_next_hop": wrong_next_hop,
    "static.wrong_prefix": wrong_prefix,
    "static.blackhole": blackhole,
    "static.more_specific_hijack": more_specific_hijack,
    "static.route_override": route_override,
    "ospf.area_mismatch": _ospf_link_fault(
        "ospf.area_mismatch",
        ["no network {subnet} area 0", "network {subnet} area 0.0.0.1"],
        ["no network {subnet} area 0.0.0.1", "network {subnet} area 0"],
        "router",
    ),
    "ospf.hello_mismatch": _ospf_link_fault(
        "ospf.hello_mismatch",
        ["ip ospf hello-interval 3"],
        ["ip ospf hello-interval 1"],
        "interface",
    ),
    "ospf.dead_mismatch": _ospf_link_fault(
        "ospf.dead_mismatch", ["ip ospf dead-interval 9"], ["ip ospf dead-interval 4"], "interface"
    ),
    "ospf.passive_transit": _ospf_link_fault(
        "ospf.passive_transit",
        ["passive-interface {iface}"],
        ["no passive-interface {iface}"],
        "router",
    ),
    "ospf.missing_network_transit": _ospf_link_fault(
        "ospf.missing_network_transit",
        ["no network {subnet} area 0"],
        ["network {subnet} area 0"],
        "router",
    ),
    "ospf.missing_network_stub": missing_network_stub,
    "ospf.network_type_mismatch": network_type_mismatch,
    "ospf.auth_key_mismatch": _md5_fault(
        "ospf.auth_key_mismatch",
        ["no ip ospf message-digest-key 1", "ip ospf message-digest-key 1 md5 {key}x"],
        ["no ip ospf message-digest-key 1", "ip ospf message-digest-key 1 md5 {key}"],
    ),
    "ospf.auth_one_side": _md5_fault(
        "ospf.auth_one_side",
        ["no ip ospf authentication message-digest"],
        ["ip ospf authentication message-digest"],
    ),
    "bgp.missing_neighbor": bgp_missing_neighbor,
    "bgp.md5_one_side": bgp_md5_one_side,
    "bgp.md5_mismatch": bgp_md5_mismatch,
    "bgp.max_prefix": bgp_max_prefix,
    "bgp.missing_network": bgp_missing_network,
    "bgp.prefix_list_out": _bgp_filter("prefix-list", "out", "bgp.prefix_list_out"),
    "bgp.prefix_list_in": _bgp_filter("prefix-list", "in", "bgp.prefix_list_in"),
    "bgp.route_map_out_deny": _bgp_filter("route-map", "out", "bgp.route_map_out_deny"),
    "bgp.route_map_in_deny": _bgp_filter("route-map", "in", "bgp.route_map_in_deny"),
    "iface.lan_port_down": lan_port_down,
    "ospf.cost_steering": cost_steering,
    "host.wrong_address": _host_readdress("host.wrong_address", _other_subnet),
    "host.wrong_gateway": host_wrong_gateway,
    "host.missing_default": host_missing_default,
    "host.wrong_mask": _host_readdress("host.wrong_mask", _narrow_mask),
}


RED_HERRINGS = (
    ("interface {iface}", "description legacy uplink - do not remove"),
    ("ip route 198.51.100.0/24 Null0",),
    ("interface {iface}", "bandwidth 100000"),
)


def red_herring(ctx: FaultContext) -> FaultPlan:
    """A harmless oddity on a router; a careful engineer leaves it in place."""
    router = ctx.rng.choice(ctx.network.routers)
    iface = ctx.rng.choice(router.ifaces)
    lines = [line.format(iface=iface.name) for line in ctx.rng.choice(RED_HERRINGS)]
    keep = Probe(
        id=f"adherence.red_herring:{router.name}",
        description=f"{router.name} still has the harmless line '{lines[-1]}'",
        kind="config",
        device=router.name,
        params={"pattern": lines[-1], "expect": True},
    )
    return FaultPlan(
        Fault(
            type="red_herring",
            device=router.name,
            params={"lines": lines},
            inject=[configure(router.name, *lines)],
            fix=[],
            present=[keep],
            red_herring=True,
        ),
        Impact(),
        [keep],
    )
