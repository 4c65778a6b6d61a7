"""What an adversary reads from the public half of a scenario: the symptom lines of the brief,
the firewall policy in the constraints, the topology as a graph, and for every device its
features (where it sits, and what the brief says about it)."""

from __future__ import annotations

import ipaddress
import itertools
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property

import networkx as nx

from netdojo.scenarios import briefs
from netdojo.scenarios.firewall import POLICY_FORMS as ACL_POLICY_FORMS
from netdojo.scenarios.model import Scenario

Pair = tuple[str, str]  # (fault type, device)

# --- reading the brief -------------------------------------------------------------------

KINDS = {
    "broken": briefs.PAIR_FORMS,
    "isolated": briefs.ISOLATION_FORMS,
    "detour": briefs.DETOUR_FORMS,
    "quiet": briefs.QUIET_FORMS,
    "lost": tuple(f for forms in briefs.LOST_FORMS.values() for f in forms),
    "blocked": briefs.BLOCKED_FORMS,
    "open": briefs.OPEN_FORMS,
    "policy": briefs.POLICY_FORMS,
    "stalled": briefs.STALLED_FORMS,
    "slow": briefs.SLOW_FORMS,
    "lossy": briefs.LOSSY_FORMS,
    "unresolved": briefs.UNRESOLVED_FORMS,
}
NAME, NUMBER = r"[\w-]+", r"\d+"
SLOTS = {"a": NAME, "b": NAME, "client": NAME, "server": NAME, "port": NUMBER}
POLICY_SLOTS = {"server": NAME, "admin_host": NAME, "web": NUMBER, "admin": NUMBER}


def _pattern(form: str, slots: dict[str, str]) -> re.Pattern[str]:
    """A form with its slots as groups (names and numbers captured, addresses skipped)."""
    parts = re.split(r"\{(\w+)\}", form)
    regex = ""
    for index, part in enumerate(parts):
        if index % 2 == 0:
            regex += re.escape(part)
        elif part not in slots:
            regex += r"(?:[\d.]+|[\da-fA-F:]+)"  # an IPv4 or IPv6 address
        elif f"(?P<{part}>" in regex:
            regex += f"(?P={part})"
        else:
            regex += f"(?P<{part}>{slots[part]})"
    return re.compile(rf"(?<![\w-]){regex}", re.IGNORECASE)


PATTERNS = [(kind, _pattern(form, SLOTS)) for kind, forms in KINDS.items() for form in forms]
POLICY = [_pattern(form, POLICY_SLOTS) for form in ACL_POLICY_FORMS]


@dataclass(frozen=True)
class Seen:
    kind: str
    hosts: tuple[str, ...]
    port: int = 0


def read_brief(text: str) -> list[Seen]:
    text = " ".join(text.split())
    found = []
    for kind, pattern in PATTERNS:
        for match in pattern.finditer(text):
            groups = match.groupdict()
            hosts = tuple(groups[k] for k in ("a", "b", "client", "server") if groups.get(k))
            found.append(Seen(kind, hosts, int(groups.get("port") or 0)))
    return found


# --- the public half as a network --------------------------------------------------------


