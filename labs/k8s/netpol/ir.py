"""What the policies mean for each pod, with nothing left to look up: its isolation in each
direction and the traffic allowed through it, as address blocks and port ranges.

A connection from A to B on (protocol, port) is allowed when B's ingress admits A's address and
A's egress admits B's address, each on that protocol and port. A direction that is not isolated
admits everything; an isolated one admits what at least one of its `Allow` rules matches.
"""

from __future__ import annotations

from ipaddress import IPv4Address, IPv6Address

from pydantic import BaseModel, ConfigDict

from netdojo.labs.k8s.netpol.policy import Network
from netdojo.labs.k8s.objects import Protocol

Address = IPv4Address | IPv6Address


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class PortRange(_Frozen):
    """Ports ``first``..``last`` (inclusive) of one protocol."""

    protocol: Protocol
    first: int
    last: int

    def covers(self, protocol: Protocol, port: int) -> bool:
        return protocol == self.protocol and self.first <= port <= self.last


class AddressBlock(_Frozen):
    """A network minus the networks in ``excepts``: an ipBlock, or one pod's address."""

    network: Network
    excepts: tuple[Network, ...] = ()

    def contains(self, address: Address) -> bool:
        return address in self.network and not any(address in cut for cut in self.excepts)


class Allow(_Frozen):
    """Traffic to or from any of ``peers`` (``None``: any address) on any of ``ports``
    (``None``: all traffic, any protocol). ``origin`` names the policy rule it comes from."""

    origin: str
    peers: tuple[AddressBlock, ...] | None
    ports: tuple[PortRange, ...] | None

    def admits(self, address: Address, protocol: Protocol, port: int) -> bool:
        if self.peers is not None and not any(peer.contains(address) for peer in self.peers):
            return False
        return self.ports is None or any(r.covers(protocol, port) for r in self.ports)


class Direction(_Frozen):
    """One direction of one pod: isolated or not, and what its isolation lets through."""

    isolated: bool = False
    allows: tuple[Allow, ...] = ()

    def admits(self, address: Address, protocol: Protocol, port: int) -> bool:
        if not self.isolated:
            return True
        return any(allow.admits(address, protocol, port) for allow in self.allows)


class Listener(_Frozen):
    """A port a pod declares in its containers."""

    protocol: Protocol
    port: int


class PodRules(_Frozen):
    """Everything enforced in one pod's network namespace."""

    pod: str
    ip: Address | None
    listeners: tuple[Listener, ...] = ()
    ingress: Direction = Direction()
    egress: Direction = Direction()


class ClusterRules(_Frozen):
    """Every pod's rules, in the order of ``namespace/name``."""

    pods: tuple[PodRules, ...]

    def pod(self, key: str) -> PodRules:
        for rules in self.pods:
            if rules.pod == key:
                return rules
        raise KeyError(key)
