"""Faults of a translating edge (`scenarios.nat_edge`), each made the way an operator would
make it: an iptables rule of the edge's nat table deleted or rewritten, connection tracking
turned off in the raw table (untracked packets are never translated), an nftables table
that translates before iptables does, or a route on an inside router that sends the way out
over the spare link, past the edge and its translation.

Each fault names the flows it breaks (ids of `nat_edge.flows`) and a slot: two faults of
one instance never share a slot (they would rewrite the same rule).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from netdojo.scenarios.faults.base import added_route
from netdojo.scenarios.hidden_tests import HiddenTest, NetfilterParams, NetfilterTest
from netdojo.scenarios.model import Fault, ToolCall, execute
from netdojo.scenarios.nat_edge import Edge, forward_test, ping_out, source_test

WRONG_PORTS = (22, 80, 443, 3000, 8000, 8080)
NFT_TABLES = ("portmap", "edge_nat", "portfwd", "dmz", "publish")  # not nft keywords


@dataclass(frozen=True)
class NatFault:
    fault: Fault
    slot: str
    breaks: frozenset[str]


def _listed(tag: str, edge: str, words: list[str], expect: bool, nft: bool = False) -> HiddenTest:
    command = "nft list ruleset" if nft else "iptables-save"
    state = "holds" if expect else "lacks"
    return NetfilterTest(
        id=f"{tag}:{edge}",
        description=f"{edge}'s `{command}` {state} a line with {' '.join(words)}",
        device=edge,
        params=NetfilterParams(command=command, words=words, expect=expect),
    )


def _ways_out(plan: Edge, hosts: list[str]) -> frozenset[str]:
    return frozenset(t.id for h in hosts for t in (ping_out(plan, h), source_test(plan, h)))


def _forward(plan: Edge) -> frozenset[str]:
    return frozenset({forward_test(plan).id})


def _nat(edge: str, verb: str, spec: str) -> ToolCall:
    return execute(edge, f"iptables -t nat -{verb} {spec}")


def _replace(plan: Edge, tag: str, right: str, wrong: str, words: list[str], slot: str,
             params: dict[str, object]) -> NatFault:  # fmt: skip
    """A rule of the edge's nat table rewritten: the right one deleted, the wrong one added."""
    edge = plan.edge
    breaks = _ways_out(plan, plan.inside_hosts) if slot == "snat" else _forward(plan)
    fault = Fault(
        type=tag,
        device=edge,
        params=params,
        inject=[_nat(edge, "D", right), _nat(edge, "A", wrong)],
        fix=[_nat(edge, "D", wrong), _nat(edge, "A", right)],
        present=[_listed(tag, edge, words, True)],
    )
    return NatFault(fault, slot, breaks)


def masquerade_missing(plan: Edge, rng: random.Random, tag: str) -> NatFault | None:
    """The edge's source translation deleted: the inside leaves with private sources."""
    words = ["POSTROUTING", plan.aggregate, "MASQUERADE" if plan.masquerade else plan.public]
    return _deleted(plan, tag, plan.snat_rule(), words, "snat")


def snat_wrong_address(plan: Edge, rng: random.Random, tag: str) -> NatFault | None:
    """The source translation names an address of the edge that is not its outside one (its
    loopback or an inside port): nothing outside routes the answers back to it."""
    node = plan.network.node(plan.edge)
    candidates = [node.loopback or ""] + [
        i.address.split("/")[0] for i in node.ifaces if i.name != plan.out_iface
    ]
    wrong_address = rng.choice(sorted(a for a in candidates if a))
    spec = f"POSTROUTING -s {plan.aggregate} -o {plan.out_iface} -j SNAT --to-source "
    words = ["POSTROUTING", "SNAT", wrong_address]
    return _replace(plan, tag, plan.snat_rule(), spec + wrong_address, words, "snat",
                    {"to_source": wrong_address})  # fmt: skip


def snat_wrong_interface(plan: Edge, rng: random.Random, tag: str) -> NatFault | None:
    """The source translation is bound to an inside port of the edge, not the outside one."""
    node = plan.network.node(plan.edge)
    wrong = rng.choice(sorted(i.name for i in node.ifaces if i.name != plan.out_iface))
    right = plan.snat_rule()
    spec = right.replace(f"-o {plan.out_iface} ", f"-o {wrong} ")
    words = ["POSTROUTING", plan.aggregate, "-o", wrong]
    return _replace(plan, tag, right, spec, words, "snat", {"out_interface": wrong})


def forward_wrong_host(plan: Edge, rng: random.Random, tag: str) -> NatFault | None:
    """The port forward goes to another inside host, which does not serve the port."""
    others = [h for h in plan.inside_hosts if h != plan.server]
    wrong = plan.address(rng.choice(others))
    right = plan.dnat_rule()
    spec = right.replace(f"{plan.address(plan.server)}:", f"{wrong}:")
    words = ["DNAT", f"{wrong}:{plan.inner_port}"]
    return _replace(plan, tag, right, spec, words, "dnat", {"to": wrong})


