"""Router firewalls against the policy the brief states: web for every host, admin for one.

The intended FORWARD chain on the server's firewall is: accept the web port to the server,
accept the admin port from the admin host, drop the admin port from anyone else. Rules that
drop a permitted flow go; a missing drop comes back; an accept below its drop moves up.
"""

from __future__ import annotations

import ipaddress
import re
import shlex
from dataclasses import dataclass

from netdojo.clients.heuristic.actor import Actor
from netdojo.clients.heuristic.model import Snapshot
from netdojo.clients.heuristic.observe import show
from netdojo.clients.session import ToolSession

_OPEN = (
    r"TCP[ /](?P<port>\d+) on (?P<server>[\w-]+) is open to every host",
    r"everyone may reach (?P<server>[\w-]+) on TCP port (?P<port>\d+)",
    r"TCP/(?P<port>\d+) to (?P<server>[\w-]+) from all hosts",
)
_ADMIN = (
    r"TCP[ /](?P<port>\d+) on (?P<server>[\w-]+) is reserved for (?P<host>[\w-]+)",
    r"only (?P<host>[\w-]+) may connect to its TCP port (?P<port>\d+)",
    r"TCP/(?P<port>\d+) to (?P<server>[\w-]+) from (?P<host>[\w-]+) only",
)
IPTABLES_TABLES = {"filter", "nat", "mangle", "raw", "security"}


@dataclass(frozen=True)
class Policy:
    server: str
    web: int
    admin_port: int
    admin_host: str


def parse_policy(brief: str) -> Policy | None:
    text = " ".join(brief.split())
    opened = next((m for p in _OPEN if (m := re.search(p, text, re.IGNORECASE))), None)
    admin = next((m for p in _ADMIN if (m := re.search(p, text, re.IGNORECASE))), None)
    if not opened or not admin:
        return None
    return Policy(
        opened.group("server"),
        int(opened.group("port")),
        int(admin.group("port")),
        admin.group("host"),
    )


@dataclass
class Rule:
    spec: str  # the rule as `iptables -S` prints it, after "-A FORWARD"
    source: ipaddress.IPv4Network | None
    dest: ipaddress.IPv4Network | None
    dport: int | None
    proto: str | None
    target: str

    @classmethod
    def parse(cls, spec: str) -> Rule:
        words = shlex.split(spec)

        def value(*flags: str) -> str | None:
            for flag in flags:
                if flag in words and words.index(flag) + 1 < len(words):
                    return words[words.index(flag) + 1]
            return None

        source, dest, dport = value("-s"), value("-d"), value("--dport")
        return cls(
            spec=spec,
            source=ipaddress.IPv4Network(source, strict=False) if source else None,
            dest=ipaddress.IPv4Network(dest, strict=False) if dest else None,
            dport=int(dport) if dport and dport.isdigit() else None,
            proto=value("-p"),
            target=value("-j") or "",
        )

    def matches(self, source: str, dest: str, port: int) -> bool:
        return (
            (self.source is None or ipaddress.ip_address(source) in self.source)
            and (self.dest is None or ipaddress.ip_address(dest) in self.dest)
            and (self.dport is None or self.dport == port)
            and self.proto in (None, "tcp")
        )


def _host_ip(snap: Snapshot, host: str) -> str | None:
    for port in snap.topo.ports.get(host, []):
        if port.address:
            return str(port.address.ip)
    return None


async def fix_acl(session: ToolSession, brief: str, snap: Snapshot, actor: Actor) -> None:
    policy = parse_policy(brief)
    if policy is None:
        return
    server = _host_ip(snap, policy.server)
    admin = _host_ip(snap, policy.admin_host)
    if server is None or admin is None:
        return
    sources = [ip for h in snap.topo.hosts if h != policy.server and (ip := _host_ip(snap, h))]
    for router in snap.topo.routers:
        text = (await show(session, router, "iptables -S FORWARD")).get("text", "")
        rules = [
            Rule.parse(line[len("-A FORWARD ") :])
            for line in text.splitlines()
            if line.startswith("-A FORWARD ")
        ]
        await _fix_chain(actor, router, rules, server, admin, sources, policy)
        await _fix_nft(session, actor, router)


def _verdict(rules: list[Rule], source: str, dest: str, port: int) -> tuple[int, Rule] | None:
    """The first rule that decides a flow, with its 1-based position."""
    for index, rule in enumerate(rules, start=1):
        if rule.target in ("ACCEPT", "DROP", "REJECT") and rule.matches(source, dest, port):
            return index, rule
    return None


async def _fix_chain(
    actor: Actor,
    router: str,
    rules: list[Rule],
    server: str,
    admin: str,
    sources: list[str],
    policy: Policy,
) -> None:
    mentions_server = [
        r for r in rules if r.dest is not None and ipaddress.ip_address(server) in r.dest
    ]
    if not mentions_server:
        return
    # Flows the policy permits: the web port from every host, the admin port from the admin host.
    for source, port in [(s, policy.web) for s in sources] + [(admin, policy.admin_port)]:
        decided = _verdict(rules, source, server, port)
        if decided is None or decided[1].target == "ACCEPT":
            continue
        index, blocking = decided
        accept = f"-s {admin}/32 -d {server}/32 -p tcp -m tcp --dport {policy.admin_port} -j ACCEPT"
        if port == policy.admin_port and blocking.source is None and blocking.dport == port:
            # The policy's own drop decides first: the admin accept belongs above it.
            later = [
                r for r in rules[index:] if r.target == "ACCEPT" and r.matches(admin, server, port)
            ]
            for rule in later:
                await actor.execute(
                    router, f"iptables -D FORWARD {rule.spec}", "admin accept below its drop"
                )
            await actor.execute(
                router, f"iptables -I FORWARD {index} {accept}", "admin accept back above the drop"
            )
        else:
            await actor.execute(
                router, f"iptables -D FORWARD {blocking.spec}", f"rule dropped permitted TCP/{port}"
            )
        return
    # Flows the policy forbids: the admin port from every other host.
    for source in [s for s in sources if s != admin]:
        decided = _verdict(rules, source, server, policy.admin_port)
        if decided is not None and decided[1].target != "ACCEPT":
            continue
        drop = f"-d {server}/32 -p tcp -m tcp --dport {policy.admin_port} -j DROP"
        why = f"TCP/{policy.admin_port} to {policy.server} was open to {source}"
        if decided is None:
            await actor.execute(router, f"iptables -A FORWARD {drop}", why)
        elif decided[1].source is not None:
            await actor.execute(router, f"iptables -D FORWARD {decided[1].spec}", why)
        else:
            await actor.execute(router, f"iptables -I FORWARD {decided[0]} {drop}", why)
        return


async def _fix_nft(session: ToolSession, actor: Actor, router: str) -> None:
    """An nftables table of its own (not iptables') that drops traffic."""
    text = (await show(session, router, "nft list ruleset")).get("text", "")
    for match in re.finditer(r"^table (\w+) (\S+) \{(.*?)^\}", text, re.MULTILINE | re.DOTALL):
        family, name, body = match.groups()
        if name in IPTABLES_TABLES and family in ("ip", "ip6"):
            continue
        if re.search(r"\bdrop\b", body):
            await actor.execute(
                router, f"nft delete table {family} {name}", f"nft table {name} drops"
            )
