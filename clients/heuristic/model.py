"""What the agent knows: the public topology and the state it read from each device."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import Any

Net = ipaddress.IPv4Network
Iface = ipaddress.IPv4Interface


@dataclass
class Port:
    """One interface of the topology, with the address the task intends (if it gives one)."""

    device: str
    name: str
    link: str
    address: Iface | None


def _ipv4(address: str | None) -> Iface | None:
    """An IPv4 port address; None for none, and for an IPv6 one (whose network the fixes that
    read addresses leave alone: its family's fixes read the configurations)."""
    return ipaddress.IPv4Interface(address) if address and ":" not in address else None


@dataclass
class Topology:
    roles: dict[str, str]
    ports: dict[str, list[Port]]
    links: dict[str, list[str]]

    @classmethod
    def parse(cls, view: dict[str, Any]) -> Topology:
        roles: dict[str, str] = {}
        ports: dict[str, list[Port]] = {}
        for device in view["devices"]:
            roles[device["name"]] = device["role"]
            ports[device["name"]] = [
                Port(
                    device["name"],
                    iface["name"],
                    iface["link"],
                    _ipv4(iface.get("address")),
                )
                for iface in device["interfaces"]
            ]
        links = {link["name"]: list(link["devices"]) for link in view["links"]}
        return cls(roles, ports, links)

    @property
    def routers(self) -> list[str]:
        return sorted(n for n, r in self.roles.items() if r == "router")

    @property
    def hosts(self) -> list[str]:
        return sorted(n for n, r in self.roles.items() if r == "host")

    def port(self, device: str, link: str) -> Port | None:
        return next((p for p in self.ports[device] if p.link == link), None)

    def peers(self, device: str, link: str) -> list[str]:
        return [d for d in self.links.get(link, []) if d != device]

    def is_transit(self, link: str) -> bool:
        """A link between routers only."""
        members = self.links.get(link, [])
        return len(members) >= 2 and all(self.roles[m] == "router" for m in members)

    def lan_links(self) -> list[str]:
        return sorted(
            name
            for name, members in self.links.items()
            if any(self.roles[m] == "host" for m in members)
        )

    def gateway_port(self, link: str) -> Port | None:
        """The router port on a host LAN."""
        for member in self.links.get(link, []):
            if self.roles[member] == "router":
                return self.port(member, link)
        return None

    def known_networks(self) -> list[Net]:
        return sorted(
            {p.address.network for ps in self.ports.values() for p in ps if p.address},
            key=str,
        )


@dataclass
class StaticRoute:
    prefix: Net
    via: str  # a next-hop address, an interface name, or "blackhole"/"Null0"
    line: str


@dataclass
class RunningConfig:
    """The parts of an FRR running-config the fixes reason about."""

    interfaces: dict[str, list[str]] = field(default_factory=dict)
    ospf: list[str] | None = None
    rip: list[str] | None = None
    isis_process: str | None = None
    isis: list[str] = field(default_factory=list)
    ospf6: list[str] | None = None
    ipv6_forwarding_off: bool = False
    bgp_asn: int | None = None
    bgp: list[str] = field(default_factory=list)
    bgp_af: list[str] = field(default_factory=list)
    bgp6_af: list[str] | None = None  # the IPv6 unicast address family, where there is one
    statics: list[StaticRoute] = field(default_factory=list)
    prefix_lists: list[str] = field(default_factory=list)
    route_maps: list[str] = field(default_factory=list)
    route_map_sets: dict[str, list[str]] = field(default_factory=dict)  # name -> its lines

    @classmethod
    def parse(cls, text: str) -> RunningConfig:
        config = cls()
        block: list[str] | None = None  # where the indented lines that follow belong
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line.startswith("!"):
                continue
            indented = raw.startswith(" ")
            if not indented:
                block = config._top_level(line)
                continue
            if line == "exit":
                continue
            if isinstance(block, _BgpBlock):
                block.add(raw)
            elif block is not None:
                block.append(line)
        return config

    def _top_level(self, line: str) -> list[str] | None:
        """Handle an unindented line; return the block that its indented lines belong to."""
        if line.startswith("interface "):
            return self.interfaces.setdefault(line.split()[1], [])
        if line.startswith("router ospf6"):
            self.ospf6 = self.ospf6 or []
            return self.ospf6
        if line == "no ipv6 forwarding":
            self.ipv6_forwarding_off = True
            return None
        if line.startswith("router ospf"):
            self.ospf = self.ospf or []
            return self.ospf
        if line.startswith("router rip"):
            self.rip = self.rip or []
            return self.rip
        if match := re.match(r"router isis (\S+)", line):
            self.isis_process = match.group(1)
            return self.isis
        if match := re.match(r"router bgp (\d+)", line):
            self.bgp_asn = int(match.group(1))
            return _BgpBlock(self)
        if line.startswith("ip route "):
            parts = line.split()
            try:
                prefix = ipaddress.IPv4Network(parts[2], strict=False)
            except ValueError:
                return None
            if len(parts) > 3:
                self.statics.append(StaticRoute(prefix, parts[3], line))
            return None
        if line.startswith(("ip prefix-list ", "ipv6 prefix-list ")):
            self.prefix_lists.append(line)
        if line.startswith("route-map "):
            self.route_maps.append(line)
            return self.route_map_sets.setdefault(line.split()[1], [])
        return None

    # OSPF helpers ------------------------------------------------------------------
    def ospf_networks(self) -> list[tuple[Net, str, str]]:
        """(prefix, dotted area, line) of each `network` statement."""
        found = []
        for line in self.ospf or []:
            if match := re.match(r"network (\S+) area (\S+)", line):
                found.append(
                    (
                        ipaddress.IPv4Network(match.group(1), strict=False),
                        dotted(match.group(2)),
                        line,
                    )
                )
        return found

    def ospf_area_of(self, address: Iface) -> tuple[str, str] | None:
        """The area (and statement) enabling OSPF on an address: the longest covering prefix."""
        covering = [n for n in self.ospf_networks() if address.ip in n[0]]
        if not covering:
            return None
        best = max(covering, key=lambda n: n[0].prefixlen)
        return best[1], best[2]

    def passive(self, iface: str) -> str | None:
        """The line that makes an interface passive: FRR 8 shows it in the interface block."""
        if f"passive-interface {iface}" in (self.ospf or []):
            return "router"
        if "ip ospf passive" in self.interfaces.get(iface, []):
            return "interface"
        return None

    def iface_value(self, iface: str, prefix: str) -> str | None:
        """The rest of the last line of an interface block that starts with ``prefix``."""
        found = None
        for line in self.interfaces.get(iface, []):
            if line.startswith(prefix):
                found = line[len(prefix) :].strip()
        return found

    # BGP helpers -------------------------------------------------------------------
    def bgp_neighbors(self) -> dict[str, int]:
        peers = {}
        for line in self.bgp:
            if match := re.match(r"neighbor (\S+) remote-as (\d+)", line):
                peers[match.group(1)] = int(match.group(2))
        return peers

    def bgp_networks(self) -> list[Net]:
        return [
            ipaddress.IPv4Network(line.split()[1], strict=False)
            for line in self.bgp_af
            if line.startswith("network ")
        ]


class _BgpBlock(list):  # type: ignore[type-arg]
    """Collects `router bgp` lines, splitting the ipv4 and ipv6 unicast address families out."""

    def __init__(self, config: RunningConfig) -> None:
        super().__init__()
        self.config = config
        self.family: list[str] | None = None  # where the lines of the current family go

    def add(self, raw: str) -> None:
        """Address-family lines are indented twice; a once-indented line leaves the family."""
        line = raw.strip()
        depth = len(raw) - len(raw.lstrip())
        if line.startswith("address-family ") or line == "exit-address-family":
            self.family = None
            if line.startswith("address-family ipv4 unicast"):
                self.family = self.config.bgp_af
            elif line.startswith("address-family ipv6 unicast"):
                self.config.bgp6_af = self.config.bgp6_af or []
                self.family = self.config.bgp6_af
            return
        if depth < 2:
            self.family = None
        (self.config.bgp if self.family is None else self.family).append(line)


def dotted(area: str) -> str:
    return str(ipaddress.IPv4Address(int(area))) if area.isdigit() else area


@dataclass
class Link:
    """A kernel interface as `ip -j link` and `ip -j address` show it."""

    up: bool
    mtu: int
    addresses: list[Iface]


@dataclass
class DeviceState:
    name: str
    role: str
    links: dict[str, Link] = field(default_factory=dict)
    routes: list[dict[str, Any]] = field(default_factory=list)
    config: RunningConfig | None = None

    def addresses(self, iface: str) -> list[Iface]:
        link = self.links.get(iface)
        return link.addresses if link else []

    def default_gateway(self) -> str | None:
        for route in self.routes:
            if route.get("dst") == "default":
                return str(route.get("gateway") or route.get("type") or "?")
        return None

    def kernel_blackholes(self) -> list[Net]:
        """Blackholes added in the kernel directly (not FRR's static ones)."""
        found = []
        for route in self.routes:
            if route.get("type") == "blackhole" and route.get("protocol") not in (
                "static",
                "zebra",
            ):
                dst = route.get("dst", "")
                if dst and dst != "default":
                    found.append(ipaddress.IPv4Network(dst, strict=False))
        return found


@dataclass
class Snapshot:
    topo: Topology
    devices: dict[str, DeviceState]

    def config(self, router: str) -> RunningConfig:
        return self.devices[router].config or RunningConfig()

    def runs_ospf(self, router: str) -> bool:
        return self.config(router).ospf is not None

    def runs_isis(self, router: str) -> bool:
        return self.config(router).isis_process is not None

    def runs_bgp(self, router: str) -> bool:
        return self.config(router).bgp_asn is not None

    def runs_rip(self, router: str) -> bool:
        return self.config(router).rip is not None

    def runs_ospf6(self, router: str) -> bool:
        return self.config(router).ospf6 is not None

    def runs_bgp6(self, router: str) -> bool:
        """Whether ``router`` runs BGP with an IPv6 unicast address family."""
        return self.runs_bgp(router) and self.config(router).bgp6_af is not None

    def runs_protocol(self, router: str) -> bool:
        """Whether ``router`` runs any routing protocol."""
        runners = (self.runs_ospf, self.runs_isis, self.runs_bgp, self.runs_rip, self.runs_ospf6)
        return any(runs(router) for runs in runners)

    def loopback(self, router: str) -> Iface | None:
        for address in self.devices[router].addresses("lo"):
            if not address.ip.is_loopback:
                return address
        return None
