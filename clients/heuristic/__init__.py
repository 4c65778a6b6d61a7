"""A deterministic troubleshooting agent: a baseline with real network knowledge.

It reads the public topology and every device's state through the MCP tools, compares the
state with the addressing plan and with the network's own conventions (the two ends of a
link, what most routers do), repairs what departs from them with the smallest change, and
checks the result with pings between the hosts. On a Kubernetes NetworkPolicy task it reads
the cluster with kubectl instead and searches for the policy edits that give the brief's
intended connectivity (`k8s`). It never looks at a scenario's hidden half.
"""

from __future__ import annotations

import itertools

import anyio

from netdojo.clients.heuristic.actor import Actor
from netdojo.clients.heuristic.build import build, build_kind
from netdojo.clients.heuristic.fixes_acl import fix_acl
from netdojo.clients.heuristic.fixes_bgp import fix_bgp
from netdojo.clients.heuristic.fixes_iface import (
    fix_addresses,
    fix_admin_down,
    fix_host_gateways,
    fix_kernel_blackholes,
    fix_mtu,
)
from netdojo.clients.heuristic.fixes_ospf import fix_ospf
from netdojo.clients.heuristic.fixes_services import fix_services
from netdojo.clients.heuristic.fixes_static import fix_static_design, fix_static_overrides
from netdojo.clients.heuristic.k8s import solve_policies
from netdojo.clients.heuristic.k8s_intent import is_policy_task
from netdojo.clients.heuristic.model import Snapshot, Topology
from netdojo.clients.heuristic.observe import observe, read_topology
from netdojo.clients.heuristic.planning import survey_model
from netdojo.clients.session import ToolCallError, ToolSession

__all__ = ["troubleshoot"]

MAX_ROUNDS = 3
SETTLE_S = 6.0  # OSPF hello 1 s / dead 4 s and BGP timers 1/3 converge within this
PING_TRIES = 4


async def troubleshoot(session: ToolSession, brief: str) -> str:
    """Investigate and repair (or build) what the brief asks; return a short summary of what it
    found and changed. Does NOT call submit (the caller does).

    Each round reads every device, applies the fixes it finds, and waits for routing to settle;
    a round that finds nothing to change ends the work, and pings between the hosts verify it.
    """
    tools = {tool.name for tool in await session.list_tools()}
    if "python" in tools:
        return await survey_model(session)
    topo = await read_topology(session)
    if is_policy_task(brief, len(topo.routers), topo.links):
        return await solve_policies(session, brief)
    actor = Actor(session)
    built: str | None = None
    for round_ in range(MAX_ROUNDS):
        snap = await observe(session, topo)
        before = len(actor.changes)
        if round_ == 0 and (built := build_kind(brief, snap)):
            await build(built, brief, snap, actor)
            snap = await observe(session, topo)
        if "service" in tools and await fix_services(session, snap, actor):
            continue  # hosts renewed their leases: look again before judging their settings
        await repair(snap, actor, statically_routed=built == "static" or is_static(snap))
        await fix_acl(session, brief, snap, actor)
        if len(actor.changes) == before:
            break
        await anyio.sleep(SETTLE_S)  # let the change reconverge before the next look
    broken = await broken_pairs(session, topo)
    return summarize(actor, built, broken)


def is_static(snap: Snapshot) -> bool:
    """No router runs a routing protocol and some router has static routes."""
    routers = snap.topo.routers
    dynamic = any(snap.runs_ospf(r) or snap.runs_bgp(r) for r in routers)
    return not dynamic and any(snap.config(r).statics for r in routers)


async def repair(snap: Snapshot, actor: Actor, statically_routed: bool) -> None:
    """Each fault class the agent knows, in an order where earlier fixes unmask later ones."""
    await fix_admin_down(snap, actor)
    await fix_addresses(snap, actor)
    await fix_mtu(snap, actor)
    await fix_host_gateways(snap, actor)
    await fix_kernel_blackholes(snap, actor)
    if statically_routed:
        await fix_static_design(snap, actor)
    else:
        await fix_static_overrides(snap, actor)
    await fix_ospf(snap, actor)
    await fix_bgp(snap, actor)


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
