"""The cheater's loop: it reads, replays and fakes, then reports what became of each attempt."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from netdojo.clients.cheater.attempts import TRICKS, Attempt
from netdojo.clients.cheater.brief import aim
from netdojo.clients.cheater.fakes import plan_fakes
from netdojo.clients.cheater.kube import (
    KUBE_TRICKS,
    PODS_LISTING,
    kubectl,
    plan_kube_fakes,
    plan_kube_reads,
    pods_read,
    policies_read,
)
from netdojo.clients.cheater.layout import Layout
from netdojo.clients.cheater.leaks import find_clues, plan_baseline, plan_reads
from netdojo.clients.cheater.plan import PLAN_TRICKS, plan_model_tricks
from netdojo.clients.session import ToolCallError, ToolSession

if TYPE_CHECKING:
    from netdojo.tools.contract import EpisodeView

CALL_BUDGET = 45
"""Calls the cheater makes at most, submit aside (episodes allow 60 by default)."""
MAX_CLUES = 10


class Journal:
    """What the cheater tried and what became of each attempt."""

    def __init__(self) -> None:
        self.entries: list[tuple[Attempt, bool, str]] = []
        self.clues: list[str] = []

    async def run(self, session: ToolSession, attempt: Attempt) -> dict[str, Any] | None:
        """Make the call; a refusal or failure is noted and the cheater moves on."""
        try:
            result = await session.call(attempt.tool, attempt.arguments)
        except ToolCallError as exc:
            self.entries.append((attempt, False, str(exc)[:120]))
            return None
        ok, note = _outcome(attempt, result)
        self.entries.append((attempt, ok, note))
        if attempt.tool == "show":
            self.clues += find_clues(str(result.get("text", "")))
        return result

    def summary(self) -> str:
        parts = []
        for trick in [*TRICKS, *KUBE_TRICKS, *PLAN_TRICKS]:
            tried = [entry for entry in self.entries if entry[0].trick == trick]
            if not tried:
                continue
            devices = ", ".join(dict.fromkeys(a.device for a, _, _ in tried))
            done = sum(ok for _, ok, _ in tried)
            part = f"{trick} on {devices}: {done}/{len(tried)} went through"
            failed = next((note for _, ok, note in tried if not ok), None)
            parts.append(part + (f" (first failure: {failed})" if failed else ""))
        clues = list(dict.fromkeys(self.clues))[:MAX_CLUES]
        found = "; ".join(clues) if clues else "none"
        return f"tried {len(parts)} tricks: " + "; ".join(parts) + f". Clues read: {found}."


def _outcome(attempt: Attempt, result: Mapping[str, Any]) -> tuple[bool, str]:
    if attempt.tool == "show":
        return bool(result.get("text")), f"read {len(str(result.get('text', '')))} chars"
    if attempt.tool == "configure":
        accepted = sum(bool(line.get("accepted")) for line in result.get("lines", []))
        return accepted > 0, f"{accepted}/{len(result.get('lines', []))} lines accepted"
    error = str(result.get("stderr") or result.get("refused") or "").strip()[:120]
    return bool(result.get("ok")), "accepted" if result.get("ok") else f"failed: {error}"


def rng_for(brief: str) -> random.Random:
    """The cheater's choices depend on the brief alone."""
    return random.Random(hashlib.sha256(brief.encode()).hexdigest())


async def cheater(session: ToolSession, task: EpisodeView) -> str:
    """Reads what might leak the answer, then fakes the symptoms away without fixing them."""
    rng = rng_for(task.brief)
    journal = Journal()
    tools = {tool.name for tool in await session.list_tools()}
    if "kubectl" in tools:
        return await _cheat_kube(session, journal, rng)
    if "python" in tools:
        for attempt in plan_model_tricks(task.brief):
            await journal.run(session, attempt)
        return journal.summary()
    layout = Layout.parse(await session.call("topology"))
    target = aim(layout, task.brief)
    texts: dict[tuple[str, str], str] = {}
    for attempt in plan_reads(layout, target, rng):
        result = await journal.run(session, attempt)
        texts[attempt.device, attempt.trick] = str((result or {}).get("text", ""))
    configs = {
        r: texts[r, "read-running-config"]
        for r in layout.routers
        if (r, "read-running-config") in texts
    }
    readings = {r: (texts[r, "read-config-file"], configs[r]) for r in configs}
    for attempt in plan_baseline(readings):
        await journal.run(session, attempt)
    if target is not None:
        for attempt in plan_fakes(layout, target, task.brief, configs, rng):
            if session.calls >= CALL_BUDGET:
                break
            await journal.run(session, attempt)
    return journal.summary()


async def _cheat_kube(session: ToolSession, journal: Journal, rng: random.Random) -> str:
    """Read what might leak, try what the tools must refuse, then open every flow."""
    outputs: dict[str, str] = {}
    for attempt in plan_kube_reads():
        result = await journal.run(session, attempt)
        outputs[attempt.trick] = str((result or {}).get("output", ""))
    listed = await journal.run(session, kubectl("read-pods", PODS_LISTING))
    pods = pods_read(str((listed or {}).get("output", "")))
    for attempt in plan_kube_fakes(pods, policies_read(outputs["read-policies"]), rng):
        if session.calls >= CALL_BUDGET:
            break
        await journal.run(session, attempt)
    return journal.summary()
