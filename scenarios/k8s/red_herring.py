"""The red herring of a policy repair at levels 2-3: a NetworkPolicy that looks like a cause
(a default deny, a stray or duplicated allow) but changes no verdict of the application, with
or without the faults; a careful engineer leaves it in place, and an adherence test checks it
stays. It is no fault kind: no family draws it alone."""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import yaml

from netdojo.labs.k8s.workload import CONTROL_PLANE
from netdojo.scenarios.hidden_tests import PolicyParams, PolicyTest
from netdojo.scenarios.k8s.app import App
from netdojo.scenarios.k8s.matrix import PolicyMatrix
from netdojo.scenarios.model import Fault, ToolCall

Manifest = dict[str, Any]
Draft = Callable[[App, Sequence[Manifest], random.Random], Manifest | None]

RETIRED = ("legacy", "v1", "old", "canary", "blue", "migration")
DOCUMENTATION_BLOCKS = ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24")
"""Addresses reserved for documentation: no pod of a lab has one."""


def _policy(namespace: str, name: str, spec: Mapping[str, Any]) -> Manifest:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": namespace},
        "spec": dict(spec),
    }


def _deny_retired(app: App, _: Sequence[Manifest], rng: random.Random) -> Manifest:
    """A deny-everything policy whose selector names a retired version of a service."""
    pod = rng.choice(app.pod_names)
    retired = rng.choice(RETIRED)
    name = rng.choice(("deny-{r}-{p}", "lockdown-{p}-{r}", "quarantine-{p}-{r}"))
    selector = {"matchLabels": {app.identity_label: f"{pod}-{retired}"}}
    spec = {"podSelector": selector, "policyTypes": ["Ingress", "Egress"]}
    return _policy(app.namespace(pod), name.format(r=retired, p=pod), spec)


def _duplicate_allow(app: App, policies: Sequence[Manifest], rng: random.Random) -> Manifest | None:
    """A second copy, under an older name, of one of the policies that allow something."""
    allowing = [m for m in policies if m["spec"].get("ingress") or m["spec"].get("egress")]
    if not allowing:
        return None
    original = rng.choice(allowing)
    name = f"{original['metadata']['name']}-{rng.choice(RETIRED)}"
    return _policy(original["metadata"]["namespace"], name, copy.deepcopy(original["spec"]))


def _documentation_allow(
    app: App, policies: Sequence[Manifest], rng: random.Random
) -> Manifest | None:
    """An ingress allow from a documentation range to a pod its policies already isolate."""
    served = [pod for pod in app.pod_names if app.workload.pod(pod).ports]
    if not served:
        return None
    pod = rng.choice(served)
    port = rng.choice(app.workload.pod(pod).ports)
    block = rng.choice(DOCUMENTATION_BLOCKS)
    spec = {
        "podSelector": {"matchLabels": {app.identity_label: pod}},
        "policyTypes": ["Ingress"],
        "ingress": [
            {
                "from": [{"ipBlock": {"cidr": block}}],
                "ports": [{"protocol": port.protocol, "port": port.port}],
            }
        ],
    }
    return _policy(app.namespace(pod), f"allow-{pod}-from-vpn", spec)


DRAFTS: tuple[Draft, ...] = (_deny_retired, _duplicate_allow, _documentation_allow)
TRIES = 6


def draw_red_herring(
    app: App, intended: Sequence[Manifest], faulted: Sequence[Manifest], rng: random.Random
) -> Manifest | None:
    """A policy of a new name that changes no verdict under the intended policies nor under
    the faulted ones; None when no draft passes."""
    matrix = PolicyMatrix(app)
    names = {(m["metadata"]["namespace"], m["metadata"]["name"]) for m in [*intended, *faulted]}
    for _ in range(TRIES):
        herring = rng.choice(DRAFTS)(app, intended, rng)
        if herring is None:
            continue
        where = (herring["metadata"]["namespace"], herring["metadata"]["name"])
        if where in names:
            continue
        if all(matrix([*s, herring]) == matrix(s) for s in (intended, faulted)):
            return herring
    return None


def herring_fault(herring: Manifest) -> tuple[Fault, PolicyTest]:
    """The herring as an injected oddity that nothing fixes, and the test that it is kept."""
    namespace, name = herring["metadata"]["namespace"], herring["metadata"]["name"]
    kept = PolicyTest(
        id=f"adherence.red_herring:{namespace}/{name}",
        description=f"NetworkPolicy {namespace}/{name}, which changes no flow, is kept",
        device=CONTROL_PLANE,
        params=PolicyParams(namespace=namespace, name=name),
    )
    create = ToolCall(
        tool="kubectl", arguments={"command": "create -f -", "manifest": yaml.safe_dump(herring)}
    )
    fault = Fault(
        type="red_herring",
        device=f"{namespace}/{name}",
        params={"policy": herring},
        inject=[create],
        fix=[],
        present=[kept],
        red_herring=True,
    )
    return fault, kept
