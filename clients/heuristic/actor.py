"""State-changing calls, recorded so the summary can say what changed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from netdojo.clients.session import ToolCallError, ToolSession


@dataclass
class Actor:
    session: ToolSession
    changes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    done: set[str] = field(default_factory=set)

    async def configure(self, device: str, lines: Sequence[str], why: str) -> bool:
        """Apply FRR lines; True when every line was accepted."""
        key = f"configure {device} {list(lines)}"
        if key in self.done:
            return True
        self.done.add(key)
        try:
            result = await self.session.call("configure", {"device": device, "lines": list(lines)})
        except ToolCallError as exc:
            self.failures.append(f"{device}: {why}: {exc}")
            return False
        rejected = [r for r in result.get("lines", []) if not r.get("accepted")]
        self.changes.append(f"{device}: {why}")
        if rejected:
            self.failures.append(f"{device}: {why}: rejected {[r['line'] for r in rejected]}")
        return not rejected

    async def execute(self, device: str, command: str, why: str) -> bool:
        key = f"execute {device} {command}"
        if key in self.done:
            return True
        self.done.add(key)
        try:
            result = await self.session.call("execute", {"device": device, "command": command})
        except ToolCallError as exc:
            self.failures.append(f"{device}: {why}: {exc}")
            return False
        self.changes.append(f"{device}: {why} ({command})")
        if not result.get("ok"):
            self.failures.append(f"{device}: {command}: {result.get('stderr', '').strip()}")
            return False
        return True
