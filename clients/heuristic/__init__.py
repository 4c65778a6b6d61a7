"""A deterministic troubleshooting agent: a baseline with real network knowledge.

It reads the public topology and every device's state through the MCP tools, compares the
state with the addressing plan and with the network's own conventions (the two ends of a
link, what most routers do), repairs what departs from them with the smallest change, and
checks the result with pings between the hosts. On a Kubernetes NetworkPolicy task it reads
the cluster with kubectl instead and searches for the policy edits that give the brief's
intended connectivity (`k8s`); on a translating edge it checks the translation against
the design the brief states (`fixes_nat`). It never looks at a scenario's hidden half.

Its diagnosis is what it found: the devices it repaired (or, with read-only tools, would have
repaired) and the class of each repair; ``none`` when it found nothing and every host pair
pings; no diagnosis when it found nothing and something still fails, or on a task it does not
diagnose (a Kubernetes policy, a planning model, a build).
"""

from __future__ import annotations

import itertools

import anyio

from netdojo.clients.heuristic.actor import Actor
from netdojo.clients.heuristic.build import build, build_kind
from netdojo.clients.heuristic.fixes_acl import fix_acl
from netdojo.clients.heuristic.fixes_bgp import fix_bgp
from netdojo.clients.heuristic.fixes_bgp6 import fix_advertisements, fix_bgp6
from netdojo.clients.heuristic.fixes_iface import (
    fix_addresses,
    fix_admin_down,
    fix_host_gateways,
    fix_kernel_blackholes,
    fix_mtu,
)
from netdojo.clients.heuristic.fixes_isis import fix_isis
from netdojo.clients.heuristic.fixes_nat import fix_nat, parse_design
from netdojo.clients.heuristic.fixes_ospf import fix_ospf
from netdojo.clients.heuristic.fixes_ospf6 import fix_ospf6
from netdojo.clients.heuristic.fixes_relay import fix_relays
from netdojo.clients.heuristic.fixes_rip import fix_rip
from netdojo.clients.heuristic.fixes_services import fix_services
from netdojo.clients.heuristic.fixes_static import fix_static_design, fix_static_overrides
from netdojo.clients.heuristic.k8s import solve_policies
from netdojo.clients.heuristic.k8s_intent import is_policy_task
from netdojo.clients.heuristic.model import Snapshot, Topology
from netdojo.clients.heuristic.observe import observe, read_topology
from netdojo.clients.heuristic.planning import survey_model
from netdojo.clients.session import ToolCallError, ToolSession
from netdojo.scenarios.taxonomy import Diagnosis

__all__ = ["investigate", "troubleshoot"]
CHANGE_TOOLS = {"configure", "execute"}

MAX_ROUNDS = 3
SETTLE_S = 6.0  # OSPF hello 1 s / dead 4 s, IS-IS hold 4 s, BGP 1/3 converge within this
PING_TRIES = 4


async def troubleshoot(session: ToolSession, brief: str) -> str:
    """Investigate and repair (or build) what the brief asks; return a short summary of what it
    found and changed. Does NOT call submit (the caller does)."""
    summary, _ = await investigate(session, brief)
    return summary


