"""Firewall tasks: a server behind its gateway router's iptables policy, and the faults that
break the policy in either direction (a needed flow dropped, a forbidden flow allowed, rules in
the wrong order).

The policy: the server's web port is open to every host; its admin port only to the admin host.
Hidden tests are TCP connection probes against listeners the server runs from boot.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from netdojo.labs.spec import LabSpec
from netdojo.scenarios.constructive import host_pings, untouched
from netdojo.scenarios.faults import FaultContext, FaultPlan, Injector
from netdojo.scenarios.forwarding import Impact
from netdojo.scenarios.model import Fault, HiddenHalf, Probe, execute
from netdojo.scenarios.network import Network

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
        server = network.host_address(self.server)
        return [
            f"iptables -A FORWARD -d {server} -p tcp --dport {self.web} -j ACCEPT",
            self.admin_accept(network, "-A"),
            self.admin_drop(network, "-A"),
        ]

    def clients(self, network: Network) -> list[str]:
        return [h for h in sorted(network.lans) if h != self.server]

    def web_client(self, ctx: FaultContext) -> str | None:
        """A client whose web flow no other fault touches yet."""
        client = ctx.rng.choice(self.clients(ctx.network))
        return client if ctx.take(f"acl:web:{client}") else None

    def admin_accept(self, network: Network, action: str) -> str:
        server, admin = network.host_address(self.server), network.host_address(self.admin)
        flow = f"-s {admin} -d {server} -p tcp --dport {self.admin_port}"
        return f"iptables {action} FORWARD {flow} -j ACCEPT"

    def admin_drop(self, network: Network, action: str) -> str:
        server = network.host_address(self.server)
        return f"iptables {action} FORWARD -d {server} -p tcp --dport {self.admin_port} -j DROP"


def choose_policy(network: Network, rng: random.Random) -> Policy:
    hosts = sorted(network.lans)
    server, admin = rng.sample(hosts, 2)
    return Policy(
        server=server,
        admin=admin,
        firewall=network.router_of(server),
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
    """The listener on the server and the policy's rules on its gateway router, at boot."""
    install_listener(lab, policy)
    lab.device(policy.firewall).startup.extend(policy.rules(network))


