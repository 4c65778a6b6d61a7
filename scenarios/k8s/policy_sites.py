"""Where a policy fault can be placed: the policy set of an application with its compiled rules
and matrix (`Sites`), the paths into a policy's rules, and what a candidate fault is
(`Mutation`): an edited copy of a policy (injected by applying the copy, fixed by applying the
original) or an added policy (fixed by deleting it).
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from ipaddress import ip_address
from typing import Any

from pydantic import BaseModel, ConfigDict

from netdojo.labs.k8s.netpol.evaluate import Flow
from netdojo.labs.k8s.netpol.ir import ClusterRules
from netdojo.labs.k8s.objects import NAME_LABEL, Protocol
from netdojo.labs.k8s.selectors import LabelSelector
from netdojo.labs.k8s.workload import PodPlan
from netdojo.scenarios.k8s.app import App
from netdojo.scenarios.k8s.policy import policy

Path = tuple[str | int, ...]
"""Keys and indices from a policy manifest down to one of its parts."""


class PolicyRef(BaseModel):
    model_config = ConfigDict(frozen=True)

    namespace: str
    name: str


class PolicyChange(BaseModel):
    """What ``kubectl`` does: apply these manifests (``apply -f -``), delete these policies."""

    model_config = ConfigDict(frozen=True)

    apply: tuple[dict[str, Any], ...] = ()
    delete: tuple[PolicyRef, ...] = ()


def _any(flows: list[Flow]) -> bool:
    return True


@dataclass
class Mutation:
    ref: PolicyRef
    what: str
    inject: PolicyChange
    fix: PolicyChange
    accepts: Callable[[list[Flow]], bool] = _any


def ref_of(manifest: Mapping[str, Any]) -> PolicyRef:
    return PolicyRef(namespace=manifest["metadata"]["namespace"], name=manifest["metadata"]["name"])


def at(obj: Any, path: Path) -> Any:
    for step in path:
        obj = obj[step]
    return obj


def compact(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


def policy_types(spec: Mapping[str, Any]) -> list[str]:
    """The directions a policy isolates, with the API server's default."""
    return list(
        spec.get("policyTypes") or (["Ingress", "Egress"] if spec.get("egress") else ["Ingress"])
    )


@dataclass
class Sites:
    """What a fault's candidates are drawn from."""

    app: App
    policies: list[dict[str, Any]]
    rules: ClusterRules
    matrix: dict[Flow, bool]
    rng: random.Random
    avoid: Collection[PolicyRef]

    def __post_init__(self) -> None:
        self.keys = {pod.name: f"{pod.namespace}/{pod.name}" for pod in self.app.workload.pods}
        self.pod_rules = {rules.pod: rules for rules in self.rules.pods}
        self.callers = {call.src for call in self.app.calls}

    def editable(self) -> Iterator[tuple[int, dict[str, Any]]]:
        for index, manifest in enumerate(self.policies):
            if ref_of(manifest) not in self.avoid:
                yield index, manifest

    def edit(self, index: int, change: Callable[[dict[str, Any]], str | None]) -> Mutation | None:
        original = self.policies[index]
        edited = copy.deepcopy(original)
        what = change(edited)
        if what is None or edited == original:
            return None
        ref = ref_of(original)
        return Mutation(
            ref=ref,
            what=f"NetworkPolicy {ref.namespace}/{ref.name}: {what}",
            inject=PolicyChange(apply=(edited,)),
            fix=PolicyChange(apply=(original,)),
        )

    def add(
        self, namespace: str, names: Sequence[str], spec: dict[str, Any], what: str
    ) -> Mutation:
        taken = {ref_of(m).name for m in self.policies if ref_of(m).namespace == namespace}
        name = self.rng.choice(names)
        base, count = name, 1
        while name in taken or PolicyRef(namespace=namespace, name=name) in self.avoid:
            count += 1
            name = f"{base}-{count}"
        added = policy(namespace, name, spec)
        ref = ref_of(added)
        return Mutation(
            ref=ref,
            what=f"NetworkPolicy {namespace}/{name} added: {what}",
            inject=PolicyChange(apply=(added,)),
            fix=PolicyChange(delete=(ref,)),
        )

    def selected(self, manifest: Mapping[str, Any]) -> list[PodPlan]:
        selector = LabelSelector.model_validate(manifest["spec"].get("podSelector") or {})
        namespace = manifest["metadata"]["namespace"]
        return [
            pod
            for pod in self.app.workload.pods
            if pod.namespace == namespace and selector.matches(pod.labels)
        ]

    def egress_isolated(self, pod: str) -> bool:
        return self.pod_rules[self.keys[pod]].egress.isolated

    def ingress_isolated(self, pod: str) -> bool:
        return self.pod_rules[self.keys[pod]].ingress.isolated

    def sends(self, src: PodPlan, dst: PodPlan, protocol: Protocol, port: int) -> bool:
        """Whether ``src``'s egress lets the flow out (its destination's ingress aside)."""
        return self.pod_rules[self.keys[src.name]].egress.admits(ip_address(dst.ip), protocol, port)

    def allowed(self, src: str, dst: str, protocol: Protocol, port: int) -> bool:
        return self.matrix[Flow(self.keys[src], self.keys[dst], protocol, port)]

    def peer(self, namespace: str, pod: str) -> dict[str, Any]:
        """A peer naming one pod, from a policy in ``namespace``."""
        found: dict[str, Any] = {"podSelector": {"matchLabels": {self.app.identity_label: pod}}}
        if self.app.namespace(pod) != namespace:
            name = self.app.namespace(pod)
            return {"namespaceSelector": {"matchLabels": {NAME_LABEL: name}}, **found}
        return found


def rule_name(path: Path) -> str:
    """How a path into a policy's rules is named: ``ingress rule 2``."""
    return f"{path[1]} rule {int(path[2]) + 1}"


def rules_of(manifest: Mapping[str, Any]) -> Iterator[tuple[str, int, dict[str, Any]]]:
    for field in ("ingress", "egress"):
        for index, rule in enumerate(manifest["spec"].get(field) or ()):
            yield field, index, rule


def port_paths(manifest: Mapping[str, Any]) -> Iterator[Path]:
    for field, index, rule in rules_of(manifest):
        for number, _ in enumerate(rule.get("ports") or ()):
            yield ("spec", field, index, "ports", number)


def peer_paths(manifest: Mapping[str, Any]) -> Iterator[Path]:
    for field, index, rule in rules_of(manifest):
        side = "from" if field == "ingress" else "to"
        for number, _ in enumerate(rule.get(side) or ()):
            yield ("spec", field, index, side, number)
