"""Faults of an application's NetworkPolicy, as changes to its policy set.

A fault is drawn at a seeded place among those its kind offers (`k8s.policy_mutations`, over
the `k8s.policy_sites` of the set), and kept only if it changes the allow/deny matrix; otherwise
another place is tried, and `None` means the policy set offers the kind no place. A fault
carries the set with the fault, what ``kubectl`` applies or deletes to inject it and to fix it,
and every flow whose verdict changed.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from netdojo.labs.k8s.netpol.evaluate import Flow
from netdojo.labs.k8s.objects import Protocol
from netdojo.scenarios.k8s.app import App
from netdojo.scenarios.k8s.matrix import PolicyMatrix
from netdojo.scenarios.k8s.policy_mutations import POLICY_FAULTS, FaultKind, candidates
from netdojo.scenarios.k8s.policy_sites import Mutation, PolicyChange, PolicyRef, Sites

__all__ = [
    "POLICY_FAULTS",
    "FaultKind",
    "FlowVerdict",
    "PolicyChange",
    "PolicyFault",
    "PolicyFaults",
    "PolicyRef",
    "apply_change",
    "inject_fault",
]


MAX_TRIES = 30
"""Places tried before a kind is given up for this policy set."""


class FlowVerdict(BaseModel):
    """A flow and its verdict while the fault is present."""

    model_config = ConfigDict(frozen=True)

    src: str
    dst: str
    protocol: Protocol
    port: int
    allowed: bool


class PolicyFault(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: FaultKind
    policy: PolicyRef
    """The policy changed, or added."""
    description: str
    inject: PolicyChange
    fix: PolicyChange
    changed: tuple[FlowVerdict, ...]
    """Every flow whose verdict the fault changes, with its verdict under the fault."""
    policies: tuple[dict[str, Any], ...]
    """The policy set with the fault."""

    @property
    def blocked(self) -> list[FlowVerdict]:
        """Needed flows the fault denies."""
        return [flow for flow in self.changed if not flow.allowed]

    @property
    def opened(self) -> list[FlowVerdict]:
        """Forbidden flows the fault allows."""
        return [flow for flow in self.changed if flow.allowed]


def _key(manifest: Mapping[str, Any]) -> tuple[str, str]:
    return manifest["metadata"]["namespace"], manifest["metadata"]["name"]


def apply_change(
    policies: Sequence[Mapping[str, Any]], change: PolicyChange
) -> list[dict[str, Any]]:
    """The policy set after ``kubectl apply`` of ``change.apply`` (a policy of the same name is
    replaced in place, a new one appended) and ``kubectl delete`` of ``change.delete``."""
    result = [dict(manifest) for manifest in policies]
    for manifest in change.apply:
        keys = [_key(existing) for existing in result]
        if _key(manifest) in keys:
            result[keys.index(_key(manifest))] = dict(manifest)
        else:
            result.append(dict(manifest))
    gone = {(ref.namespace, ref.name) for ref in change.delete}
    return [manifest for manifest in result if _key(manifest) not in gone]


class PolicyFaults:
    """Draws faults of one policy set of one application; the set's matrix is computed once."""

    def __init__(self, app: App, policies: Sequence[Mapping[str, Any]]) -> None:
        self.app = app
        self.policies = [dict(manifest) for manifest in policies]
        self.evaluate = PolicyMatrix(app)
        self.rules = self.evaluate.rules(self.policies)
        self.matrix = self.evaluate(self.policies)

    def inject(
        self, kind: FaultKind, rng: random.Random, avoid: Collection[PolicyRef] = ()
    ) -> PolicyFault | None:
        """A fault of ``kind`` that changes the matrix, in no policy of ``avoid``."""
        sites = Sites(self.app, self.policies, self.rules, self.matrix, rng, avoid)
        options: list[Callable[[], Mutation | None]] = candidates(kind, sites)
        rng.shuffle(options)
        for option in options[:MAX_TRIES]:
            mutation = option()
            if mutation is None:
                continue
            faulty = apply_change(self.policies, mutation.inject)
            flows = self.evaluate.changes(self.rules, faulty, self._touched(mutation.inject))
            changed = [
                FlowVerdict(**flow._asdict(), allowed=verdict) for flow, verdict in flows.items()
            ]
            if changed and mutation.accepts(changed_flows(changed)):
                return PolicyFault(
                    kind=kind,
                    policy=mutation.ref,
                    description=_describe(mutation.what, changed),
                    inject=mutation.inject,
                    fix=mutation.fix,
                    changed=tuple(changed),
                    policies=tuple(faulty),
                )
        return None

    def _touched(self, change: PolicyChange) -> list[dict[str, Any]]:
        """The policies ``change`` writes or deletes, in their new and their present version."""
        keys = {_key(m) for m in change.apply} | {(r.namespace, r.name) for r in change.delete}
        return [*change.apply, *(m for m in self.policies if _key(m) in keys)]


def changed_flows(changed: Sequence[FlowVerdict]) -> list[Flow]:
    return [Flow(flow.src, flow.dst, flow.protocol, flow.port) for flow in changed]


def _describe(what: str, changed: Sequence[FlowVerdict]) -> str:
    blocked = sum(not flow.allowed for flow in changed)
    opened = len(changed) - blocked
    effects = []
    if blocked:
        effects.append(f"{blocked} needed flow{'s' * (blocked != 1)} denied")
    if opened:
        effects.append(f"{opened} forbidden flow{'s' * (opened != 1)} allowed")
    return f"{what} ({', '.join(effects)})"


def inject_fault(
    kind: FaultKind,
    app: App,
    policies: Sequence[Mapping[str, Any]],
    rng: random.Random,
    avoid: Collection[PolicyRef] = (),
) -> PolicyFault | None:
    return PolicyFaults(app, policies).inject(kind, rng, avoid)
