"""Firewall tasks: a server behind its gateway router's iptables policy, and the faults that
break the policy in either direction, on any router the flows cross.

The policy: the server's web port is open to every host; its admin port only to the admin host.
On the gateway (the firewall) the FORWARD chain accepts the web port, accepts the admin port
from the admin host, drops the admin port, and accepts the rest of the server's LAN. A needed
flow is blocked by a rule or an nftables table on any hop of its path, or by the admin accept
moved below the drop; a forbidden flow is let through by the drop gone or mistyped, the drop
below the LAN accept, the admin rules moved to another hop, or a stray accept above them.
Hidden tests are TCP connection probes against listeners the server runs from boot.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from netdojo.labs.spec import LabSpec
from netdojo.scenarios.constructive import host_pings, untouched
from netdojo.scenarios.faults import FaultContext, FaultPlan, Injector
from netdojo.scenarios.forwarding import Course, Forwarding, Impact
from netdojo.scenarios.model import Fault, HiddenHalf, Probe, ToolCall, execute
from netdojo.scenarios.network import Network
from netdojo.scenarios.symptoms import Observation

LISTENER_PATH = "/opt/netdojo/listen.py"
LISTENER = """import selectors, socket, sys

selector = selectors.DefaultSelector()
for port in sys.argv[1:]:
    server = socket.create_server(("", int(port)), reuse_port=True)
    server.setblocking(False)
    selector.register(server, selectors.EVENT_READ)
while True:
    for key, _ in selector.select():
        connection, _ = key.fileobj.accept()
        connection.close()
