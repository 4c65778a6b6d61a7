"""`LabSpec`: a pure, serialisable description of a lab (devices, links, limits).

A spec holds no live handle; `netdojo.labs.runtime` turns it into a running lab.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)

from netdojo.labs.errors import LabSpecError
from netdojo.labs.k8s.workload import Workload
from netdojo.labs.names import DEVICE_PATTERN, NAME_PATTERN

DEFAULT_IMAGE = "netdojo/device"
"""Symbolic image name: resolved at deploy time to the provisioned device image."""

_NAME_RE = re.compile(NAME_PATTERN)
_DEVICE_RE = re.compile(DEVICE_PATTERN)


class Limits(BaseModel):
    """Per-device resource limits; every device gets them by default."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    memory_mib: int = Field(256, description="memory limit in MiB")
    cpus: float = Field(0.5, description="CPU share, in cores")
    pids: int = Field(256, description="maximum number of processes")


class Ulimit(BaseModel):
    """A resource limit of the device's processes; -1 is unlimited."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    soft: int
    hard: int


class PortSpec(BaseModel):
    """A device port reachable from the host, on its loopback address only."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    host: int = Field(description="port on 127.0.0.1 of the host")
    device: int = Field(description="port on the device's own loopback address")
    protocol: Literal["tcp", "udp"] = "tcp"


ULIMIT_NAMES = frozenset(
    {
        "as", "core", "cpu", "data", "fsize", "locks", "memlock", "msgqueue", "nice", "nofile",
        "nproc", "rss", "rtprio", "rttime", "sigpending", "stack",
    }
)  # fmt: skip
"""The resource limits Docker knows by name."""

