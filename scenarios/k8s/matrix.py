"""The allow/deny matrix of a policy set over an application: every (source pod, destination
pod, protocol, port the destination declares), decided by the NetworkPolicy compiler over the
workload's objects as the API server holds them (pods with the status IPs a node agent writes).

`call_matrix` is the matrix the call graph asks for; the intended policy's matrix equals it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from netdojo.labs.k8s.netpol.cluster import Cluster, parse_cluster
from netdojo.labs.k8s.netpol.compiler import compile_cluster
from netdojo.labs.k8s.netpol.evaluate import Flow, allowed, matrix
from netdojo.labs.k8s.netpol.ir import ClusterRules
from netdojo.labs.k8s.netpol.policy import NetworkPolicy
from netdojo.labs.k8s.objects import ManifestError
from netdojo.labs.k8s.workload import pod_status
from netdojo.scenarios.k8s.app import App

STARTED = "2024-01-01T00:00:00Z"
"""The start time written in every pod's status (no verdict depends on it)."""


def cluster_manifests(app: App) -> list[dict[str, Any]]:
    """The workload's objects as the API server holds them once every pod runs."""
    manifests = app.workload.manifests()
    for manifest in manifests:
        if manifest["kind"] == "Pod":
            pod = app.workload.pod(manifest["metadata"]["name"])
            manifest["status"] = pod_status(pod, STARTED)["status"]
    return manifests


def _parse(policies: Sequence[Mapping[str, Any]]) -> tuple[NetworkPolicy, ...]:
    try:
        return tuple(NetworkPolicy.model_validate(manifest) for manifest in policies)
    except ValidationError as error:
        raise ManifestError(str(error)) from error


class PolicyMatrix:
    """The matrices of policy sets over one application, whose objects are parsed once."""

    def __init__(self, app: App) -> None:
        objects = parse_cluster(cluster_manifests(app))
        self._namespaces = objects.namespaces
        self._pods = objects.pods

    def rules(self, policies: Sequence[Mapping[str, Any]]) -> ClusterRules:
        return self._compile(_parse(policies))

    def _compile(self, policies: tuple[NetworkPolicy, ...]) -> ClusterRules:
        try:
            cluster = Cluster(namespaces=self._namespaces, pods=self._pods, policies=policies)
        except ValidationError as error:
            raise ManifestError(str(error)) from error
        return compile_cluster(cluster)

    def __call__(self, policies: Sequence[Mapping[str, Any]]) -> dict[Flow, bool]:
        return matrix(self.rules(policies))

    def changes(
        self,
        rules: ClusterRules,
        policies: Sequence[Mapping[str, Any]],
        touched: Sequence[Mapping[str, Any]],
    ) -> dict[Flow, bool]:
        """The flows whose verdict under ``policies`` differs from their verdict under
        ``rules``, with the new verdict. ``rules`` were compiled from a set that differs from
        ``policies`` only in the ``touched`` manifests (their versions in either set).

        A pod's rules depend only on the policies that select it, so only the pods the touched
        policies select are compiled again, and only their flows decided again.
        """
        changed = _parse(touched)
        pods = [
            pod
            for pod in self._pods
            if any(
                p.namespace == pod.namespace and p.spec.pod_selector.matches(pod.labels)
                for p in changed
            )
        ]
        keys = {pod.key for pod in pods}
        relevant = tuple(
            policy
            for policy in _parse(policies)
            if any(
                policy.namespace == pod.namespace and policy.spec.pod_selector.matches(pod.labels)
                for pod in pods
            )
        )
        fresh = {r.pod: r for r in self._compile(relevant).pods if r.pod in keys}
        after = ClusterRules(pods=tuple(fresh.get(r.pod, r) for r in rules.pods))
        found = {}
        for src in after.pods:
            for dst in after.pods:
                if src.pod == dst.pod or not {src.pod, dst.pod} & keys or dst.ip is None:
                    continue
                for listener in dst.listeners:
                    flow = Flow(src.pod, dst.pod, listener.protocol, listener.port)
                    verdict = allowed(after, *flow)
                    if verdict != allowed(rules, *flow):
                        found[flow] = verdict
        return found


def app_matrix(app: App, policies: Sequence[Mapping[str, Any]]) -> dict[Flow, bool]:
    """Every (source pod, destination pod, protocol, declared port): allowed or not."""
    return PolicyMatrix(app)(policies)


def call_matrix(app: App) -> dict[Flow, bool]:
    """The matrix of the call graph: each call allowed, every other pod pair and port denied."""
    keys = {pod.name: f"{pod.namespace}/{pod.name}" for pod in app.workload.pods}
    calls = {Flow(keys[c.src], keys[c.dst], c.protocol, c.port) for c in app.calls}
    pods = app.workload.pods
    return {
        flow: flow in calls
        for src in pods
        for dst in pods
        if src.name != dst.name
        for protocol, port in dict.fromkeys((p.protocol, p.port) for p in dst.ports)
        for flow in (Flow(keys[src.name], keys[dst.name], protocol, port),)
    }
