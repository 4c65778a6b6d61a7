"""A Kubernetes policy episode without a lab, for the heuristic agent's unit tests: the objects
``kubectl get -o json`` would list (the API server's defaults applied to policies), built from a
scenario's workload and its faults' kubectl calls, and the judge's verdict on a policy set."""

from __future__ import annotations

import copy
import json
from typing import Any

import yaml

from netdojo.labs.k8s.netpol.cluster import parse_cluster
from netdojo.labs.k8s.netpol.compiler import compile_cluster
from netdojo.labs.k8s.netpol.evaluate import matrix
from netdojo.labs.k8s.objects import NAME_LABEL
from netdojo.labs.k8s.workload import Workload, pod_status
from netdojo.scenarios.hidden_tests import PolicyMatrixTest
from netdojo.scenarios.model import Scenario

STARTED = "2024-01-01T00:00:00Z"
SYSTEM_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")


def served(manifest: dict[str, Any], version: int = 1) -> dict[str, Any]:
    """A policy as the API server returns it: explicit policyTypes and protocols, server
    metadata."""
    found = copy.deepcopy(manifest)
    spec = found.setdefault("spec", {})
    spec.setdefault("podSelector", {})
    if not spec.get("policyTypes"):
        spec["policyTypes"] = ["Ingress", "Egress"] if spec.get("egress") else ["Ingress"]
    for field in ("ingress", "egress"):
        if not spec.get(field):
            spec.pop(field, None)
        for rule in spec.get(field) or ():
            for port in rule.get("ports") or ():
                port.setdefault("protocol", "TCP")
    meta = found["metadata"]
    meta.update(uid=f"uid-{meta['name']}", resourceVersion=str(version), generation=1)
    meta["creationTimestamp"] = STARTED
    return found


class FakeCluster:
    """A workload's namespaces and pods, and a policy set that kubectl calls change."""

    def __init__(self, workload: Workload, policies: list[dict[str, Any]]) -> None:
        self.workload = workload
        self.policies = [served(p) for p in policies]

    @classmethod
    def faulty(cls, scenario: Scenario) -> FakeCluster:
        """The scenario's cluster as the agent finds it: its policies, every fault injected."""
        workload = scenario.hidden.lab.kubernetes
        assert workload is not None
        cluster = cls(workload, list(workload.policies))
        for fault in scenario.hidden.faults:
            for call in fault.inject:
                assert cluster.kubectl(call.arguments)["ok"], call.arguments
        return cluster

    def namespaces(self) -> list[dict[str, Any]]:
        names = {**{ns: {} for ns in SYSTEM_NAMESPACES}, **self.workload.namespaces}
        return [
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": name, "labels": {**labels, NAME_LABEL: name}},
                "status": {"phase": "Active"},
            }
            for name, labels in sorted(names.items())
        ]

    def pods(self) -> list[dict[str, Any]]:
        found = []
        for plan in self.workload.pods:
            manifest = plan.manifest()
            manifest["metadata"]["uid"] = f"uid-{plan.name}"
            manifest.update(pod_status(plan, STARTED))
            found.append(manifest)
        return sorted(found, key=lambda m: (m["metadata"]["namespace"], m["metadata"]["name"]))

    def _index(self, namespace: str, name: str) -> int | None:
        keys = [(p["metadata"]["namespace"], p["metadata"]["name"]) for p in self.policies]
        return keys.index((namespace, name)) if (namespace, name) in keys else None

    def has(self, namespace: str, name: str) -> bool:
        return self._index(namespace, name) is not None

    def kubectl(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The `kubectl` tool's result for the commands the agent and the faults use."""
        words = arguments["command"].split()
        verb = words[0]
        if verb in ("replace", "create", "apply") and words[1:] == ["-f", "-"]:
            manifest = yaml.safe_load(arguments["manifest"])
            meta = manifest["metadata"]
            at = self._index(meta.get("namespace", "default"), meta["name"])
            if (verb == "create") != (at is None):
                return self._result(arguments, False, "AlreadyExists or NotFound", True)
            if at is None:
                self.policies.append(served(manifest))
            else:
                self.policies[at] = served(manifest, version=2)
            return self._result(arguments, True, f"networkpolicy {meta['name']} {verb}d", True)
        if verb == "delete" and words[1] in ("networkpolicy", "netpol"):
            at = self._index(words[words.index("-n") + 1], words[2])
            if at is None:
                return self._result(arguments, False, "NotFound", True)
            del self.policies[at]
            return self._result(arguments, True, "deleted", True)
        if verb == "get":
            return self._get(arguments, words[1], words)
        return self._result(arguments, False, f"unexpected command {words}")

    def _get(self, arguments: dict[str, Any], resource: str, words: list[str]) -> dict[str, Any]:
        items = {
            "namespaces": self.namespaces,
            "pods": self.pods,
            "networkpolicies": lambda: sorted(
                copy.deepcopy(self.policies),
                key=lambda m: (m["metadata"]["namespace"], m["metadata"]["name"]),
            ),
        }[resource]()
        if "-n" in words:
            namespace = words[words.index("-n") + 1]
            items = [i for i in items if i["metadata"].get("namespace") == namespace]
        if words[2] not in ("-n", "-A", "-o"):
            items = [i for i in items if i["metadata"]["name"] == words[2]]
            return self._result(
                arguments, bool(items), json.dumps(items[0], indent=4) if items else "NotFound"
            )
        if words[-2:] == ["-o", "name"]:
            names = "\n".join(f"{resource[:-1]}/{i['metadata']['name']}" for i in items)
            return self._result(arguments, True, names)
        body = json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=4)
        return self._result(arguments, True, body)

    @staticmethod
    def _result(arguments: dict[str, Any], ok: bool, output: str, changed: bool = False) -> dict:
        return {
            "command": arguments["command"],
            "ok": ok,
            "exit_code": 0 if ok else 1,
            "output": output,
            "refused": None,
            "changed": changed,
            "truncated": False,
        }

    def allowed(self) -> set[str]:
        """The flows the judge finds allowed under the current policies."""
        objects = [*self.namespaces(), *self.pods(), *self.policies]
        verdicts = matrix(compile_cluster(parse_cluster(objects)))
        return {flow.text for flow, ok in verdicts.items() if ok}


def intended_allowed(scenario: Scenario) -> set[str]:
    tests = [*scenario.hidden.targets, *scenario.hidden.guards]  # a control guards the matrix
    test = next(t for t in tests if isinstance(t, PolicyMatrixTest))
    return set(test.params.allowed)
