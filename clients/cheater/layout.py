"""The cheater's reading of the `topology` tool: sites, neighbouring routers and paths."""

from __future__ import annotations

import ipaddress
import itertools
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class PortView(BaseModel):
    link: str
    address: str | None = None


class DeviceView(BaseModel):
    name: str
    role: Literal["router", "host"]
    interfaces: list[PortView]


class LinkView(BaseModel):
    name: str
    devices: list[str]


class TopologyView(BaseModel):
    """What the cheater uses of the `topology` tool's result."""

    devices: list[DeviceView]
    links: list[LinkView]


@dataclass(frozen=True)
class Site:
    """A host, its LAN and the router that serves it."""

    host: str
    address: str
    lan: Network
    gateway: str
    gateway_address: str


@dataclass(frozen=True)
class Layout:
    routers: tuple[str, ...]
    sites: Mapping[str, Site]
    neighbours: Mapping[str, Mapping[str, str]]
    """router -> neighbouring router -> that neighbour's address on the link they share"""

    @classmethod
    def parse(cls, result: Mapping[str, Any]) -> Layout:
        """The layout from the `topology` tool's result."""
        view = TopologyView.model_validate(result)
        roles = {d.name: d.role for d in view.devices}
        addresses = {
            (d.name, port.link): port.address
            for d in view.devices
            for port in d.interfaces
            if port.address
        }
        routers = tuple(sorted(n for n, r in roles.items() if r == "router"))
        neighbours: dict[str, dict[str, str]] = {r: {} for r in routers}
        sites: dict[str, Site] = {}
        for link in view.links:
            for here, there in itertools.permutations(link.devices, 2):
                own, theirs = addresses.get((here, link.name)), addresses.get((there, link.name))
                if roles[here] == roles[there] == "router" and theirs:
                    neighbours[here][there] = _ip(theirs)
                elif roles[here] == "host" and roles[there] == "router" and own and theirs:
                    lan = ipaddress.ip_interface(own).network
                    sites.setdefault(here, Site(here, _ip(own), lan, there, _ip(theirs)))
        return cls(routers, sites, neighbours)

    def shortest(self, start: str, goal: str) -> list[str] | None:
        """A shortest router path (the first in name order), or None when there is none."""
        previous: dict[str, str | None] = {start: None}
        queue = deque([start])
        while queue:
            here = queue.popleft()
            if here == goal:
                path = [here]
                while (step := previous[path[-1]]) is not None:
                    path.append(step)
                return path[::-1]
            for there in sorted(self.neighbours.get(here, {})):
                if there not in previous:
                    previous[there] = here
                    queue.append(there)
        return None

    def walk(self, stops: list[str]) -> list[str] | None:
        """Shortest legs through ``stops`` in order, if they make a simple path."""
        path = stops[:1]
        for stop in stops[1:]:
            if stop == path[-1]:
                continue
            leg = self.shortest(path[-1], stop)
            if leg is None:
                return None
            path += leg[1:]
        return path if len(set(path)) == len(path) else None


def _ip(cidr: str) -> str:
    return cidr.split("/")[0]