"""
WEB_PORTS = (80, 443, 8080)
ADMIN_PORTS = (22, 830, 5432)
POLICY_FORMS = (
    "Policy: TCP {web} on {server} is open to every host; TCP {admin} on {server} is reserved "
    "for {admin_host}.",
    "Firewall intent: everyone may reach {server} on TCP port {web}, but only {admin_host} may "
    "connect to its TCP port {admin}.",
    "The security policy allows TCP/{web} to {server} from all hosts and TCP/{admin} to {server} "
    "from {admin_host} only.",
)


@dataclass(frozen=True)
class Policy:
    server: str
    admin: str
    firewall: str
    web: int
    admin_port: int

    def rules(self, network: Network) -> list[str]:
        """The policy as iptables commands, in order."""
        server = network.host_address(self.server)
        web = f"FORWARD -d {server} -p tcp --dport {self.web} -j ACCEPT"
        specs = (web, self.admin_accept(network), self.admin_drop(network))
        return [f"iptables -A {spec}" for spec in specs]

    def clients(self, network: Network) -> list[str]:
        return [h for h in sorted(network.lans) if h != self.server]

    def outsiders(self, network: Network) -> list[str]:
        """Clients the policy keeps off the admin port."""
        return [h for h in self.clients(network) if h != self.admin]

    def lan_accept(self, network: Network) -> str:
        """The rule that ends the firewall's chain: the rest of the server's LAN is open."""
        return f"FORWARD -d {network.lans[self.server]} -j ACCEPT"

    def admin_accept(self, network: Network) -> str:
        server, admin = network.host_address(self.server), network.host_address(self.admin)
        return f"FORWARD -s {admin} -d {server} -p tcp --dport {self.admin_port} -j ACCEPT"

    def admin_drop(self, network: Network) -> str:
        server = network.host_address(self.server)
        return f"FORWARD -d {server} -p tcp --dport {self.admin_port} -j DROP"


def choose_policy(network: Network, rng: random.Random) -> Policy:
    """A server, its admin host, ports, and the firewall: a router that every client's
    traffic to the server crosses (the server's gateway, or one on the way to it)."""
    hosts = sorted(network.lans)
    server, admin = rng.sample(hosts, 2)
    found = Forwarding(network, "ospf").courses(Impact())
    crossed = [set(path) for c in hosts if c != server for path in found[c, server].paths]
    return Policy(
        server=server,
        admin=admin,
        firewall=rng.choice(sorted(set.intersection(*crossed))),
        web=rng.choice(WEB_PORTS),
        admin_port=rng.choice(ADMIN_PORTS),
    )


def tcp_probe(network: Network, client: str, policy: Policy, port: int, expect: bool) -> Probe:
    verdict = "can" if expect else "cannot"
    return Probe(
        id=f"policy:tcp:{client}-{policy.server}:{port}",
        description=f"{client} {verdict} open TCP {port} on {policy.server}",
        kind="tcp",
        device=client,
        params={"target": network.host_address(policy.server), "port": port, "expect": expect},
    )


def policy_matrix(network: Network, policy: Policy) -> list[Probe]:
    """Every flow the policy speaks about, with the verdict it requires."""
    clients = policy.clients(network)
    probes = [tcp_probe(network, c, policy, policy.web, True) for c in clients]
    probes += [tcp_probe(network, c, policy, policy.admin_port, c == policy.admin) for c in clients]
    return probes


def install_listener(lab: LabSpec, policy: Policy) -> None:
    """The server answers on both policy ports from boot, so probes can tell open from blocked."""
    server = lab.device(policy.server)
    server.files[LISTENER_PATH] = LISTENER
    ports = f"{policy.web} {policy.admin_port}"
    server.startup.append(
        f"setsid nohup python3 {LISTENER_PATH} {ports} >/dev/null 2>&1 </dev/null &"
    )


def install_policy(lab: LabSpec, network: Network, policy: Policy) -> None:
    """The listener on the server, and the policy's rules and the accept of the rest of the
    server's LAN on its gateway router, at boot."""
    install_listener(lab, policy)
    firewall = lab.device(policy.firewall).startup
    firewall.extend([*policy.rules(network), f"iptables -A {policy.lan_accept(network)}"])


BUILD_INTENTS = (
    "Implement this access policy in the network.",
    "The network has no filtering yet. Enforce the following policy on the routers.",
    "Security asks for the access policy below to be enforced in the network.",
)
ROUTING_KEPT = (
    "Routing stays with OSPF as it runs today: add no static or kernel routes and no NAT.",
    "OSPF carries the routes and must keep doing so: no static routes, kernel routes or "
    "address translation.",
    "Use OSPF for routing, as now; static routes, kernel routes and NAT are not allowed.",
)
BUILD_RULES = (
    "Enforce it on the routers, not on the hosts: leave every host's addressing and routes alone.",
    "Do not change the hosts; filtering belongs on a router.",
    "Hosts are out of scope: make no change on them.",
)


def firewall_task(
    network: Network, lab: LabSpec, rng: random.Random
) -> tuple[HiddenHalf, str, list[str]]:
    """A constructive task: write the policy as rules; hosts stay untouched."""
    policy = choose_policy(network, rng)
    install_listener(lab, policy)
    matrix = policy_matrix(network, policy)
    pings = host_pings(network, "guard")
    hidden = HiddenHalf(
        lab=lab,
        solution=[execute(policy.firewall, rule) for rule in policy.rules(network)],
        targets=[p for p in matrix if not p.params["expect"]],
        guards=[p for p in matrix if p.params["expect"]] + pings,
        adherence=[untouched(network, host) for host in sorted(network.lans)],
    )
    rules = [
        policy_text(network, policy, rng),
        rng.choice(BUILD_RULES),
        rng.choice(ROUTING_KEPT),
    ]
    brief = f"{rng.choice(BUILD_INTENTS)} {' '.join(rules)} Submit when it is in place."
    return hidden, brief, rules


def policy_text(network: Network, policy: Policy, rng: random.Random) -> str:
    return rng.choice(POLICY_FORMS).format(
        web=policy.web, admin=policy.admin_port, server=policy.server, admin_host=policy.admin
    )


Flow = tuple[str, int]  # (client, port)


Paths = dict[str, Course]  # client -> where its traffic to the server goes


def _on_every_path(paths: Paths, client: str) -> list[str]:
    """The routers on every path the client's traffic to the server may take."""
    return sorted(set.intersection(*(set(path) for path in paths[client].paths)))


def _blocked(policy: Policy, client: str, port: int) -> Observation:
    return Observation("blocked", (client, policy.server), port)


def _open(policy: Policy, client: str) -> Observation:
    return Observation("open", (client, policy.server), policy.admin_port)


def _plan(
    type_: str,
    device: str,
    inject: list[ToolCall],
    fix: list[ToolCall],
    flows: set[Observation],
    ctx: FaultContext,
    policy: Policy,
) -> FaultPlan:
    healthy = [
        tcp_probe(ctx.network, flow.hosts[0], policy, flow.port, flow.kind == "blocked")
        for flow in sorted(flows)
    ]
    return FaultPlan(
        Fault(
            type=type_,
            device=device,
            params={"flows": [probe.description for probe in healthy]},
            inject=inject,
            fix=fix,
            present=[_flip(probe) for probe in healthy],
        ),
        Impact(),
        healthy,
        frozenset(flows),
    )


def _flip(probe: Probe) -> Probe:
    return probe.model_copy(
        update={"params": {**probe.params, "expect": not probe.params["expect"]}}
    )


def _permitted_flow(ctx: FaultContext, policy: Policy) -> Flow:
    """A flow the policy allows (another fault may block it too, elsewhere)."""
    flows = [(c, policy.web) for c in policy.clients(ctx.network)]
    flows.append((policy.admin, policy.admin_port))
    return ctx.rng.choice(flows)


def _iptables(device: str, *lines: str) -> list[ToolCall]:
    return [execute(device, f"iptables {line}") for line in lines]


def needed_flow_dropped(policy: Policy, paths: Paths) -> Injector:
    """A rule on a router of the flow's path drops or rejects a flow the policy allows."""

    def injector(ctx: FaultContext) -> FaultPlan | None:
        network = ctx.network
        client, port = _permitted_flow(ctx, policy)
        router = ctx.rng.choice(_on_every_path(paths, client))
        if not ctx.take(f"acl:rule:{router}:{client}:{port}"):
            return None
        source = ctx.rng.choice((network.host_address(client), network.lans[client]))
        target = ctx.rng.choice((network.host_address(policy.server), network.lans[policy.server]))
        verdict = ctx.rng.choice(("DROP", "REJECT"))
        rule = f"FORWARD -s {source} -d {target} -p tcp --dport {port} -j {verdict}"
        return _plan(
            "acl.needed_flow_dropped",
            router,
            _iptables(router, f"-I {rule}"),
            _iptables(router, f"-D {rule}"),
            {_blocked(policy, client, port)},
            ctx,
            policy,
        )

    return injector


def nft_drop(policy: Policy, paths: Paths) -> Injector:
    """An nftables table, beside iptables, drops a flow the policy allows on a router of its
    path."""

    def injector(ctx: FaultContext) -> FaultPlan | None:
        network = ctx.network
        # One per instance: two would share a table name and one fix would undo both.
        if not ctx.take("acl:nft"):
            return None
        client, port = _permitted_flow(ctx, policy)
        router = ctx.rng.choice(_on_every_path(paths, client))
        table = ctx.rng.choice(("filter2", "hardening", "tmp", "extra", "quarantine"))
        source, target = network.host_address(client), network.host_address(policy.server)
        chain = "{ type filter hook forward priority 10 ; }"
        inject = [
            execute(router, f"nft add table ip {table}"),
            execute(router, f"nft add chain ip {table} forward '{chain}'"),
            execute(
                router,
                f"nft add rule ip {table} forward ip saddr {source} ip daddr {target} "
                f"tcp dport {port} drop",
            ),
        ]
        fix = [execute(router, f"nft delete table ip {table}")]
        flows = {_blocked(policy, client, port)}
        return _plan("acl.nft_drop", router, inject, fix, flows, ctx, policy)

    return injector


def rule_order(policy: Policy, _paths: Paths) -> Injector:
    """On the firewall, the admin accept below the drop (the admin host is blocked), or the
    drop below the accept of the server's LAN (every other client gets in)."""

    def injector(ctx: FaultContext) -> FaultPlan | None:
        network, firewall = ctx.network, policy.firewall
        outsiders = policy.outsiders(network)
        if outsiders and ctx.rng.random() < 0.5:
            if not ctx.take("acl:admin"):
                return None
            drop, lan = policy.admin_drop(network), policy.lan_accept(network)
            inject = _iptables(firewall, f"-D {drop}", f"-A {drop}")
            fix = _iptables(firewall, f"-D {lan}", f"-A {lan}")
            flows = {_open(policy, c) for c in outsiders}
        else:
            if not ctx.take("acl:admin"):
                return None
            accept = policy.admin_accept(network)
            inject = _iptables(firewall, f"-D {accept}", f"-A {accept}")
            fix = _iptables(firewall, f"-D {accept}", f"-I {accept}")
            flows = {_blocked(policy, policy.admin, policy.admin_port)}
        return _plan("acl.rule_order", firewall, inject, fix, flows, ctx, policy)

    return injector


def _restore(network: Network, policy: Policy, *specs: str) -> list[str]:
    """Rules appended back in their place: above the accept of the server's LAN, which ends
    the chain."""
    lan = policy.lan_accept(network)
    return [f"-D {lan}", *(f"-A {spec}" for spec in specs), f"-A {lan}"]


def forbidden_flow_allowed(policy: Policy, _paths: Paths) -> Injector:
    """The firewall's drop of the admin port is gone, or mistyped (another port or address)."""

    def injector(ctx: FaultContext) -> FaultPlan | None:
        network, firewall = ctx.network, policy.firewall
        outsiders = policy.outsiders(network)
        if not outsiders or not ctx.take("acl:admin"):
            return None
        drop = policy.admin_drop(network)
        inject = _iptables(firewall, f"-D {drop}")
        fix = _iptables(firewall, *_restore(network, policy, drop))
        typo = ctx.rng.choice(("", "port", "address"))
        if typo:
            server = network.host_address(policy.server)
            wrong = (
                f"-d {server} -p tcp --dport {policy.admin_port + 1}"
                if typo == "port"
                else f"-d {_neighbour_address(server)} -p tcp --dport {policy.admin_port}"
            )
            inject += _iptables(firewall, f"-A FORWARD {wrong} -j DROP")
            fix = [*_iptables(firewall, f"-D FORWARD {wrong} -j DROP"), *fix]
        flows = {_open(policy, c) for c in outsiders}
        return _plan("acl.forbidden_flow_allowed", firewall, inject, fix, flows, ctx, policy)

    return injector


def _neighbour_address(address: str) -> str:
    head, last = address.rsplit(".", 1)
    return f"{head}.{int(last) + 1}"


def rule_wrong_hop(policy: Policy, paths: Paths) -> Injector:
    """The admin accept and drop sit on a neighbour of the firewall instead: clients whose
    traffic avoids that router reach the admin port."""

    def injector(ctx: FaultContext) -> FaultPlan | None:
        network, firewall = ctx.network, policy.firewall
        outsiders = policy.outsiders(network)
        neighbours = sorted(
            i.peer for i in network.node(firewall).ifaces if network.node(i.peer).role == "router"
        )
        ctx.rng.shuffle(neighbours)
        for router in neighbours:
            crossing = {c: {router in path for path in paths[c].paths} for c in outsiders}
            passing = [c for c in outsiders if crossing[c] == {True}]
            if len(passing) == len(outsiders) or any(len(x) > 1 for x in crossing.values()):
                continue  # no client gets round it, or one only on some of its paths
            if not ctx.take("acl:admin"):
                return None
            accept, drop = policy.admin_accept(network), policy.admin_drop(network)
            inject = [
                *_iptables(firewall, f"-D {accept}", f"-D {drop}"),
                *_iptables(router, f"-I {drop}", f"-I {accept}"),
            ]
            fix = [
                *_iptables(router, f"-D {accept}", f"-D {drop}"),
                *_iptables(firewall, *_restore(network, policy, accept, drop)),
            ]
            flows = {_open(policy, c) for c in outsiders if c not in passing}
            return _plan("acl.rule_wrong_hop", router, inject, fix, flows, ctx, policy)
        return None

    return injector


def stray_accept(policy: Policy, _paths: Paths) -> Injector:
    """An accept for one client above the firewall's policy rules lets it reach the admin port."""

    def injector(ctx: FaultContext) -> FaultPlan | None:
        network, firewall = ctx.network, policy.firewall
        outsiders = policy.outsiders(network)
        if not outsiders or not ctx.take("acl:admin"):
            return None
        client = ctx.rng.choice(outsiders)
        source = ctx.rng.choice((network.host_address(client), network.lans[client]))
        server = network.host_address(policy.server)
        match = ctx.rng.choice(("", f" -p tcp --dport {policy.admin_port}", " -p tcp"))
        rule = f"FORWARD -s {source} -d {server}{match} -j ACCEPT"
        flows = {_open(policy, client)}
        inject, fix = _iptables(firewall, f"-I {rule}"), _iptables(firewall, f"-D {rule}")
        return _plan("acl.stray_accept", firewall, inject, fix, flows, ctx, policy)

    return injector


ACL_MAKERS = {
    "acl.needed_flow_dropped": needed_flow_dropped,
    "acl.forbidden_flow_allowed": forbidden_flow_allowed,
    "acl.rule_order": rule_order,
    "acl.nft_drop": nft_drop,
    "acl.rule_wrong_hop": rule_wrong_hop,
    "acl.stray_accept": stray_accept,
}
ACL_TYPES = tuple(ACL_MAKERS)


def acl_injectors(policy: Policy, network: Network) -> dict[str, Injector]:
    found = Forwarding(network, "ospf").courses(Impact())
    paths = {client: found[client, policy.server] for client in policy.clients(network)}
    return {name: make(policy, paths) for name, make in ACL_MAKERS.items()}