OPTIONAL_SETTINGS = ("env", "ulimits", "ports", "macs", "depends_on")
"""Device settings written out only when set, so specs that use none serialise as before."""


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
    env: dict[str, str] = Field(
        default_factory=dict, description="environment variables of the device's processes"
    )
    ulimits: dict[str, Ulimit] = Field(
        default_factory=dict, description="resource limit name (nofile, nproc, ...) -> limit"
    )
    ports: list[PortSpec] = Field(default_factory=list)
    macs: dict[int, str] = Field(
        default_factory=dict, description="interface index -> MAC address of that interface"
    )
    depends_on: list[str] = Field(
        default_factory=list, description="devices started before this one (Kathará's lab.dep)"
    )

    @model_serializer(mode="wrap")
    def _omit_unset(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for key in OPTIONAL_SETTINGS:
            if key in data and not data[key]:
                del data[key]
        return data


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
    kubernetes: Workload | None = Field(
        default=None,
        description="the workload whose pods some devices are, held on a control plane of the "
        "lab's own",
    )

    @model_serializer(mode="wrap")
    def _omit_unset(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("kubernetes") is None:
            data.pop("kubernetes", None)
        return data

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
INTERFACE_SYSCTL = re.compile(r"^net\.ipv[46]\.(conf|neigh)\.eth(?P<index>\d+)\.")
"""A sysctl of one interface, as Kathará recognises it."""


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
        if not _DEVICE_RE.match(name):
            problems.append(f"device name {name!r} must match {DEVICE_PATTERN}")
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
        problems.extend(_setting_problems(dev))
    if spec.kubernetes is not None:
        problems.extend(
            f"pod {pod.name!r} has no device {pod.device!r}"
            for pod in spec.kubernetes.pods
            if pod.device not in names
        )
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
    problems.extend(_mac_problems(spec, seen))
    problems.extend(_interface_sysctl_problems(spec, seen))
    problems.extend(_port_clashes(spec))
    problems.extend(_dependency_problems(spec))
    return problems


_ENV_RE = re.compile(r"^[A-Za-z0-9_]+$")
_MAC_RE = re.compile(r"^([0-9a-f]{2}:){5}[0-9a-f]{2}$")


def _setting_problems(dev: DeviceSpec) -> list[str]:
    out = []
    for key, value in dev.env.items():
        if not _ENV_RE.match(key):
            out.append(f"device {dev.name!r}: environment variable {key!r} must be a word")
        if "\n" in value:
            out.append(f"device {dev.name!r}: environment variable {key} holds a line break")
    for key, limit in dev.ulimits.items():
        if key not in ULIMIT_NAMES:
            out.append(
                f"device {dev.name!r}: ulimit {key!r} is not one of "
                f"{', '.join(sorted(ULIMIT_NAMES))}"
            )
        if min(limit.soft, limit.hard) < -1 or (limit.hard != -1 and limit.soft > limit.hard):
            out.append(
                f"device {dev.name!r}: ulimit {key} {limit.soft}:{limit.hard} must have "
                "-1 (unlimited) <= soft <= hard"
            )
    for port in dev.ports:
        for number in (port.host, port.device):
            if not 1 <= number <= 65535:
                out.append(f"device {dev.name!r}: port {number} must be within 1..65535")
    if dev.name in dev.depends_on:
        out.append(f"device {dev.name!r} depends on itself")
    return out


def _mac_problems(spec: LabSpec, links: dict[tuple[str, int], str]) -> list[str]:
    out = []
    on_link: dict[tuple[str, str], str] = {}
    for dev in spec.devices:
        for index, mac in sorted(dev.macs.items()):
            where = f"device {dev.name!r}: MAC address {mac!r} of eth{index}"
            if (dev.name, index) not in links:
                out.append(f"{where}: the device has no eth{index}")
            elif not _MAC_RE.match(mac):
                out.append(f"{where} must be six lower-case hex pairs such as 02:42:0a:00:00:01")
            elif int(mac[:2], 16) & 1:
                out.append(f"{where} is a multicast address; use a unicast one (even first octet)")
            else:
                link = links[dev.name, index]
                other = on_link.setdefault((link, mac), f"{dev.name} eth{index}")
                if other != f"{dev.name} eth{index}":
                    out.append(f"{where} is also the MAC of {other} on link {link!r}")
    return out


def _interface_sysctl_problems(spec: LabSpec, links: dict[tuple[str, int], str]) -> list[str]:
    out = []
    for dev in spec.devices:
        for key in dev.sysctls:
            found = INTERFACE_SYSCTL.match(key)
            if found and (dev.name, int(found["index"])) not in links:
                out.append(
                    f"device {dev.name!r}: sysctl {key!r} names eth{found['index']}, "
                    "which the device does not have"
                )
    return out


def _port_clashes(spec: LabSpec) -> list[str]:
    out = []
    taken: dict[tuple[int, str], str] = {}
    for dev in spec.devices:
        for port in dev.ports:
            key = (port.host, port.protocol)
            if key in taken:
                out.append(
                    f"device {dev.name!r}: host port {port.host}/{port.protocol} "
                    f"is already given to {taken[key]!r}"
                )
            taken.setdefault(key, dev.name)
    return out


def _dependency_problems(spec: LabSpec) -> list[str]:
    known = {d.name for d in spec.devices}
    out = [
        f"device {dev.name!r} depends on unknown device {other!r}"
        for dev in spec.devices
        for other in dev.depends_on
        if other not in known
    ]
    if not out:
        _, stuck = _ordered(spec)
        if stuck:
            out.append(f"devices {', '.join(stuck)} depend on each other in a loop")
    return out


def start_order(spec: LabSpec) -> list[str]:
    """Device names, each after the devices it depends on, otherwise in spec order."""
    order, _ = _ordered(spec)
    return order


def _ordered(spec: LabSpec) -> tuple[list[str], list[str]]:
    """The start order, and the devices left out of it because their dependencies loop."""
    pending = {d.name: set(d.depends_on) for d in spec.devices}
    order: list[str] = []
    while pending:
        ready = [name for name, needs in pending.items() if needs <= set(order)]
        if not ready:
            break
        order.extend(ready)
        for name in ready:
            del pending[name]
    return order, sorted(pending)


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
