"""Decide connections from the compiled rules alone: one connection, or the whole matrix of
every ordered pair of distinct pods on each port the destination declares.

A pod's traffic to itself never leaves it (it goes over loopback, which is always accepted), so
it is allowed and left out of the matrix.
"""

from __future__ import annotations

from typing import NamedTuple

from netdojo.labs.k8s.netpol.ir import ClusterRules, PodRules
from netdojo.labs.k8s.objects import Protocol


class Flow(NamedTuple):
    """A connection from pod ``src`` to pod ``dst`` (both ``namespace/name``)."""

    src: str
    dst: str
    protocol: Protocol
    port: int

    @property
    def text(self) -> str:
        """``namespace/pod>namespace/pod:port/PROTOCOL``."""
        return f"{self.src}>{self.dst}:{self.port}/{self.protocol}"


def allowed(rules: ClusterRules, src: str, dst: str, protocol: Protocol, port: int) -> bool:
    return _allowed(rules.pod(src), rules.pod(dst), protocol, port)


def _allowed(src: PodRules, dst: PodRules, protocol: Protocol, port: int) -> bool:
    if src.pod == dst.pod:
        return True
    if src.ip is None or dst.ip is None:
        return False
    return src.egress.admits(dst.ip, protocol, port) and dst.ingress.admits(src.ip, protocol, port)


def matrix(rules: ClusterRules) -> dict[Flow, bool]:
    """Every pair of distinct pods with an address, on each port the destination declares."""
    pods = [pod for pod in rules.pods if pod.ip is not None]
    return {
        Flow(src.pod, dst.pod, listener.protocol, listener.port): _allowed(
            src, dst, listener.protocol, listener.port
        )
        for src in pods
        for dst in pods
        if src.pod != dst.pod
        for listener in dst.listeners
    }
