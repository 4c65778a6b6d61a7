"""A translating edge against the design the brief states: the inside prefix leaves through
the edge translated to its outside address, and a TCP port of that address is forwarded to
a named inside server.

On the edge: a source translation of the inside bound to another port or another address
is replaced by a MASQUERADE on the outside port, a missing one comes back, connection
tracking turned off (which skips translation) comes back on, a port forward to
another host is pointed back at the server (the server's own port is not in the brief: a
forward kept on the server's address keeps its port, a new one uses the published port), and
an nftables table of its own that translates goes. Inside routers: a static route whose next
hop is not an inside address leads out past the edge, and goes.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from netdojo.clients.heuristic.actor import Actor
from netdojo.clients.heuristic.model import Snapshot
from netdojo.clients.heuristic.observe import show
from netdojo.clients.session import ToolSession

_A = r"(\d+\.\d+\.\d+\.\d+)"
_NET = r"(\d+\.\d+\.\d+\.\d+/\d+)"
_DESIGNS = (
    (rf"([\w-]+) is the edge between the inside networks \({_NET}\)", ("edge", "inside")),
    (rf"everything in {_NET} leaves through ([\w-]+),", ("inside", "edge")),
    (rf"inside \({_NET}\) meets the outside at ([\w-]+)\.", ("inside", "edge")),
)
_PUBLISHED = (
    (rf"TCP (\d+) on {_A} is published for [\w-]+ \({_A}\)", ("port", "public", "server")),
    (
        rf"connections to {_A} on TCP port (\d+) are handed to [\w-]+ at {_A}",
        ("public", "port", "server"),
    ),
    (
        rf"[\w-]+ \({_A}\) serves the outside through TCP (\d+) on {_A}",
        ("server", "port", "public"),
    ),
)
IPTABLES_TABLES = {"filter", "nat", "mangle", "raw", "security"}


@dataclass(frozen=True)
class Design:
    edge: str
    inside: ipaddress.IPv4Network
    public: str
    port: int
    server: str


def parse_design(brief: str) -> Design | None:
    text = " ".join(brief.split())
    found: dict[str, str] = {}
    for patterns in (_DESIGNS, _PUBLISHED):
        for pattern, names in patterns:
            if match := re.search(pattern, text):
                found.update(zip(names, match.groups(), strict=True))
                break
    if len(found) < 5:
        return None
    return Design(
        found["edge"],
        ipaddress.IPv4Network(found["inside"]),
        found["public"],
        int(found["port"]),
        found["server"],
    )


async def fix_nat(session: ToolSession, design: Design, snap: Snapshot, actor: Actor) -> None:
    ports = snap.topo.ports.get(design.edge, [])
    public = [p.name for p in ports if p.address and str(p.address.ip) == design.public]
    outside = public[0] if public else None
    if outside is None:
        return
    rules = (await show(session, design.edge, "iptables -t nat -S")).get("text", "")
    await _source(design, outside, rules.splitlines(), actor)
    await _forward(design, outside, rules.splitlines(), actor)
    await _tracking(session, design, actor)
    await _nft(session, design, actor)
    await _inside_routes(design, snap, actor)


async def _source(design: Design, outside: str, lines: list[str], actor: Actor) -> None:
    inside = str(design.inside)
    mine = [line for line in lines if line.startswith("-A POSTROUTING") and inside in line]
    good = [
        line
        for line in mine
        if f"-o {outside} " in f"{line} "
        and ("MASQUERADE" in line or f"--to-source {design.public}" in line)
    ]
    for line in mine:
        if line not in good:
            command = f"iptables -t nat -D {line.removeprefix('-A ')}"
            await actor.execute(design.edge, command, "wrong source translation")
    if not good:
        spec = f"POSTROUTING -s {design.inside} -o {outside} -j MASQUERADE"
        await actor.execute(design.edge, f"iptables -t nat -A {spec}", "inside leaves untranslated")


async def _forward(design: Design, outside: str, lines: list[str], actor: Actor) -> None:
    mine = [
        line
        for line in lines
        if line.startswith("-A PREROUTING") and "DNAT" in line and f"--dport {design.port}" in line
    ]
    good = [line for line in mine if f"--to-destination {design.server}" in line]
    for line in mine:
        if line not in good:
            command = f"iptables -t nat -D {line.removeprefix('-A ')}"
            await actor.execute(design.edge, command, "forward to another host")
    if not good:
        spec = (
            f"PREROUTING -i {outside} -d {design.public} -p tcp --dport {design.port} "
            f"-j DNAT --to-destination {design.server}"
        )
        await actor.execute(design.edge, f"iptables -t nat -A {spec}", "published port missing")


async def _tracking(session: ToolSession, design: Design, actor: Actor) -> None:
    """Untracked packets are never translated: the edge's raw-table `--notrack` rules go."""
    text = (await show(session, design.edge, "iptables -t raw -S")).get("text", "")
    for line in text.splitlines():
        if line.startswith("-A ") and "--notrack" in line.split():
            command = f"iptables -t raw -D {line.removeprefix('-A ')}"
            await actor.execute(design.edge, command, "translation bypassed")


async def _nft(session: ToolSession, design: Design, actor: Actor) -> None:
    """An nftables table of its own (not one of iptables') that translates."""
    text = (await show(session, design.edge, "nft list ruleset")).get("text", "")
    for block in re.split(r"(?m)^table ", text):
        head = block.split("{", 1)[0].split()
        if len(head) == 2 and head[1] not in IPTABLES_TABLES and re.search(r"\b[ds]nat\b", block):
            command = f"nft delete table {head[0]} {head[1]}"
            await actor.execute(design.edge, command, "stray translation")


async def _inside_routes(design: Design, snap: Snapshot, actor: Actor) -> None:
    for router in snap.topo.routers:
        if router == design.edge:
            continue
        if not any(p.address and p.address.ip in design.inside for p in snap.topo.ports[router]):
            continue
        out = [
            s
            for s in snap.config(router).statics
            if _address(s.via) and ipaddress.IPv4Address(s.via) not in design.inside
        ]
        if out:
            lines = [f"no {s.line}" for s in out]
            actor.area = "static_route"
            await actor.configure(router, lines, "route out past the edge")
            actor.area = "translation"


def _address(text: str) -> bool:
    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True
