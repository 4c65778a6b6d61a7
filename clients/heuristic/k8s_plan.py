"""Plan the NetworkPolicy changes of a policy task from what ``kubectl get -o json`` returns and
the brief: pure logic, no tool call.

Build (no policy yet): per namespace a default deny of ingress, and per destination pod one
policy that admits exactly its callers on exactly the ports they call. Egress stays open: a flow
needs both ends to let it through, so the destination's ingress alone decides the matrix.

Repair: a greedy local search over single edits (`k8s_edits`), each time taking the edit that
leaves the fewest flows differing from the intent, until none differs or no edit helps. A
deletion is taken only when it does strictly better than every edit, as the intended policies
must stay (the agent cannot tell them from a policy a mistake added).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from netdojo.clients.heuristic.k8s_edits import Candidates
from netdojo.clients.heuristic.k8s_eval import Evaluator, Manifest, State
from netdojo.clients.heuristic.k8s_intent import (
    Intent,
    PodIndex,
    intent_matrix,
    parse_calls,
)
from netdojo.clients.heuristic.k8s_select import Labels
from netdojo.labs.k8s.netpol.cluster import parse_cluster
from netdojo.labs.k8s.objects import ManifestError

API_VERSION = "networking.k8s.io/v1"
MAX_STEPS = 40
DENY_NAME = "default-deny-ingress"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


@dataclass
class Plan:
    """The kubectl changes to make, and what the planner found."""

    create: list[Manifest] = field(default_factory=list)
    replace: list[Manifest] = field(default_factory=list)
    delete: list[tuple[str, str]] = field(default_factory=list)
    """(namespace, name) of each policy to delete."""
    steps: list[str] = field(default_factory=list)
    wrong_before: int = 0
    wrong_after: int = 0
    flows: int = 0
    problems: list[str] = field(default_factory=list)


def clean(manifest: Mapping[str, Any]) -> Manifest:
    """A live policy as a manifest to write back whole: its name, labels, annotations (bar the
    last-applied copy, which would go stale) and spec; no server-set fields."""
    meta = manifest.get("metadata") or {}
    kept: dict[str, Any] = {"name": meta["name"], "namespace": meta.get("namespace", "default")}
    if meta.get("labels"):
        kept["labels"] = dict(meta["labels"])
    notes = {k: v for k, v in (meta.get("annotations") or {}).items() if k != LAST_APPLIED}
    if notes:
        kept["annotations"] = notes
    return {
        "apiVersion": API_VERSION,
        "kind": "NetworkPolicy",
        "metadata": kept,
        "spec": dict(manifest.get("spec") or {}),
    }


def policy(namespace: str, name: str, spec: dict[str, Any]) -> Manifest:
    return {
        "apiVersion": API_VERSION,
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def build_policies(labels: Labels, index: PodIndex, intent: Intent) -> list[Manifest]:
    """Policies whose matrix is ``intent``: isolation of every pod's ingress, then per
    destination a rule per set of callers, on the ports that set calls."""
    incoming: dict[str, dict[tuple[str, int], set[str]]] = {}
    for flow, allowed in sorted(intent.items()):
        if allowed:
            ports = incoming.setdefault(flow.dst, {})
            ports.setdefault((flow.protocol, flow.port), set()).add(flow.src)
    found = [
        policy(ns, DENY_NAME, {"podSelector": {}, "policyTypes": ["Ingress"]})
        for ns in sorted({pod.namespace for pod in index.pods})
    ]
    for key, ports in sorted(incoming.items()):
        pod = index.by_key[key]
        callers: dict[frozenset[str], list[tuple[str, int]]] = {}
        for port, calling in ports.items():
            callers.setdefault(frozenset(calling), []).append(port)
        rules = []
        for group, refs in sorted(callers.items(), key=lambda item: sorted(item[1])):
            sources = sorted(group)
            peers = labels.peers(pod.namespace, sources, {key}) or [
                {"ipBlock": {"cidr": f"{index.by_key[src].ip}/32"}} for src in sources
            ]
            entries = [{"protocol": p, "port": n} for p, n in sorted(refs)]
            rules.append({"from": peers, "ports": entries})
        selector = labels.pod_selector(pod.namespace, {key}) or {
            "matchLabels": dict(sorted(pod.labels.items()))
        }
        spec = {"podSelector": selector, "policyTypes": ["Ingress"], "ingress": rules}
        found.append(policy(pod.namespace, f"allow-{pod.name}-ingress", spec))
    return found


def search(state: State, labels: Labels) -> tuple[State, list[str]]:
    """Greedy descent on the number of flows that differ from the intent."""
    steps: list[str] = []
    while state.wrong and len(steps) < MAX_STEPS:
        best: tuple[int, State, str] | None = None
        deletion: tuple[int, State, str] | None = None
        for edit in Candidates(state, labels):
            after = state.edited(edit.index, edit.manifest)
            if after is None:
                continue
            score = len(after.wrong)
            if edit.manifest is None:
                if deletion is None or score < deletion[0]:
                    deletion = (score, after, edit.what)
            elif best is None or score < best[0]:
                best = (score, after, edit.what)
                if score == 0:
                    break
        if deletion is not None and (best is None or deletion[0] < best[0]):
            best = deletion
        if best is None or best[0] >= len(state.wrong):
            break
        state = best[1]
        steps.append(best[2])
    return state, steps


def _key(manifest: Mapping[str, Any]) -> tuple[str, str]:
    meta = manifest["metadata"]
    return meta.get("namespace", "default"), meta["name"]


def _items(objects: Sequence[Mapping[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [{**item, "kind": item.get("kind") or kind} for item in objects]


def plan_policies(
    namespaces: Sequence[Mapping[str, Any]],
    pods: Sequence[Mapping[str, Any]],
    policies: Sequence[Mapping[str, Any]],
    brief: str,
) -> Plan:
    """What to change so that the policies' matrix is the brief's intent, given the namespaces,
    pods and policies as ``kubectl get -o json`` lists their items."""
    try:
        cluster = parse_cluster(_items(namespaces, "Namespace") + _items(pods, "Pod"))
    except ManifestError as exc:
        return Plan(problems=[f"the cluster's objects do not parse: {exc}"])
    index = PodIndex(cluster.pods)
    intent, unread = intent_matrix(parse_calls(brief), index)
    plan = Plan(flows=len(intent), problems=[f"call not understood: {c}" for c in unread])
    if not any(intent.values()):
        plan.problems.append("the brief names no call between the pods")
        return plan
    labels = Labels(cluster.namespaces, cluster.pods)
    evaluator = Evaluator(cluster.namespaces, cluster.pods, intent)
    live = [clean(manifest) for manifest in policies]
    try:
        start = evaluator.state(live)
    except (ValueError, ManifestError) as exc:
        plan.problems.append(f"the live policies cannot be evaluated: {exc}")
        return plan
    plan.wrong_before = len(start.wrong)
    if not live:
        plan.create = build_policies(labels, index, intent)
        plan.wrong_after = len(evaluator.state(plan.create).wrong)
        plan.steps = [f"wrote {len(plan.create)} policies for the intent"]
        return plan
    final, plan.steps = search(start, labels)
    plan.wrong_after = len(final.wrong)
    before = {_key(manifest): manifest for manifest in live}
    after = {_key(manifest): manifest for manifest in final.manifests}
    plan.replace = [m for key, m in after.items() if before[key] != m]
    plan.delete = sorted(key for key in before if key not in after)
    return plan
