"""The matrix of a policy set against the intent, kept up to date edit by edit.

netdojo's compiler decides each flow as the cluster enforces it. A pod's rules depend only on
the policies that select it, so an edit to one policy is scored by compiling again only the pods
that policy selects (before or after the edit) and deciding again only their flows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from netdojo.clients.heuristic.k8s_intent import Intent
from netdojo.labs.k8s.netpol.cluster import Cluster
from netdojo.labs.k8s.netpol.compiler import compile_cluster
from netdojo.labs.k8s.netpol.evaluate import Flow
from netdojo.labs.k8s.netpol.ir import PodRules
from netdojo.labs.k8s.netpol.policy import NetworkPolicy
from netdojo.labs.k8s.objects import Namespace, Pod
from netdojo.labs.k8s.selectors import Requirement

Manifest = dict[str, Any]
MARK = "heuristic.netdojo.dev/compiled"
MARKED = Requirement(key=MARK, operator="Exists")


def parse_policy(manifest: Mapping[str, Any]) -> NetworkPolicy | None:
    """The policy a manifest writes, or None when the API server would refuse it."""
    try:
        return NetworkPolicy.model_validate(manifest)
    except ValidationError:
        return None


class Evaluator:
    """The pods, namespaces and intent one search works over."""

    def __init__(self, namespaces: Sequence[Namespace], pods: Sequence[Pod], intent: Intent):
        self.namespaces = tuple(namespaces)
        self.pods = tuple(sorted(pods, key=lambda pod: pod.key))
        self.intent = intent
        self.touching: dict[str, list[Flow]] = {}
        for flow in intent:
            self.touching.setdefault(flow.src, []).append(flow)
            self.touching.setdefault(flow.dst, []).append(flow)

    def compile(self, policies: Sequence[NetworkPolicy]) -> dict[str, PodRules]:
        cluster = Cluster(namespaces=self.namespaces, pods=self.pods, policies=tuple(policies))
        return {rules.pod: rules for rules in compile_cluster(cluster).pods}

    def compile_only(
        self, policies: Sequence[NetworkPolicy], keys: frozenset[str]
    ) -> dict[str, PodRules]:
        """The rules of the pods ``keys``. The compiler compiles every pod a policy selects, so
        these pods carry a mark the policies are narrowed to; no peer reads the mark."""
        marked = tuple(_marked(pod) if pod.key in keys else pod for pod in self.pods)
        narrowed = tuple(_narrowed(policy) for policy in policies)
        cluster = Cluster(namespaces=self.namespaces, pods=marked, policies=narrowed)
        return {rules.pod: rules for rules in compile_cluster(cluster).pods if rules.pod in keys}

    def selected(self, policy: NetworkPolicy) -> set[str]:
        return {
            pod.key
            for pod in self.pods
            if pod.namespace == policy.namespace and policy.spec.pod_selector.matches(pod.labels)
        }

    def state(self, manifests: Sequence[Manifest]) -> State:
        parsed = [parse_policy(manifest) for manifest in manifests]
        if any(policy is None for policy in parsed):
            raise ValueError("a live policy does not parse")
        policies = [policy for policy in parsed if policy is not None]
        rules = self.compile(policies)
        wrong = {flow for flow, want in self.intent.items() if verdict(rules, flow) != want}
        return State(self, list(manifests), policies, rules, wrong)


def _marked(pod: Pod) -> Pod:
    labels = {**pod.labels, MARK: ""}
    return pod.model_copy(update={"metadata": pod.metadata.model_copy(update={"labels": labels})})


def _narrowed(policy: NetworkPolicy) -> NetworkPolicy:
    selector = policy.spec.pod_selector
    expressions = (*(selector.match_expressions or ()), MARKED)
    narrow = selector.model_copy(update={"match_expressions": expressions})
    spec = policy.spec.model_copy(update={"pod_selector": narrow})
    return policy.model_copy(update={"spec": spec})


def verdict(rules: Mapping[str, PodRules], flow: Flow) -> bool:
    src, dst = rules[flow.src], rules[flow.dst]
    if src.ip is None or dst.ip is None:
        return False
    return src.egress.admits(dst.ip, flow.protocol, flow.port) and dst.ingress.admits(
        src.ip, flow.protocol, flow.port
    )


@dataclass
class State:
    """A policy set (manifests and their parsed form, in one order), its rules and the flows
    whose verdict differs from the intent."""

    evaluator: Evaluator
    manifests: list[Manifest]
    policies: list[NetworkPolicy]
    rules: dict[str, PodRules]
    wrong: set[Flow]

    def index(self, namespace: str, name: str) -> int:
        return next(
            i for i, p in enumerate(self.policies) if (p.namespace, p.name) == (namespace, name)
        )

    def edited(self, index: int, manifest: Manifest | None) -> State | None:
        """The state with policy ``index`` replaced by ``manifest`` (deleted for None); None
        when the manifest is not a valid policy."""
        old = self.policies[index]
        new = None if manifest is None else parse_policy(manifest)
        if manifest is not None and (new is None or new.key != old.key):
            return None
        policies = list(self.policies)
        manifests = list(self.manifests)
        if new is None or manifest is None:
            del policies[index], manifests[index]
        else:
            policies[index], manifests[index] = new, manifest
        ev = self.evaluator
        affected = ev.selected(old) | (ev.selected(new) if new is not None else set())
        if not affected:
            return State(ev, manifests, policies, self.rules, self.wrong)
        relevant = [
            p for p in policies if p.namespace == old.namespace and ev.selected(p) & affected
        ]
        rules = {**self.rules, **ev.compile_only(relevant, frozenset(affected))}
        flows = {flow for key in affected for flow in ev.touching.get(key, ())}
        wrong = {flow for flow in self.wrong if flow not in flows}
        wrong.update(flow for flow in flows if verdict(rules, flow) != ev.intent[flow])
        return State(ev, manifests, policies, rules, wrong)

    def allowed(self) -> set[Flow]:
        return {flow for flow in self.evaluator.intent if verdict(self.rules, flow)}
