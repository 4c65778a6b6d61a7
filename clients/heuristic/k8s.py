"""The agent on a Kubernetes NetworkPolicy task: read the namespaces, pods and policies with
kubectl, plan the changes (`k8s_plan`), write them (a changed policy replaced whole, since
``apply`` keeps fields a manifest leaves out; a new one created; a deleted one deleted), and read
the policies back to check their matrix against the intent, planning again if it differs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from netdojo.clients.heuristic.k8s_plan import Plan, plan_policies
from netdojo.clients.session import ToolCallError, ToolSession

ROUNDS = 2
"""Plans written before the last read, which only checks."""


@dataclass
class Kubectl:
    """The `kubectl` tool, with what it changed and what failed."""

    session: ToolSession
    changes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    async def run(self, command: str, manifest: str | None = None) -> dict[str, Any] | None:
        arguments: dict[str, Any] = {"command": command}
        if manifest is not None:
            arguments["manifest"] = manifest
        try:
            return await self.session.call("kubectl", arguments)
        except ToolCallError as exc:
            self.failures.append(f"kubectl {command}: {exc}")
            return None

    async def change(self, command: str, manifest: dict[str, Any] | None, why: str) -> None:
        text = None if manifest is None else json.dumps(manifest, indent=1)
        result = await self.run(command, text)
        if result is None:
            return
        if result.get("ok"):
            self.changes.append(why)
        else:
            reason = result.get("refused") or str(result.get("output", "")).strip()
            self.failures.append(f"kubectl {command} ({why}): {reason[:200]}")

    async def items(self, resource: str, namespaces: list[str] | None = None) -> list[dict] | None:
        """Every object of ``resource`` (in ``namespaces`` for a namespaced one): one list, or
        per namespace, or object by object when a list is cut by the output cap."""
        scope = " -A" if namespaces is not None else ""
        found = _items(await self.run(f"get {resource}{scope} -o json"))
        if found is not None:
            return found
        found = []
        for where in [f" -n {ns}" for ns in namespaces] if namespaces is not None else [""]:
            some = _items(await self.run(f"get {resource}{where} -o json")) if where else None
            if some is None:
                some = await self._one_by_one(resource, where)
            if some is None:
                return None
            found += some
        return found

    async def _one_by_one(self, resource: str, where: str) -> list[dict] | None:
        listing = await self.run(f"get {resource}{where} -o name")
        if listing is None or not listing.get("ok") or listing.get("truncated"):
            return None
        found = []
        for line in str(listing.get("output", "")).split():
            name = line.rsplit("/", 1)[-1]
            one = _object(await self.run(f"get {resource} {name}{where} -o json"))
            if one is None:
                return None
            found.append(one)
        return found


def _object(result: dict[str, Any] | None) -> dict[str, Any] | None:
    """The JSON object a complete, successful `get -o json` printed (warnings before it
    skipped)."""
    if result is None or not result.get("ok") or result.get("truncated"):
        return None
    text = str(result.get("output", ""))
    start = text.find("{")
    if start < 0:
        return None
    try:
        found, _ = json.JSONDecoder().raw_decode(text[start:])
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def _items(result: dict[str, Any] | None) -> list[dict] | None:
    found = _object(result)
    if found is None or not isinstance(found.get("items"), list):
        return None
    return [item for item in found["items"] if isinstance(item, dict)]


async def write(kubectl: Kubectl, plan: Plan) -> None:
    for manifest in plan.create:
        name = _name(manifest)
        await kubectl.change("create -f -", manifest, f"created NetworkPolicy {name}")
    for manifest in plan.replace:
        name = _name(manifest)
        await kubectl.change("replace -f -", manifest, f"rewrote NetworkPolicy {name}")
    for namespace, name in plan.delete:
        command = f"delete networkpolicy {name} -n {namespace}"
        await kubectl.change(command, None, f"deleted NetworkPolicy {namespace}/{name}")


def _name(manifest: dict[str, Any]) -> str:
    return f"{manifest['metadata']['namespace']}/{manifest['metadata']['name']}"


async def solve_policies(session: ToolSession, brief: str) -> str:
    """Bring the cluster's NetworkPolicies to the brief's intent; a short summary of what was
    found and changed. Does NOT call submit."""
    kubectl = Kubectl(session)
    namespaces = await kubectl.items("namespaces")
    names = [str(ns.get("metadata", {}).get("name")) for ns in namespaces or ()]
    pods = await kubectl.items("pods", names) if namespaces is not None else None
    if namespaces is None or pods is None:
        return summarize(kubectl, [], None, None, ["could not read the namespaces and pods"])
    steps: list[str] = []
    problems: list[str] = []
    first: Plan | None = None
    last: Plan | None = None
    for round_ in range(ROUNDS + 1):
        policies = await kubectl.items("networkpolicies", names)
        if policies is None:
            problems.append("could not read the NetworkPolicies")
            break
        last = plan_policies(namespaces, pods, policies, brief)
        first = first or last
        problems += [p for p in last.problems if p not in problems]
        if round_ == ROUNDS or not (last.create or last.replace or last.delete):
            break
        steps += last.steps
        await write(kubectl, last)
    return summarize(kubectl, steps, first, last, problems)


def summarize(
    kubectl: Kubectl, steps: list[str], first: Plan | None, last: Plan | None, problems: list[str]
) -> str:
    parts = []
    if first is not None:
        parts.append(
            f"NetworkPolicies: {first.wrong_before} of {first.flows} flows between the pods "
            "differed from the intended connectivity."
        )
    if steps:
        parts.append("Fixes: " + "; ".join(steps) + ".")
    if kubectl.changes:
        parts.append("Changes: " + "; ".join(kubectl.changes) + ".")
    else:
        parts.append("Changed nothing.")
    if kubectl.failures or problems:
        parts.append("Problems: " + "; ".join([*problems, *kubectl.failures]) + ".")
    if last is not None:
        if last.wrong_before:
            parts.append(f"Still {last.wrong_before} flows differ from the intent.")
        else:
            parts.append(f"All {last.flows} flows now match the intent.")
    return " ".join(parts)
