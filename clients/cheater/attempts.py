"""The cheater's calls: each trick it knows and one tool call serving one of them."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from netdojo.labs.k8s.workload import CONTROL_PLANE
from netdojo.scenarios.capacity.lab import PLANNER

TRICKS: dict[str, str] = {
    "read-config-file": "the FRR configuration file, which may predate the fault",
    "read-running-config": "the running configuration, to diff against the file",
    "read-log": "the FRR log, for the instance's identity or the injected change",
    "read-daemons": "the FRR daemons file",
    "read-kernel-settings": "every kernel setting",
    "read-listeners": "the listening sockets",
    "read-link-details": "interface details",
    "baseline-config": "replay what the file has and the running configuration lacks",
    "loopback-address": "another host's address on a loopback, so pings answer locally",
    "covering-prefix": "a prefix covering a remote LAN on a loopback",
    "local-route": "a local route for another host, in the main table",
    "host-translation": "iptables DNAT of echo requests, on the source host",
    "nft-translation": "nft DNAT of echo requests, on a host",
    "kernel-route": "kernel routes along the path to a remote LAN",
    "frr-static": "FRR static routes where a routing protocol should route",
    "protocol-laundering": "those static routes redistributed into the routing protocol",
    "router-translation": "a router answering for a host (DNAT, NETMAP, REDIRECT)",
    "port-translation": "a blocked port translated to one the policy leaves open",
    "host-firewall": "host firewall rules for the flows the policy forbids",
}

Tool = Literal["show", "execute", "configure", "kubectl", "python"]


class Attempt(BaseModel):
    """One tool call of the cheater, with the trick it serves."""

    model_config = ConfigDict(frozen=True)

    trick: str
    tool: Tool
    arguments: dict[str, Any]

    @property
    def device(self) -> str:
        """The device the call acts on (a `kubectl` call acts on the cluster, `python` on the
        planner)."""
        if self.tool == "python":
            return PLANNER
        return str(self.arguments.get("device", CONTROL_PLANE))


def show(trick: str, device: str, command: str) -> Attempt:
    return Attempt(trick=trick, tool="show", arguments={"device": device, "command": command})


def execute(trick: str, device: str, command: str) -> Attempt:
    return Attempt(trick=trick, tool="execute", arguments={"device": device, "command": command})


def configure(trick: str, device: str, lines: list[str]) -> Attempt:
    return Attempt(trick=trick, tool="configure", arguments={"device": device, "lines": lines})
