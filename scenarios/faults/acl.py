"""Faults that break a server's firewall policy (`scenarios.firewall`), in either direction,
on any router the flows cross.

A needed flow is blocked by a rule or an nftables table on any hop of its path, or by the admin
accept moved below the drop; a forbidden flow is let through by the drop gone or mistyped, the
drop below the LAN accept, the admin rules moved to another hop, or a stray accept above them.
"""

from __future__ import annotations

from netdojo.scenarios.faults.base import FaultContext, FaultPlan
from netdojo.scenarios.firewall import Policy, tcp_test
from netdojo.scenarios.forwarding import Course, Impact
from netdojo.scenarios.hidden_tests import TcpTest
from netdojo.scenarios.model import Fault, ToolCall, execute
from netdojo.scenarios.network import Network
from netdojo.scenarios.registry import fault
from netdojo.scenarios.symptoms import Observation

Flow = tuple[str, int]  # (client, port)


Paths = dict[str, Course]  # client -> where its traffic to the server goes


def _wall(ctx: FaultContext) -> tuple[Policy, Paths]:
    """The family's policy and where each client's traffic to the server goes."""
    assert ctx.firewall is not None
    return ctx.firewall.policy, ctx.firewall.paths


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
        tcp_test(ctx.network, flow.hosts[0], policy, flow.port, flow.kind == "blocked")
        for flow in sorted(flows)
    ]
    return FaultPlan(
        Fault(
            type=type_,
            device=device,
            params={"flows": [test.description for test in healthy]},
            inject=inject,
            fix=fix,
            present=[_flip(test) for test in healthy],
        ),
        Impact(),
        healthy,
        frozenset(flows),
    )


def _flip(test: TcpTest) -> TcpTest:
    return test.model_copy(
        update={"params": test.params.model_copy(update={"expect": not test.params.expect})}
    )


def _permitted_flow(ctx: FaultContext, policy: Policy) -> Flow:
    """A flow the policy allows (another fault may block it too, elsewhere)."""
    flows = [(c, policy.web) for c in policy.clients(ctx.network)]
    flows.append((policy.admin, policy.admin_port))
    return ctx.rng.choice(flows)


def _iptables(device: str, *lines: str) -> list[ToolCall]:
    return [execute(device, f"iptables {line}") for line in lines]


@fault("acl.needed_flow_dropped", routing={"ospf"}, firewall=True)
def needed_flow_dropped(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """A rule on a router of the flow's path drops or rejects a flow the policy allows."""
    policy, paths = _wall(ctx)
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
        tag,
        router,
        _iptables(router, f"-I {rule}"),
        _iptables(router, f"-D {rule}"),
        {_blocked(policy, client, port)},
        ctx,
        policy,
    )


@fault("acl.nft_drop", routing={"ospf"}, firewall=True)
def nft_drop(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """An nftables table, beside iptables, drops a flow the policy allows on a router of its
    path."""
    policy, paths = _wall(ctx)
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
    return _plan(tag, router, inject, fix, flows, ctx, policy)


@fault("acl.rule_order", routing={"ospf"}, firewall=True)
def rule_order(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """On the firewall, the admin accept below the drop (the admin host is blocked), or the
    drop below the accept of the server's LAN (every other client gets in)."""
    policy = _wall(ctx)[0]
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
    return _plan(tag, firewall, inject, fix, flows, ctx, policy)


def _restore(network: Network, policy: Policy, *specs: str) -> list[str]:
    """Rules appended back in their place: above the accept of the server's LAN, which ends
    the chain."""
    lan = policy.lan_accept(network)
    return [f"-D {lan}", *(f"-A {spec}" for spec in specs), f"-A {lan}"]


@fault("acl.forbidden_flow_allowed", routing={"ospf"}, firewall=True)
def forbidden_flow_allowed(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """The firewall's drop of the admin port is gone, or mistyped (another port or address)."""
    policy = _wall(ctx)[0]
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
    return _plan(tag, firewall, inject, fix, flows, ctx, policy)


def _neighbour_address(address: str) -> str:
    head, last = address.rsplit(".", 1)
    return f"{head}.{int(last) + 1}"


@fault("acl.rule_wrong_hop", routing={"ospf"}, firewall=True)
def rule_wrong_hop(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """The admin accept and drop sit on a neighbour of the firewall instead: clients whose
    traffic avoids that router reach the admin port."""
    policy, paths = _wall(ctx)
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
        return _plan(tag, router, inject, fix, flows, ctx, policy)
    return None


@fault("acl.stray_accept", routing={"ospf"}, firewall=True)
def stray_accept(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """An accept for one client above the firewall's policy rules lets it reach the admin port."""
    policy = _wall(ctx)[0]
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
    return _plan(tag, firewall, inject, fix, flows, ctx, policy)