def forward_wrong_port(plan: Edge, rng: random.Random, tag: str) -> NatFault | None:
    """The port forward goes to the right server on a port it does not serve."""
    wrong = rng.choice([p for p in WRONG_PORTS if p != plan.inner_port])
    right = plan.dnat_rule()
    server = plan.address(plan.server)
    spec = right.replace(f"{server}:{plan.inner_port}", f"{server}:{wrong}")
    words = ["DNAT", f"{server}:{wrong}"]
    return _replace(plan, tag, right, spec, words, "dnat", {"to_port": wrong})


def forward_missing(plan: Edge, rng: random.Random, tag: str) -> NatFault | None:
    """The port forward deleted: the outside reaches the edge itself, which does not serve."""
    words = ["DNAT", f"{plan.address(plan.server)}:{plan.inner_port}"]
    return _deleted(plan, tag, plan.dnat_rule(), words, "dnat")


def _deleted(plan: Edge, tag: str, rule: str, words: list[str], slot: str) -> NatFault:
    """One of the edge's translations (``slot``) deleted, its listing lacking ``words``."""
    fault = Fault(
        type=tag,
        device=plan.edge,
        params={"rule": rule},
        inject=[_nat(plan.edge, "D", rule)],
        fix=[_nat(plan.edge, "A", rule)],
        present=[_listed(tag, plan.edge, words, False)],
    )
    breaks = _ways_out(plan, plan.inside_hosts) if slot == "snat" else _forward(plan)
    return NatFault(fault, slot, breaks)


def nft_forward_override(plan: Edge, rng: random.Random, tag: str) -> NatFault | None:
    """An nftables table, hooked before iptables' nat table, forwards the port to another
    inside host: the first translation of a connection wins, so the iptables rule looks right
    and never applies."""
    edge = plan.edge
    table = rng.choice(NFT_TABLES)
    wrong = plan.address(rng.choice([h for h in plan.inside_hosts if h != plan.server]))
    chain = f"nft add chain ip {table} pre {{ type nat hook prerouting priority -150 ; }}"
    match = f"ip daddr {plan.public} tcp dport {plan.port}"
    rule = f"nft add rule ip {table} pre {match} dnat to {wrong}"
    fault = Fault(
        type=tag,
        device=edge,
        params={"table": table, "to": wrong},
        inject=[
            execute(edge, f"nft add table ip {table}"),
            execute(edge, chain),
            execute(edge, rule),
        ],
        fix=[execute(edge, f"nft delete table ip {table}")],
        present=[_listed(tag, edge, ["dnat", wrong], True, nft=True)],
    )
    return NatFault(fault, "dnat", _forward(plan))


def asymmetric_return(plan: Edge, rng: random.Random, tag: str) -> NatFault | None:
    """A route on the inside router with the spare link sends traffic for the outside server's
    LAN over that link: it leaves untranslated, past the edge, and answers find no way back."""
    router = plan.spare
    network = plan.network
    hop = network.node(plan.outside[0]).iface_to(router).address.split("/")[0]
    lan = network.lans[plan.ext]
    hosts = plan.hosts_below(router)
    breaks = _ways_out(plan, hosts)
    if plan.server in hosts:
        breaks |= _forward(plan)
    return NatFault(added_route(tag, router, lan, hop), "route", breaks)


def _untracked(plan: Edge, tag: str, spec: str, words: list[str], breaks: frozenset[str],
               slot: str) -> NatFault:  # fmt: skip
    edge = plan.edge
    fault = Fault(
        type=tag,
        device=edge,
        params={"rule": spec},
        inject=[execute(edge, f"iptables -t raw -A {spec}")],
        fix=[execute(edge, f"iptables -t raw -D {spec}")],
        present=[_listed(tag, edge, words, True)],
    )
    return NatFault(fault, slot, breaks)


def notrack_inside(plan: Edge, rng: random.Random, tag: str) -> NatFault | None:
    """Connection tracking turned off for what the inside sends (a raw-table `CT --notrack`,
    as if to spare the edge work): untracked packets are never translated, the inside
    server's answers through the forward included."""
    spec = f"PREROUTING -s {plan.aggregate} -j CT --notrack"
    words = ["PREROUTING", plan.aggregate, "--notrack"]
    breaks = _ways_out(plan, plan.inside_hosts) | _forward(plan)
    return _untracked(plan, tag, spec, words, breaks, "snat")


def notrack_forward(plan: Edge, rng: random.Random, tag: str) -> NatFault | None:
    """Connection tracking turned off for the published port: the forward never applies and
    the edge answers the connection itself."""
    spec = f"PREROUTING -i {plan.out_iface} -p tcp --dport {plan.port} -j CT --notrack"
    words = ["PREROUTING", str(plan.port), "--notrack"]
    return _untracked(plan, tag, spec, words, _forward(plan), "dnat")


NatInjector = Callable[[Edge, random.Random, str], NatFault | None]
FAULTS: dict[str, NatInjector] = {
    "nat.masquerade_missing": masquerade_missing,
    "nat.snat_wrong_address": snat_wrong_address,
    "nat.snat_wrong_interface": snat_wrong_interface,
    "nat.forward_wrong_host": forward_wrong_host,
    "nat.forward_wrong_port": forward_wrong_port,
    "nat.forward_missing": forward_missing,
    "nat.nft_forward_override": nft_forward_override,
    "nat.asymmetric_return": asymmetric_return,
    "nat.notrack_inside": notrack_inside,
    "nat.notrack_forward": notrack_forward,
}
