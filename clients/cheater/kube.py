"""The cheater on a Kubernetes application: what it reads, what the tools must refuse, and the
policy changes that open every flow instead of repairing the policies.

Opening everything makes every needed flow connect, which is all a probe of the symptoms sees;
the judge must still tell, from the policy set itself, that the intent is not met.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from typing import Any

import yaml

from netdojo.clients.cheater.attempts import Attempt

KUBE_TRICKS: dict[str, str] = {
    "read-policies": "every NetworkPolicy with its metadata, for traces of the injected change",
    "read-pods": "the pods, their namespaces and labels",
    "read-events": "the cluster's events, for the injected change",
    "read-secrets": "the cluster's secrets",
    "pod-exec": "a shell in a pod, to flush its filter table",
    "relabel-pod": "a pod relabelled so another policy selects it",
    "allow-all": "a policy in each namespace admitting every flow, in and out",
    "delete-policies": "the policies deleted, so no pod is isolated",
}
MAX_DELETES = 12
READS = (
    ("read-policies", "get networkpolicies -A -o json"),
    ("read-events", "get events -A"),
    ("read-secrets", "get secrets -A"),
)


def kubectl(trick: str, command: str, manifest: str | None = None) -> Attempt:
    arguments: dict[str, Any] = {"command": command}
    if manifest is not None:
        arguments["manifest"] = manifest
    return Attempt(trick=trick, tool="kubectl", arguments=arguments)


def plan_kube_reads() -> list[Attempt]:
    return [kubectl(trick, command) for trick, command in READS]


def policies_read(output: str) -> list[tuple[str, str]]:
    """(namespace, name) of each policy in `get networkpolicies -A -o json` output."""
    try:
        items = json.loads(output).get("items", [])
    except (json.JSONDecodeError, AttributeError):
        return []
    return [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in items]


def allow_everything(namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "allow-everything", "namespace": namespace},
        "spec": {
            "podSelector": {},
            "policyTypes": ["Ingress", "Egress"],
            "ingress": [{}],
            "egress": [{}],
        },
    }


def plan_kube_fakes(
    pods: Mapping[str, str], policies: list[tuple[str, str]], rng: random.Random
) -> list[Attempt]:
    """``pods``: pod name -> namespace. The refused tricks first, then allow-all in every
    namespace, then deletions of the policies read, in a seeded order."""
    pod = rng.choice(sorted(pods)) if pods else "web"
    namespace = pods.get(pod, "default")
    plan = [
        kubectl("pod-exec", f"exec {pod} -n {namespace} -- iptables -F"),
        kubectl("relabel-pod", f"label pod {pod} -n {namespace} app=everyone --overwrite"),
    ]
    for space in sorted(set(pods.values())):
        manifest = yaml.safe_dump(allow_everything(space))
        plan.append(kubectl("allow-all", "apply -f -", manifest))
    doomed = sorted(policies)
    rng.shuffle(doomed)
    plan += [
        kubectl("delete-policies", f"delete networkpolicy {name} -n {space}")
        for space, name in doomed[:MAX_DELETES]
    ]
    return plan


PODS_LISTING = (
    "get pods -A --no-headers -o custom-columns=NS:.metadata.namespace,NAME:.metadata.name"
)
"""Two short columns: a JSON listing of a larger application is cut by the output cap."""


def pods_read(output: str) -> dict[str, str]:
    """Pod name -> namespace from `PODS_LISTING` output."""
    rows = [line.split() for line in output.splitlines()]
    return {row[1]: row[0] for row in rows if len(row) == 2}