async def investigate(session: ToolSession, brief: str) -> tuple[str, Diagnosis | None]:
    """Investigate and repair (or build) what the brief asks: a short summary of what it found
    and changed, and its diagnosis when it has one.

    Each round reads every device, applies the fixes it finds, and waits for routing to settle;
    a round that finds nothing to change ends the work, and pings between the hosts verify it.
    With read-only tools each round notes the fixes it would apply instead.
    """
    offered = {tool.name for tool in await session.list_tools()}
    if "python" in offered:
        return await survey_model(session), None
    topo = await read_topology(session)
    if is_policy_task(brief, len(topo.routers), topo.links):
        return await solve_policies(session, brief), None
    read_only = not CHANGE_TOOLS & offered
    actor = Actor(session, read_only=read_only, hosts=frozenset(topo.hosts))
    built: str | None = None
    edge = parse_design(brief)
    for round_ in range(MAX_ROUNDS):
        snap = await observe(session, topo)
        before = len(actor.changes)
        if edge is not None:  # a translating edge: the outside is meant to have no inside routes
            actor.area = "translation"
            await fix_nat(session, edge, snap, actor)
        else:
            if round_ == 0 and (built := build_kind(brief, snap)):
                await build(built, brief, snap, actor)
                snap = await observe(session, topo)
            actor.area = "service"
            serviced = "service" in offered or read_only
            renewed = False
            if serviced:
                renewed = await fix_services(session, snap, actor)
                renewed = await fix_relays(session, snap, actor) or renewed
            if renewed and not read_only:
                continue  # hosts renewed their leases: look again before judging their settings
            await repair(snap, actor, statically_routed=built == "static" or is_static(snap))
            actor.area = "filtering"
            await fix_acl(session, brief, snap, actor)
        if len(actor.changes) == before or read_only:
            break
        await anyio.sleep(SETTLE_S)  # let the change reconverge before the next look
    broken = await broken_pairs(session, topo)
    return summarize(actor, built, broken), None if built else diagnosis(actor, broken)


def diagnosis(actor: Actor, broken: list[tuple[str, str]]) -> Diagnosis | None:
    """What the agent found, as a root cause; None when it found nothing yet pings fail."""
    if actor.findings:
        classes = sorted({kind for kinds in actor.findings.values() for kind in kinds})
        return Diagnosis.model_validate({"locations": sorted(actor.findings), "classes": classes})
    return None if broken else Diagnosis(classes=["none"])


def is_static(snap: Snapshot) -> bool:
    """No router runs a routing protocol and some router has static routes."""
    routers = snap.topo.routers
    dynamic = any(snap.runs_protocol(r) for r in routers)
    return not dynamic and any(snap.config(r).statics for r in routers)


async def repair(snap: Snapshot, actor: Actor, statically_routed: bool) -> None:
    """Each fault class the agent knows, in an order where earlier fixes unmask later ones;
    ``actor.area`` says which kind of repair is under way, for the diagnosis."""
    actor.area = "link"
    await fix_admin_down(snap, actor)
    actor.area = "addressing"
    await fix_addresses(snap, actor)
    actor.area = "link"
    await fix_mtu(snap, actor)
    actor.area = "host_config"
    await fix_host_gateways(snap, actor)
    actor.area = "static_route"
    await fix_kernel_blackholes(snap, actor)
    if statically_routed:
        await fix_static_design(snap, actor)
    else:
        await fix_static_overrides(snap, actor)
    actor.area = "routing"
    await fix_ospf(snap, actor)
    await fix_rip(snap, actor)
    await fix_isis(snap, actor)
    await fix_ospf6(snap, actor)
    await fix_bgp(snap, actor)
    await fix_bgp6(snap, actor)
    actor.area = "host_config"
    await fix_advertisements(snap, actor)


async def broken_pairs(session: ToolSession, topo: Topology) -> list[tuple[str, str]]:
    """Host pairs that still fail to ping, retried while routing converges."""
    pending = list(itertools.combinations(topo.hosts, 2))
    for attempt in range(PING_TRIES):
        if attempt:
            await anyio.sleep(2.0)
        pending = [pair for pair in pending if not await _pings(session, *pair)]
        if not pending:
            break
    return pending


async def _pings(session: ToolSession, source: str, destination: str) -> bool:
    try:
        result = await session.call(
            "ping", {"source": source, "destination": destination, "count": 2}
        )
    except ToolCallError:
        return False
    return bool(result.get("received"))


def summarize(actor: Actor, built: str | None, broken: list[tuple[str, str]]) -> str:
    parts = [f"Built {built} routing from the addressing plan."] if built else []
    if actor.changes:
        parts.append("Changes: " + "; ".join(actor.changes) + ".")
    else:
        parts.append("Found nothing to change.")
    if actor.failures:
        parts.append("Problems: " + "; ".join(actor.failures) + ".")
    if broken:
        parts.append("Still failing: " + ", ".join(f"{a}->{b}" for a, b in broken) + ".")
    else:
        parts.append("All host pairs ping.")
    return " ".join(parts)
