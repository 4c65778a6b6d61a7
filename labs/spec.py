"""`LabSpec`: a pure, serialisable description of a lab (devices, links, limits).

A spec holds no live handle; `netdojo.labs.runtime` turns it into a running lab.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from netdojo.labs.errors import LabSpecError

DEFAULT_IMAGE = "netdojo/device"
"""Symbolic image name: resolved at deploy time to the provisioned device image."""

NAME_PATTERN = r"^[a-z][a-z0-9_-]{0,29}$"
_NAME_RE = re.compile(NAME_PATTERN)


class Limits(BaseModel):
    """Per-device resource limits; every device gets them by default."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    memory_mib: int = Field(256, description="memory limit in MiB")
    cpus: float = Field(0.5, description="CPU share, in cores")
    pids: int = Field(256, description="maximum number of processes")


class DeviceSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    role: Literal["router", "host"] = "router"
    image: str = DEFAULT_IMAGE
    files: dict[str, str] = Field(
        default_factory=dict, description="absolute path inside the device -> file content"
    )
    startup: list[str] = Field(
        default_factory=list, description="shell lines run once at boot, in order"
    )
    limits: Limits = Field(default_factory=Limits)
    ipv6: bool = False
    sysctls: dict[str, int | str] = Field(
        default_factory=dict, description="net.* kernel settings of the device's namespace"
    )


class LinkSpec(BaseModel):
    """A collision domain; ``endpoints`` lists ``(device, interface index)`` pairs."""

    model_config = ConfigDict(extra="forbid")

    name: str
    endpoints: list[tuple[str, int]]


class LabSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="lab name; made unique per deployment by the runtime")
    devices: list[DeviceSpec]
    links: list[LinkSpec] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> LabSpec:
        problems = spec_problems(self)
        if problems:
            raise ValueError("\n".join(problems))
        return self

    @classmethod
    def build(cls, **data: object) -> LabSpec:
        """Validate ``data``; on failure raise one `LabSpecError` that lists every problem."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise LabSpecError(_flatten(exc)) from None

    def device(self, name: str) -> DeviceSpec:
        for dev in self.devices:
            if dev.name == name:
                return dev
        raise KeyError(name)

    def interfaces(self, device: str) -> list[tuple[int, str]]:
        """``(interface index, link name)`` pairs of ``device``, in interface order."""
        found = [
            (idx, link.name) for link in self.links for dev, idx in link.endpoints if dev == device
        ]
        return sorted(found)


_SYSCTL_RE = re.compile(r"^net(\.[\w-]+)+$")


def spec_problems(spec: LabSpec) -> list[str]:
    problems: list[str] = []
    names = [d.name for d in spec.devices]
    if not spec.devices:
        problems.append("a lab needs at least one device")
    if not _NAME_RE.match(spec.name):
        problems.append(f"lab name {spec.name!r} must match {NAME_PATTERN}")
    for name, count in Counter(names).items():
        if count > 1:
            problems.append(f"device name {name!r} is used {count} times")
    for name in names:
        if not _NAME_RE.match(name):
            problems.append(f"device name {name!r} must match {NAME_PATTERN}")
    for dev in spec.devices:
        problems.extend(_limit_problems(dev))
        for path in dev.files:
            if not path.startswith("/") or ".." in path.split("/"):
                problems.append(
                    f"device {dev.name!r}: file path {path!r} must be absolute, without '..'"
                )
        for sysctl in dev.sysctls:
            if not _SYSCTL_RE.match(sysctl):
                problems.append(f"device {dev.name!r}: sysctl {sysctl!r} must be a net.* key")
    link_names = [link.name for link in spec.links]
    for name, count in Counter(link_names).items():
        if count > 1:
            problems.append(f"link name {name!r} is used {count} times")
    known = set(names)
    seen: dict[tuple[str, int], str] = {}
    for link in spec.links:
        if not _NAME_RE.match(link.name):
            problems.append(f"link name {link.name!r} must match {NAME_PATTERN}")
        if not link.endpoints:
            problems.append(f"link {link.name!r} has no endpoints")
        for device, idx in link.endpoints:
            if device not in known:
                problems.append(f"link {link.name!r} names unknown device {device!r}")
            if idx < 0:
                problems.append(f"link {link.name!r}: interface {idx} of {device!r} is negative")
            key = (device, idx)
            if key in seen:
                problems.append(
                    f"interface eth{idx} of {device!r} is on both {seen[key]!r} and {link.name!r}"
                )
            seen[key] = link.name
    for name in names:
        indexes = sorted(idx for d, idx in seen if d == name)
        if indexes and indexes != list(range(len(indexes))):
            problems.append(
                f"interfaces of {name!r} must be numbered eth0..eth{len(indexes) - 1} "
                f"with no gap; got {indexes}"
            )
    return problems


def _limit_problems(dev: DeviceSpec) -> list[str]:
    out = []
    if not 16 <= dev.limits.memory_mib <= 65536:
        out.append(
            f"device {dev.name!r}: memory_mib {dev.limits.memory_mib} must be within 16..65536"
        )
    if not 0.01 <= dev.limits.cpus <= 64:
        out.append(f"device {dev.name!r}: cpus {dev.limits.cpus} must be within 0.01..64")
    if not 16 <= dev.limits.pids <= 32768:
        out.append(f"device {dev.name!r}: pids {dev.limits.pids} must be within 16..32768")
    return out


def _flatten(exc: ValidationError) -> list[str]:
    problems: list[str] = []
    for err in exc.errors():
        if err["type"] == "value_error":
            message = str(err["msg"]).removeprefix("Value error, ")
            problems.extend(message.splitlines())
        else:
            loc = ".".join(str(part) for part in err["loc"]) or "lab"
            problems.append(f"{loc}: {err['msg']}")
    return problems
