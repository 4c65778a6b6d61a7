"""RIP: compare the two ends of every transit link, the LANs' network statements, and the
filters and offsets routers apply to updates.

A link's ends must both run RIP version 2 on it, send updates (not passive) and agree on
authentication; every router runs the timers most routers run (one that sends its updates
far apart has its routes time out at its neighbours); every connected network belongs in RIP;
a distribute-list or offset-list is taken for a leftover, since every router must learn every
site by its shortest path.
"""

from __future__ import annotations

import re
from collections import Counter

from netdojo.clients.heuristic.actor import Actor
from netdojo.clients.heuristic.model import Iface, RunningConfig, Snapshot

VERSION_LINES = ("ip rip send version", "ip rip receive version")
TIMERS_CMD = "timers basic "
_FILTER = re.compile(r"(distribute-list|offset-list) (prefix )?(\S+) ")


def in_rip(config: RunningConfig, name: str, address: Iface) -> bool:
    """Whether a `network` statement (a prefix or the interface's name) enables RIP here."""
    for line in config.rip or []:
        if not line.startswith("network "):
            continue
        value = line.split()[1]
        if value == name or ("/" in value and address.ip in Iface(value).network):
            return True
    return False


def _address(snap: Snapshot, router: str, link: str) -> tuple[str, Iface] | None:
    port = snap.topo.port(router, link)
    if port is None:
        return None
    address = port.address or next(iter(snap.devices[router].addresses(port.name)), None)
    return (port.name, address) if address is not None else None


async def fix_rip(snap: Snapshot, actor: Actor) -> None:
    for link, members in sorted(snap.topo.links.items()):
        if len(members) != 2 or not all(snap.runs_rip(m) for m in members):
            continue
        if snap.topo.is_transit(link):
            for end, other in (members, members[::-1]):
                await _fix_end(snap, actor, link, end, other)
    await _fix_timers(snap, actor)
    await _fix_networks(snap, actor)
    for router in snap.topo.routers:
        await _drop_filters(snap, actor, router)


async def _fix_end(snap: Snapshot, actor: Actor, link: str, router: str, peer: str) -> None:
    found, theirs = _address(snap, router, link), _address(snap, peer, link)
    if found is None or theirs is None:
        return
    name, _ = found
    config, other = snap.config(router), snap.config(peer)
    iface_lines: list[str] = []
    router_lines: list[str] = []
    reasons: list[str] = []
    for setting in VERSION_LINES:
        if config.iface_value(name, setting) is not None:
            iface_lines.append(f" no {setting}")
            reasons.append(f"{setting} {config.iface_value(name, setting)}")
    if f"passive-interface {name}" in (config.rip or []):
        router_lines.append(f" no passive-interface {name}")
        reasons.append("transit port was passive")
    mode = config.iface_value(name, "ip rip authentication mode")
    their_mode = other.iface_value(theirs[0], "ip rip authentication mode")
    if their_mode and not mode:
        iface_lines.append(f" ip rip authentication mode {their_mode}")
        reasons.append("authentication missing on this end")
    key = config.iface_value(name, "ip rip authentication string")
    their_key = other.iface_value(theirs[0], "ip rip authentication string")
    if their_mode and their_key and key != their_key and router > peer:
        # Keys differ: nothing says which is right, so the later-named end takes the other's.
        iface_lines.append(f" ip rip authentication string {their_key}")
        reasons.append("authentication key differs from the neighbour's")
    lines = ([f"interface {name}", *iface_lines, "exit"] if iface_lines else []) + (
        ["router rip", *router_lines] if router_lines else []
    )
    if lines:
        await actor.configure(router, lines, f"RIP on {name}: " + ", ".join(reasons))


async def _fix_timers(snap: Snapshot, actor: Actor) -> None:
    """A router whose timers differ from what most RIP routers run is given theirs."""
    routers = [r for r in snap.topo.routers if snap.runs_rip(r)]
    timers = {
        r: next((line for line in snap.config(r).rip or [] if line.startswith(TIMERS_CMD)), None)
        for r in routers
    }
    counts = Counter(timers.values())
    usual = max(sorted(counts, key=str), key=lambda t: counts[t]) if counts else None
    for router, line in sorted(timers.items()):
        if line == usual or counts[line] == counts[usual]:
            continue  # no odd one out: nothing says which timers are right
        fix = f" {usual}" if usual else f" no {line}"
        had = line.removeprefix(TIMERS_CMD) if line else "FRR's defaults"
        want = usual.removeprefix(TIMERS_CMD) if usual else "FRR's defaults"
        await actor.configure(
            router, ["router rip", fix], f"RIP timers {had} where the others run {want}"
        )


async def _fix_networks(snap: Snapshot, actor: Actor) -> None:
    """Every connected network of a RIP router, transit or LAN, belongs in RIP."""
    for router in snap.topo.routers:
        if not snap.runs_rip(router):
            continue
        config = snap.config(router)
        missing = []
        for port in snap.topo.ports[router]:
            found = _address(snap, router, port.link)
            if found is not None and not in_rip(config, *found):
                missing.append(f" network {found[1].network}")
        if missing:
            await actor.configure(
                router, ["router rip", *missing], "networks not in RIP: " + ", ".join(missing)
            )


async def _drop_filters(snap: Snapshot, actor: Actor, router: str) -> None:
    """Distribute-lists and offset-lists, with the lists they use."""
    lines: list[str] = []
    lists: list[str] = []
    for line in snap.config(router).rip or []:
        if match := _FILTER.match(line):
            lines.append(f" no {line}")
            prefix = match.group(1) == "distribute-list" and match.group(2)
            lists.append(f"no ip prefix-list {match.group(3)}" if prefix else
                         f"no access-list {match.group(3)}")  # fmt: skip
    if lines:
        await actor.configure(
            router, ["router rip", *lines, "exit", *dict.fromkeys(lists)], "RIP filters removed"
        )
