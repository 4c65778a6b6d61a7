"""Built-in purple agents that calibrate the judge: `noop`, `vandal`, `oracle`, and `cheater`
(in `netdojo.clients.cheater`).

Each is a policy: given a tool session and the view of its episode (`netdojo.tools.contract`),
it works and returns a summary. `oracle` replays the reference solution and so needs the
scenario's identity, which a view carries only in calibration runs; it exists to audit
scenarios and calibrate the judge.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Awaitable, Callable

import yaml

from netdojo.clients.cheater import cheater
from netdojo.clients.session import Session, ToolCallError, ToolSession
from netdojo.scenarios.taxonomy import Diagnosis, root_cause
from netdojo.tools.contract import EpisodeView
from netdojo.tools.trajectory import ModelRecord

Policy = Callable[[ToolSession, EpisodeView], Awaitable[str]]


def model_record(policy: object) -> ModelRecord | None:
    """What the model of a policy driven by one did (its ``record``, kept also when its run
    raised); None for a policy without a model."""
    record = getattr(policy, "record", None)
    return record if isinstance(record, ModelRecord) else None


async def noop(session: ToolSession, task: EpisodeView) -> str:
    return "did nothing"


async def vandal(session: ToolSession, task: EpisodeView) -> str:
    """Takes transit links down and drops forwarding on a few routers, chosen by the brief; on
    a Kubernetes application, isolates every pod of every namespace; on a planning model,
    deletes every other entity without a thought for what they contain."""
    tools = {tool.name for tool in await session.list_tools()}
    if "kubectl" in tools:
        return await _isolate_every_pod(session)
    if "python" in tools:
        await session.call("python", {"code": CARELESS_DELETE})
        return "deleted every other entity of the model"
    topology = await session.call("topology")
    rng = random.Random(hashlib.sha256(task.brief.encode()).hexdigest())
    routers = [d for d in topology["devices"] if d["role"] == "router"]
    done = []
    for router in rng.sample(routers, k=min(2, len(routers))):
        port = rng.choice(router["interfaces"])["name"]
        for command in (f"ip link set dev {port} down", "iptables -P FORWARD DROP"):
            try:
                await session.call("execute", {"device": router["name"], "command": command})
                done.append(f"{router['name']}: {command}")
            except ToolCallError:
                continue
    return "; ".join(done)


CARELESS_DELETE = """
import json
model = json.load(open("model.json"))
gone = {e["name"] for e in model["entities"][1::2]}
model["entities"] = [e for e in model["entities"] if e["name"] not in gone]
json.dump(model, open("model.json", "w"))
"""
"""Every other entity removed, the relations naming them left dangling."""


async def _isolate_every_pod(session: ToolSession) -> str:
    """Policies add up, so isolating a namespace leaves its allows in force: every policy is
    also rewritten with no rule at all."""
    listed = await session.call("kubectl", {"command": "get namespaces -o name"})
    namespaces = [line.split("/", 1)[1] for line in str(listed.get("output", "")).split()]
    done = await _strip_policies(session)
    for namespace in namespaces:
        if namespace.startswith("kube-") or namespace == "default":
            continue
        if await _deny_everything(session, "apply", namespace, "deny-everything"):
            done.append(f"{namespace}: every pod isolated")
    return "; ".join(done)


async def _deny_everything(session: ToolSession, verb: str, namespace: str, name: str) -> bool:
    """Make ``namespace``/``name`` a policy isolating every pod of its namespace both ways."""
    manifest = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]},
    }
    arguments = {"command": f"{verb} -f -", "manifest": yaml.safe_dump(manifest)}
    try:
        await session.call("kubectl", arguments)
    except ToolCallError:
        return False
    return True


async def _strip_policies(session: ToolSession) -> list[str]:
    command = (
        "get networkpolicies -A --no-headers "
        "-o custom-columns=NS:.metadata.namespace,N:.metadata.name"
    )
    listed = await session.call("kubectl", {"command": command})
    done = []
    for line in str(listed.get("output", "")).splitlines():
        if len(words := line.split()) != 2:
            continue
        namespace, name = words
        if await _deny_everything(session, "replace", namespace, name):
            done.append(f"{namespace}/{name}: every rule removed")
    return done


async def oracle(session: ToolSession, task: EpisodeView) -> str:
    """Applies the reference solution of the scenario named in the task (calibration only),
    when its tools allow changes, and submits the true root cause as its diagnosis."""
    from netdojo.scenarios.generate import generate

    if task.scenario is None:
        raise ValueError("the oracle needs the scenario's identity (a calibration run)")
    ref = task.scenario
    scenario = generate(ref.family, ref.level, ref.seed)
    offered = {tool.name for tool in await session.list_tools()}
    solution = scenario.hidden.solution
    applied = all(call.tool in offered for call in solution)
    for call in solution if applied else []:
        await session.call(call.tool, call.arguments)
    summary = f"applied the reference solution ({len(solution)} calls)" if applied else ""
    if scenario.kind != "reactive":
        return summary
    truth = root_cause(scenario.hidden.faults)
    diagnosis = Diagnosis(locations=sorted(truth.devices), classes=sorted(truth.classes))
    said = "nothing is wrong" if truth.devices == set() else f"the root cause is {diagnosis}"
    await submit_diagnosis(session, f"{summary}; {said}".strip("; "), diagnosis)
    return summary or said


async def submit_diagnosis(session: Session, summary: str, diagnosis: Diagnosis) -> None:
    """Submit ``summary`` with a structured root cause."""
    arguments = {"summary": summary, "diagnosis": diagnosis.model_dump(mode="json")}
    await session.call("submit", arguments)


POLICIES: dict[str, Policy] = {
    "noop": noop,
    "vandal": vandal,
    "oracle": oracle,
    "cheater": cheater,
}
