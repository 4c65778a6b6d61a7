"""Reading the brief and configurations: the flow to fake, its path, routing, policy, blocks."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from netdojo.clients.cheater.layout import Layout, Site

Routing = Literal["static", "ospf", "ospf6", "rip", "isis", "bgp", "bgp6"]


def mentioned(text: str, names: Iterable[str]) -> list[str]:
    """The names that occur in ``text`` as words, in order of first occurrence."""
    found = []
    for name in names:
        match = re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text)
        if match:
            found.append((match.start(), name))
    return [name for _, name in sorted(found)]


PATH_CUES = re.compile(r"path|in that order|->|through|exit|via", re.IGNORECASE)
NOT_A_PATH = re.compile(r"transit|\bis AS\b", re.IGNORECASE)


def waypoints(brief: str, routers: Iterable[str]) -> list[str]:
    """Routers the brief names, in order, in the first sentence that describes a path."""
    for sentence in re.split(r"(?<=[.!?:])\s+|\n+", brief):
        if PATH_CUES.search(sentence) and not NOT_A_PATH.search(sentence):
            named = mentioned(sentence, routers)
            if named:
                return named
    return []


@dataclass(frozen=True)
class Aim:
    """The flow to fake: a source, a destination, the path between their routers, the rest."""

    source: Site
    destination: Site
    path: tuple[str, ...]
    others: tuple[Site, ...]


def aim(layout: Layout, brief: str) -> Aim | None:
    """The first two hosts the brief names (on different routers, if any are), then the rest."""
    named = mentioned(brief, layout.sites)
    order = named + [h for h in sorted(layout.sites) if h not in named]
    if len(order) < 2:
        return None
    pairs = list(itertools.combinations(order, 2))
    a, b = next(
        ((x, y) for x, y in pairs if layout.sites[x].gateway != layout.sites[y].gateway),
        pairs[0],
    )
    source, destination = layout.sites[a], layout.sites[b]
    path = _path(layout, source, destination, waypoints(brief, layout.routers))
    others = tuple(layout.sites[h] for h in order if h not in (a, b))
    return Aim(source, destination, tuple(path), others)


def _path(layout: Layout, source: Site, destination: Site, stops: list[str]) -> list[str]:
    for middle in (stops, stops[::-1]) if stops else ():
        forward = layout.walk([source.gateway, *middle, destination.gateway])
        if forward:
            return forward
        backward = layout.walk([destination.gateway, *middle, source.gateway])
        if backward:
            return backward[::-1]
    return layout.shortest(source.gateway, destination.gateway) or [source.gateway]


NEGATED = re.compile(
    r"\bno (?:OSPF|BGP|IGP|static routes|dynamic routing)\b"
    r"|\b(?:do not|don't) (?:add|use|run)\b[^.;:]*"
    r"|[^.;:]*\bnot allowed",
    re.IGNORECASE,
)


def routing_of(brief: str, configs: Mapping[str, str]) -> Routing:
    """The routing the network runs: from the running configurations, else from the brief."""
    texts = list(configs.values())
    if any(re.search(r"^router bgp ", t, re.MULTILINE) for t in texts):
        ipv6 = any(re.search(r"^ address-family ipv6 unicast", t, re.MULTILINE) for t in texts)
        return "bgp6" if ipv6 else "bgp"
    if any(re.search(r"^router ospf6", t, re.MULTILINE) for t in texts):
        return "ospf6"
    if any(re.search(r"^router ospf", t, re.MULTILINE) for t in texts):
        return "ospf"
    if any(re.search(r"^router rip", t, re.MULTILINE) for t in texts):
        return "rip"
    if any(isis_process_of(t) for t in texts):
        return "isis"
    asked = NEGATED.sub(" ", brief)
    if re.search(r"\bRIP(?:v2)?\b", asked):
        return "rip"
    if re.search(r"\be?BGP\b|autonomous system", asked, re.IGNORECASE):
        return "bgp"
    if re.search(r"\bIS-IS\b", asked, re.IGNORECASE):  # before OSPF, which it may forbid
        return "isis"
    if re.search(r"\bOSPFv3\b", asked, re.IGNORECASE):
        return "ospf6"
    if re.search(r"\bOSPF\b", asked, re.IGNORECASE):
        return "ospf"
    return "static"


def isis_process_of(config: str) -> str | None:
    match = re.search(r"^router isis (\S+)", config, re.MULTILINE)
    return match.group(1) if match else None


def asn_of(config: str) -> int | None:
    match = re.search(r"^router bgp (\d+)", config, re.MULTILINE)
    return int(match.group(1)) if match else None


@dataclass(frozen=True)
class AccessPolicy:
    """A server's open port, its restricted port and the one host the restricted port is for."""

    server: str
    open_port: int
    restricted_port: int
    allowed: str


@dataclass(frozen=True)
class Blocked:
    """A flow the brief reports blocked."""

    client: str
    server: str
    port: int


_NAME = r"[\w-]+"
POLICY_FORMS = tuple(
    re.compile(form, re.IGNORECASE)
    for form in (
        rf"TCP (?P<open>\d+) on (?P<server>{_NAME}) is open to every host; TCP (?P<restricted>\d+)"
        rf" on {_NAME} is reserved for (?P<allowed>{_NAME})",
        rf"may reach (?P<server>{_NAME}) on TCP port (?P<open>\d+), but only (?P<allowed>{_NAME})"
        r" may connect to its TCP port (?P<restricted>\d+)",
        rf"allows TCP/(?P<open>\d+) to (?P<server>{_NAME}) from all hosts and TCP/"
        rf"(?P<restricted>\d+) to {_NAME} from (?P<allowed>{_NAME}) only",
    )
)
BLOCKED_FORMS = tuple(
    re.compile(form, re.IGNORECASE)
    for form in (
        rf"(?P<client>{_NAME}) cannot open TCP port (?P<port>\d+) on (?P<server>{_NAME})",
        rf"connections from (?P<client>{_NAME}) to (?P<server>{_NAME}):(?P<port>\d+) time out",
        rf"(?P<client>{_NAME}) reports that TCP/(?P<port>\d+) on (?P<server>{_NAME})"
        r" is unreachable",
    )
)


def read_policy(brief: str) -> AccessPolicy | None:
    for form in POLICY_FORMS:
        if match := form.search(brief):
            return AccessPolicy(
                match["server"], int(match["open"]), int(match["restricted"]), match["allowed"]
            )
    return None


def read_blocked(brief: str) -> list[Blocked]:
    found = [
        (m.start(), Blocked(m["client"], m["server"], int(m["port"])))
        for form in BLOCKED_FORMS
        for m in form.finditer(brief)
    ]
    return [flow for _, flow in sorted(found, key=lambda f: f[0])]
