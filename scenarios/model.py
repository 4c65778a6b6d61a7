"""The `Scenario` model: a public half an agent may see and a hidden half only the judge sees.

Everything here is pure data. Hidden tests are `Probe`s (what to check, on which device, with
what expectation); `netdojo.judges` executes them on a live lab.
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from netdojo.labs.spec import LabSpec

Kind = Literal["reactive", "constructive"]
LAB_TOOLS = ("topology", "show", "configure", "execute", "ping", "traceroute", "capture")
"""The tools over a lab that every scenario offers, in the order they are listed."""
STANDARD_TOOLS = (*LAB_TOOLS, "submit")
"""What an evaluated agent is served unless its family adds tools: the lab tools and `submit`."""
ProbeKind = Literal[
    "ping",  # device pings params.target: expect success (params.expect, default True)
    "route",  # device has params.prefix selected (params.expect), optionally via params.via
    # (params.sole: via nothing else)
    "ospf_full",  # device has params.neighbor (router-id) in Full state (params.expect)
    "config",  # device's running-config has params.pattern (params.expect)
    "link_up",  # device's interface params.interface is up (params.expect)
    "default_route",  # device's default route goes via params.gateway (None: no default route)
    "address",  # device's params.interface carries params.address (params.expect)
    "bgp_session",  # device's BGP session with params.peer (address) is Established
    "tcp",  # device can open a TCP connection to params.target:params.port (params.expect)
    "bgp_route",  # device has params.prefix selected and no BGP path for it from params.not_from
    "path",  # device's traceroute to params.target crosses params.routers, in order, and
    # arrives; params.owners maps each router address to its router
]


class ToolCall(BaseModel):
    """One call of an agent-facing tool, as the reference solution records it."""

    model_config = ConfigDict(frozen=True)

    tool: Literal["configure", "execute"]
    arguments: dict[str, Any]


def configure(device: str, *lines: str) -> ToolCall:
    return ToolCall(tool="configure", arguments={"device": device, "lines": list(lines)})


def execute(device: str, command: str) -> ToolCall:
    return ToolCall(tool="execute", arguments={"device": device, "command": command})


class Probe(BaseModel):
    """A hidden test: an id, a human description, and what to check where."""

    model_config = ConfigDict(frozen=True)

    id: str
    description: str
    kind: ProbeKind
    device: str
    params: dict[str, Any] = Field(default_factory=dict)


class Fault(BaseModel):
    type: str = Field(description="fault type id, e.g. ospf.area_mismatch")
    device: str
    params: dict[str, Any] = Field(default_factory=dict)
    inject: list[ToolCall]
    fix: list[ToolCall]
    present: list[Probe] = Field(description="all hold while the fault is active")
    red_herring: bool = False


class InterfaceFacts(BaseModel):
    name: str
    link: str
    address: str | None = None


class DeviceFacts(BaseModel):
    name: str
    role: Literal["router", "host"]
    interfaces: list[InterfaceFacts]


class PublicHalf(BaseModel):
    brief: str
    devices: list[DeviceFacts]
    links: list[tuple[str, list[str]]] = Field(description="link name and the devices on it")
    constraints: list[str] = Field(default_factory=list)


class HiddenHalf(BaseModel):
    lab: LabSpec = Field(description="the lab as deployed, before any fault")
    faults: list[Fault] = Field(default_factory=list)
    solution: list[ToolCall]
    targets: list[Probe]
    guards: list[Probe]
    adherence: list[Probe] = Field(default_factory=list)


class Scenario(BaseModel):
    id: str
    family: str
    level: int
    seed: int
    kind: Kind
    public: PublicHalf
    hidden: HiddenHalf

    def digest(self) -> str:
        """A hash of the whole instance, recorded with every result."""
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()[:16]


def scenario_id(family: str, level: int, seed: int) -> str:
    return hashlib.sha256(f"{family}/{level}/{seed}".encode()).hexdigest()[:12]
