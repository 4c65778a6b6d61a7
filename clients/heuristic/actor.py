"""State-changing calls, recorded so the summary can say what changed and the diagnosis where
and what the faults were. With ``read_only`` (a diagnosis task, whose tools change nothing) a
change is only noted as a finding, never called."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from netdojo.clients.session import ToolCallError, ToolSession

POLICY_WORDS = (
    "cost", "network statement", "not announced", "not in ospf", "maximum-prefix", "filtered",
    "prefix", "route-map", "local-pref", "prepend", "redistribut", "next-hop", "loopback",
)  # fmt: skip
"""What a routing repair's reason says when routes were shaped wrongly, not a neighbour lost."""


def fault_class(area: str, device: str, why: str, hosts: frozenset[str]) -> str:
    """The class of the fault a change repairs, from the kind of repair under way (``area``),
    the device and the reason given."""
    if area == "routing":
        said = why.lower()
        return "routing_policy" if any(word in said for word in POLICY_WORDS) else "adjacency"
    if area in ("addressing", "link") and device in hosts:
        return "host_config"
    return area


@dataclass
class Actor:
    session: ToolSession
    changes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    done: set[str] = field(default_factory=set)
    read_only: bool = False
    hosts: frozenset[str] = frozenset()
    area: str = "routing"  # the kind of repair under way, set by the caller
    findings: dict[str, set[str]] = field(default_factory=dict)  # device -> fault classes

    def note(self, device: str, why: str) -> None:
        """Record a fault found on ``device``, repaired or (read-only) only seen."""
        kind = fault_class(self.area, device, why, self.hosts)
        self.findings.setdefault(device, set()).add(kind)

    def _dry(self, device: str, why: str) -> bool:
        self.note(device, why)
        self.changes.append(f"{device}: {why} (not changed: the tools are read-only)")
        return True

    async def configure(self, device: str, lines: Sequence[str], why: str) -> bool:
        """Apply FRR lines; True when every line was accepted."""
        key = f"configure {device} {list(lines)}"
        if key in self.done:
            return True
        self.done.add(key)
        if self.read_only:
            return self._dry(device, why)
        try:
            result = await self.session.call("configure", {"device": device, "lines": list(lines)})
        except ToolCallError as exc:
            self.failures.append(f"{device}: {why}: {exc}")
            return False
        rejected = [r for r in result.get("lines", []) if not r.get("accepted")]
        self.changes.append(f"{device}: {why}")
        self.note(device, why)
        if rejected:
            self.failures.append(f"{device}: {why}: rejected {[r['line'] for r in rejected]}")
        return not rejected

    async def execute(self, device: str, command: str, why: str) -> bool:
        key = f"execute {device} {command}"
        if key in self.done:
            return True
        self.done.add(key)
        if self.read_only:
            return self._dry(device, why)
        try:
            result = await self.session.call("execute", {"device": device, "command": command})
        except ToolCallError as exc:
            self.failures.append(f"{device}: {why}: {exc}")
            return False
        self.changes.append(f"{device}: {why} ({command})")
        self.note(device, why)
        if not result.get("ok"):
            self.failures.append(f"{device}: {command}: {result.get('stderr', '').strip()}")
            return False
        return True

    async def service(self, device: str, service: str, config: str | None, why: str) -> bool:
        """Restart one of the lab's services on ``device``, with ``config`` as its new
        configuration when given; True when it runs again."""
        if self.read_only:
            return self._dry(device, why)
        arguments: dict[str, object] = {"device": device, "service": service}
        if config is not None:
            arguments["config"] = config
        try:
            result = await self.session.call("service", arguments)
        except ToolCallError as exc:
            self.failures.append(f"{device}: {service}: {exc}")
            return False
        self.changes.append(f"{device}: {why}")
        self.note(device, why)
        if result.get("running") is False:
            self.failures.append(f"{device}: {service} did not start: {result.get('output', '')}")
        return bool(result.get("ok"))