BUILD_INTENTS = (
    "Implement this access policy in the network.",
    "The network has no filtering yet. Enforce the following policy on the routers.",
    "Security asks for the access policy below to be enforced in the network.",
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
    rules = [policy_text(network, policy, rng), rng.choice(BUILD_RULES)]
    brief = f"{rng.choice(BUILD_INTENTS)} {' '.join(rules)} Submit when it is in place."
    return hidden, brief, rules


def policy_text(network: Network, policy: Policy, rng: random.Random) -> str:
    return rng.choice(POLICY_FORMS).format(
        web=policy.web, admin=policy.admin_port, server=policy.server, admin_host=policy.admin
    )


BLOCKED_FORMS = (
    "{client} cannot open TCP port {port} on {server} ({address})",
    "connections from {client} to {server}:{port} time out",
    "{client} reports that TCP/{port} on {server} is unreachable",
)
OPEN_FORMS = (
    "a security scan shows {client} can open TCP port {port} on {server}, against policy",
    "{client} is able to connect to {server} on TCP {port}, which the policy forbids",
    "audit finding: TCP/{port} on {server} ({address}) answers {client}",
)


def _symptom(network: Network, healthy: Probe, rng: random.Random) -> str:
    forms = BLOCKED_FORMS if healthy.params["expect"] else OPEN_FORMS
    server = next(h for h in network.lans if network.host_address(h) == healthy.params["target"])
    return rng.choice(forms).format(
        client=healthy.device,
        server=server,
        port=healthy.params["port"],
        address=healthy.params["target"],
    )


def _plan(
    type_: str,
    device: str,
    inject: list[str],
    fix: list[str],
    healthy: Probe,
    ctx: FaultContext,
    also_healthy: tuple[Probe, ...] = (),
) -> FaultPlan:
    present = _flip(healthy)
    return FaultPlan(
        Fault(
            type=type_,
            device=device,
            params={"flow": healthy.description},
            inject=[execute(device, line) for line in inject],
            fix=[execute(device, line) for line in fix],
            present=[present],
        ),
        Impact(),
        [healthy, *also_healthy],
        _symptom(ctx.network, healthy, ctx.rng),
    )


def _flip(probe: Probe) -> Probe:
    return probe.model_copy(
        update={"params": {**probe.params, "expect": not probe.params["expect"]}}
    )


def needed_flow_dropped(policy: Policy) -> Injector:
    def injector(ctx: FaultContext) -> FaultPlan | None:
        network = ctx.network
        if not (client := policy.web_client(ctx)):
            return None
        router = ctx.rng.choice(sorted({policy.firewall, network.router_of(client)}))
        source, target = network.host_address(client), network.host_address(policy.server)
        rule = f"FORWARD -s {source} -d {target} -p tcp --dport {policy.web} -j DROP"
        healthy = tcp_probe(network, client, policy, policy.web, True)
        return _plan(
            "acl.needed_flow_dropped",
            router,
            [f"iptables -I {rule}"],
            [f"iptables -D {rule}"],
            healthy,
            ctx,
        )

    return injector


def forbidden_flow_allowed(policy: Policy) -> Injector:
    def injector(ctx: FaultContext) -> FaultPlan | None:
        network = ctx.network
        others = [h for h in sorted(network.lans) if h not in (policy.server, policy.admin)]
        if not others or not ctx.take("acl:admin"):
            return None
        client = ctx.rng.choice(others)
        healthy = tcp_probe(network, client, policy, policy.admin_port, False)
        # Without the DROP every non-admin client reaches the admin port, not only the one named.
        rest = tuple(
            tcp_probe(network, other, policy, policy.admin_port, False)
            for other in others
            if other != client
        )
        return _plan(
            "acl.forbidden_flow_allowed",
            policy.firewall,
            [policy.admin_drop(network, "-D")],
            [policy.admin_drop(network, "-A")],
            healthy,
            ctx,
            rest,
        )

    return injector


def rule_order(policy: Policy) -> Injector:
    def injector(ctx: FaultContext) -> FaultPlan | None:
        if not ctx.take("acl:admin"):
            return None
        network = ctx.network
        healthy = tcp_probe(network, policy.admin, policy, policy.admin_port, True)
        return _plan(
            "acl.rule_order",
            policy.firewall,
            [policy.admin_accept(network, "-D"), policy.admin_accept(network, "-A")],
            [policy.admin_accept(network, "-D"), policy.admin_accept(network, "-I")],
            healthy,
            ctx,
        )

    return injector


def nft_drop(policy: Policy) -> Injector:
    """An nftables table, beside the iptables policy, drops a flow the policy allows."""

    def injector(ctx: FaultContext) -> FaultPlan | None:
        network = ctx.network
        # One per instance: two would share a table name and one fix would undo both.
        if not ctx.take("acl:nft") or not (client := policy.web_client(ctx)):
            return None
        table = ctx.rng.choice(("filter2", "hardening", "tmp"))
        source, target = network.host_address(client), network.host_address(policy.server)
        chain = "{ type filter hook forward priority 10 ; }"
        healthy = tcp_probe(network, client, policy, policy.web, True)
        return _plan(
            "acl.nft_drop",
            policy.firewall,
            [
                f"nft add table ip {table}",
                f"nft add chain ip {table} forward '{chain}'",
                f"nft add rule ip {table} forward ip saddr {source} ip daddr {target} "
                f"tcp dport {policy.web} drop",
            ],
            [f"nft delete table ip {table}"],
            healthy,
            ctx,
        )

    return injector


ACL_TYPES = (
    "acl.needed_flow_dropped",
    "acl.forbidden_flow_allowed",
    "acl.rule_order",
    "acl.nft_drop",
)


def acl_injectors(policy: Policy) -> dict[str, Injector]:
    makers = (needed_flow_dropped, forbidden_flow_allowed, rule_order, nft_drop)
    return {name: make(policy) for name, make in zip(ACL_TYPES, makers, strict=True)}
