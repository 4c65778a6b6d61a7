"""Firewall policies: a server behind a router's iptables policy, as the firewall families
plan it.

The policy: the server's web port is open to every host; its admin port only to the admin host.
On the firewall router (the server's gateway, or one that every client's traffic to the server
crosses) the FORWARD chain accepts the web port, accepts the admin port from the admin host,
drops the admin port, and accepts the rest of the server's LAN. Hidden tests are TCP connection
tests against listeners the server runs from boot. The faults that break the policy are in
`scenarios.faults.acl`; the task of writing it is in `scenarios.firewall_build`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from netdojo.labs.spec import LabSpec
from netdojo.scenarios.forwarding import Course, Forwarding, Impact
from netdojo.scenarios.hidden_tests import TcpParams, TcpTest
from netdojo.scenarios.network import Network, plan_network
from netdojo.scenarios.topology import Topology

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


def tcp_test(network: Network, client: str, policy: Policy, port: int, expect: bool) -> TcpTest:
    verdict = "can" if expect else "cannot"
    return TcpTest(
        id=f"policy:tcp:{client}-{policy.server}:{port}",
        description=f"{client} {verdict} open TCP {port} on {policy.server}",
        device=client,
        params=TcpParams(target=network.host_address(policy.server), port=port, expect=expect),
    )


def policy_matrix(network: Network, policy: Policy) -> list[TcpTest]:
    """Every flow the policy speaks about, with the verdict it requires."""
    clients = policy.clients(network)
    tests = [tcp_test(network, c, policy, policy.web, True) for c in clients]
    tests += [tcp_test(network, c, policy, policy.admin_port, c == policy.admin) for c in clients]
    return tests


def install_listener(lab: LabSpec, policy: Policy) -> None:
    """The server answers on both policy ports from boot, so tests can tell open from blocked."""
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


def policy_text(network: Network, policy: Policy, rng: random.Random) -> str:
    return rng.choice(POLICY_FORMS).format(
        web=policy.web, admin=policy.admin_port, server=policy.server, admin_host=policy.admin
    )


@dataclass(frozen=True)
class Firewall:
    """A policy and where each client's traffic to its server goes: what the faults of a
    firewall family draw from."""

    policy: Policy
    paths: dict[str, Course]  # client -> its course to the server

    @classmethod
    def of(cls, network: Network, policy: Policy) -> Firewall:
        found = Forwarding(network, "ospf").courses(Impact())
        return cls(policy, {c: found[c, policy.server] for c in policy.clients(network)})


def plan_with_server(topology: Topology, level: int, rng: random.Random) -> Network:
    """The standard network plan with one host more: the server."""
    return plan_network(topology, level, rng, extra_hosts=1)