@dataclass
class Public:
    family: str
    level: int
    brief: str
    constraints: list[str]
    routers: list[str]
    hosts: list[str]
    graph: nx.Graph  # routers only
    gateway: dict[str, str]  # host -> router
    ports: dict[tuple[str, str], tuple[str, str]]  # (device, peer) -> (interface, address)
    lans: dict[str, str]  # host -> LAN prefix
    seen: list[Seen]
    server: str | None = None
    admin: str | None = None
    web: int = 0
    admin_port: int = 0
    paths: dict[Pair, set[str]] = field(default_factory=dict)  # gateways' shortest-path routers
    every: dict[Pair, set[str]] = field(default_factory=dict)  # gateways' every-path routers
    hops: dict[str, dict[str, int]] = field(default_factory=dict)  # router -> hops to others
    tokens: dict[str, list[str]] = field(default_factory=dict)  # device -> its features
    signatures: dict[tuple[object, str], list[tuple[str, ...]]] = field(default_factory=dict)
    """(a parser's way to describe a device, device) -> the device so described"""

    def features(self, device: str) -> list[str]:
        if device not in self.tokens:
            self.tokens[device] = instance_tokens(self) + device_tokens(self, device)
        return self.tokens[device]

    @property
    def firewall(self) -> str | None:
        return self.gateway.get(self.server or "")

    @cached_property
    def guarded(self) -> set[str]:
        """Routers every client's traffic to the server crosses: where a firewall can sit."""
        if not self.server:
            return set()
        clients = [h for h in self.hosts if h != self.server]
        return set.intersection(*(self.on_every_path(c, self.server) for c in clients))

    def on_every_path(self, a: str, b: str) -> set[str]:
        key = (self.gateway[a], self.gateway[b])
        if key not in self.every:
            ways = [set(w) for w in nx.all_shortest_paths(self.graph, *key)]
            self.every[key] = set.intersection(*ways)
        return self.every[key]

    def distance(self, router: str, other: str) -> int:
        """How many links apart two routers are."""
        if other not in self.hops:
            self.hops[other] = nx.single_source_shortest_path_length(self.graph, other)
        return self.hops[other][router]

    @cached_property
    def ranked(self) -> list[str]:
        """The routers, most links first."""
        return sorted(self.routers, key=lambda r: (-self.graph.degree(r), r))

    def pairs(self) -> list[Pair]:
        """The host pairs the brief names together (a broken pair, a detour, a flow)."""
        return [s.hosts for s in self.seen if len(s.hosts) == 2]  # type: ignore[misc]

    def on_paths(self, a: str, b: str) -> set[str]:
        key = (self.gateway[a], self.gateway[b])
        if key not in self.paths:
            ways = nx.all_shortest_paths(self.graph, *key)
            self.paths[key] = {router for way in ways for router in way}
        return self.paths[key]

    def shape(self) -> str:
        return self._shape

    @cached_property
    def _shape(self) -> str:
        edges, nodes = self.graph.number_of_edges(), self.graph.number_of_nodes()
        return "tree" if edges == nodes - 1 else "cycles"


def public_of(s: Scenario) -> Public:
    devices = {d.name: d for d in s.public.devices}
    routers = sorted(n for n, d in devices.items() if d.role == "router")
    hosts = sorted(n for n, d in devices.items() if d.role == "host")
    by_link = {link: members for link, members in s.public.links}
    graph = nx.Graph()
    graph.add_nodes_from(routers)
    ports, gateway, lans = {}, {}, {}
    for name, device in devices.items():
        for iface in device.interfaces:
            for peer in by_link[iface.link]:
                if peer != name:
                    ports[name, peer] = (iface.name, iface.address or "")
                    if name in routers and peer in routers:
                        graph.add_edge(name, peer)
                    if name in hosts:
                        gateway[name] = peer
                        lans[name] = str(ipaddress.ip_interface(iface.address).network)
    public = Public(
        s.family, s.level, s.public.brief, s.public.constraints, routers, hosts, graph,
        gateway, ports, lans, read_brief(s.public.brief),
    )  # fmt: skip
    for rule in s.public.constraints:
        for pattern in POLICY:
            if match := pattern.search(rule):
                public.server, public.admin = match["server"], match["admin_host"]
                public.web, public.admin_port = int(match["web"]), int(match["admin"])
    return public


# --- features of a device, given what the brief says --------------------------------------


def _bucket(n: int, top: int = 3) -> str:
    return str(min(n, top))


