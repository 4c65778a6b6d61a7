"""The `Scenario` model: a public half an agent may see and a hidden half only the judge sees.

Everything here is pure data. Hidden tests (`scenarios.hidden_tests`: what to check, on which
device, with what expectation) are executed on a live lab by `netdojo.judges`.
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from netdojo.labs.spec import LabSpec
from netdojo.scenarios.hidden_tests import HiddenTest

Kind = Literal["reactive", "constructive"]
LAB_TOOLS = ("topology", "show", "configure", "execute", "ping", "traceroute", "capture")
"""The tools over a lab that every scenario offers, in the order they are listed."""
STANDARD_TOOLS = (*LAB_TOOLS, "submit")
"""What an evaluated agent is served unless its family adds tools: the lab tools and `submit`."""
KUBERNETES_TOOLS = (
    "topology", "show", "ping", "connect", "traceroute", "capture", "kubectl", "submit",
)  # fmt: skip
"""A Kubernetes application's tools: its pods change only through the API server's objects."""
SERVICE_TOOLS = (*LAB_TOOLS, "service", "submit")
"""A lab with DHCP and DNS servers: the lab tools, `service` to manage them, and `submit`."""
PLANNING_TOOLS = ("python", "submit")
"""A planning model's tools: code run on the model in its device, and `submit`."""


class ToolCall(BaseModel):
    """One call of an agent-facing tool, as a fault's injection and fix and the reference
    solution record it: any registered tool that can act on a lab (a family's own tool too),
    its arguments checked by that tool's arguments model when applied (`netdojo.tools`)."""

    model_config = ConfigDict(frozen=True)

    tool: str
    arguments: dict[str, Any]


def configure(device: str, *lines: str) -> ToolCall:
    return ToolCall(tool="configure", arguments={"device": device, "lines": list(lines)})


def execute(device: str, command: str) -> ToolCall:
    return ToolCall(tool="execute", arguments={"device": device, "command": command})


class Fault(BaseModel):
    type: str = Field(description="fault type id, e.g. ospf.area_mismatch")
    device: str
    params: dict[str, Any] = Field(default_factory=dict)
    inject: list[ToolCall]
    fix: list[ToolCall]
    present: list[HiddenTest] = Field(description="all hold while the fault is active")
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


class Cascade(BaseModel):
    """Two faults of an instance where one masks the other: while ``masking`` is present, the
    fault at ``masked`` shows nothing of its own; once ``masking`` is repaired (its fix comes
    first in the solution), the host ``pairs`` the masked fault breaks still fail and the
    ``revived`` pairs work again (indices are into `HiddenHalf.faults`)."""

    masking: int
    masked: int
    pairs: list[tuple[str, str]]
    revived: list[tuple[str, str]]


class HiddenHalf(BaseModel):
    lab: LabSpec = Field(description="the lab as deployed, before any fault")
    faults: list[Fault] = Field(default_factory=list)
    solution: list[ToolCall]
    targets: list[HiddenTest]
    guards: list[HiddenTest]
    adherence: list[HiddenTest] = Field(default_factory=list)
    healthy: bool = Field(
        default=False,
        exclude_if=lambda healthy: not healthy,  # a faulted instance's hash stays as it was
        description="a healthy control: nothing is wrong, and the right answer changes nothing",
    )
    cascade: Cascade | None = Field(
        default=None,
        exclude_if=lambda cascade: cascade is None,  # an instance without one hashes as before
        description="a fault that masks another (level 3 only)",
    )


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