def instance_tokens(p: Public) -> list[str]:
    kinds = Counter(s.kind for s in p.seen)
    tokens = [f"kind:{k}" for k in sorted(kinds)]
    tokens += [f"lines:{_bucket(len(p.seen), 4)}", f"shape:{p.shape()}"]
    tokens += [f"hosts:{len(p.hosts)}", f"kinds:{'+'.join(sorted(kinds))}"]
    tokens += [f"size:{_bucket(len(p.routers) // 3, 5)}"]
    tokens += [
        f"{s.kind}-port:{'admin' if s.port == p.admin_port else 'web'}" for s in p.seen if s.port
    ]
    return tokens


def device_tokens(p: Public, device: str) -> list[str]:
    tokens = [f"place:{place}" for place in places(p, device)]
    if device in p.hosts:
        tokens.append("role:host")
        for seen in p.seen:
            if device in seen.hosts:
                position = seen.hosts.index(device)
                tokens.append(f"named:{seen.kind}:{position}")
        tokens.append(f"named:{sum(device in s.hosts for s in p.seen) > 0}")
        tokens.append(f"in-every-pair:{bool(p.pairs()) and all(device in x for x in p.pairs())}")
        if device == p.server:
            tokens.append("server")
        if device == p.admin:
            tokens.append("admin")
        return tokens
    tokens.append("role:router")
    tokens.append(f"degree:{_bucket(p.graph.degree(device), 4)}")
    served = [h for h, g in p.gateway.items() if g == device]
    tokens.append(f"gateway:{bool(served)}")
    for seen in p.seen:
        for position, host in enumerate(seen.hosts):
            if host in served:
                tokens.append(f"gateway-of:{seen.kind}:{position}")
        if len(seen.hosts) == 2:
            a, b = seen.hosts
            tokens.append(f"on-path:{seen.kind}:{device in p.on_paths(a, b)}")
            tokens.append(f"on-every-path:{seen.kind}:{device in p.on_every_path(a, b)}")
    if p.pairs():
        every = set.intersection(*(p.on_every_path(a, b) for a, b in p.pairs()))
        some = set.union(*(p.on_paths(a, b) for a, b in p.pairs()))
        tokens += [f"on-all-reported:{device in every}", f"on-any-reported:{device in some}"]
        common = set.intersection(*(set(x) for x in p.pairs()))
        tokens.append(f"gateway-of-common:{any(p.gateway[h] == device for h in common)}")
    named = {h for s in p.seen for h in s.hosts}
    counts = Counter(
        device in p.on_paths(a, b) for a, b in itertools.combinations(sorted(named), 2)
    )
    tokens.append(f"paths-crossed:{_bucket(counts[True])}")
    if named:
        near = min(p.distance(device, p.gateway[h]) for h in named)
        tokens.append(f"distance:{_bucket(near)}")
    if p.firewall:
        guarded = p.guarded
        tokens.append(f"server-gateway:{device == p.firewall}")
        tokens.append(f"guarded:{device in guarded}:{len(guarded)}")
        tokens.append(f"next-to-guarded:{any(p.graph.has_edge(device, g) for g in guarded)}")
        clients = [h for h in p.hosts if h != p.server]
        crossing = sum(device in p.on_every_path(c, p.server) for c in clients)
        tokens.append(f"clients-crossing:{crossing}/{len(clients)}")
    return tokens


# --- where a device sits, from the topology alone (all the baseline reads) ------------------


def places(p: Public, device: str) -> list[str]:
    """Where ``device`` sits, from the topology alone."""
    found = []
    if device in p.hosts:
        found.append(f"host#{p.hosts.index(device)}")
    for index, host in enumerate(p.hosts):
        if p.gateway[host] == device:
            found.append(f"gateway#{index}")
    if device in p.routers:
        found.append(f"router#{p.ranked.index(device)}")
    return found


def place_of(p: Public, place: str) -> str | None:
    kind, index = place.split("#")
    if kind == "host":
        return p.hosts[int(index)] if int(index) < len(p.hosts) else None
    if kind == "gateway":
        return p.gateway[p.hosts[int(index)]] if int(index) < len(p.hosts) else None
    return p.ranked[int(index)] if int(index) < len(p.ranked) else None
