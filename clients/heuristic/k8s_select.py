"""Selectors and peers that stand for exactly a given set of pods, from the labels the pods and
namespaces actually carry.

A pod set is selected by one label key whose values its members have and no other pod of the
namespace has (``matchLabels`` for one value, ``matchExpressions`` ``In`` for several); keys
that tell more pods apart are tried first. A whole namespace is ``podSelector: {}`` in the
policy's own namespace and a ``namespaceSelector`` on ``kubernetes.io/metadata.name`` (the label
the API server sets on every namespace) elsewhere; every pod of the cluster is
``namespaceSelector: {}``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

from netdojo.labs.k8s.objects import NAME_LABEL, Namespace, Pod

Selector = dict[str, Any]


class Labels:
    """The pods and namespaces of a cluster, for writing selectors."""

    def __init__(self, namespaces: Iterable[Namespace], pods: Iterable[Pod]) -> None:
        self.namespaces = {ns.name: ns for ns in namespaces}
        self.pods = sorted(pods, key=lambda pod: pod.key)
        self.by_key = {pod.key: pod for pod in self.pods}
        self.local: dict[str, list[Pod]] = {}
        for pod in self.pods:
            self.local.setdefault(pod.namespace, []).append(pod)

    def _keys(self, namespace: str) -> list[str]:
        local = self.local.get(namespace, [])
        keys = {key for pod in local for key in pod.labels}

        def distinct(key: str) -> int:
            return len({pod.labels[key] for pod in local if key in pod.labels})

        return sorted(keys, key=lambda key: (-distinct(key), key))

    def pod_selector(self, namespace: str, members: Collection[str]) -> Selector | None:
        """A selector of exactly ``members`` (pod keys) among the pods of ``namespace``."""
        local = self.local.get(namespace, [])
        chosen = [pod for pod in local if pod.key in members]
        if not chosen or len(chosen) != len(set(members)):
            return None
        if len(chosen) == len(local):
            return {}
        others = [pod for pod in local if pod.key not in members]
        for key in self._keys(namespace):
            if any(key not in pod.labels for pod in chosen):
                continue
            values = sorted({pod.labels[key] for pod in chosen})
            if any(pod.labels.get(key) in values for pod in others):
                continue
            if len(values) == 1:
                return {"matchLabels": {key: values[0]}}
            return {"matchExpressions": [{"key": key, "operator": "In", "values": values}]}
        if len(chosen) == 1:
            labels = chosen[0].labels
            if labels and not any(labels.items() <= pod.labels.items() for pod in others):
                return {"matchLabels": dict(sorted(labels.items()))}
        return None

    def namespace_selector(self, namespace: str) -> Selector:
        return {"matchLabels": {NAME_LABEL: namespace}}

    def peers(
        self, home: str, members: Collection[str], free: Collection[str] = ()
    ) -> list[dict[str, Any]] | None:
        """Peers, as a rule of a policy in namespace ``home`` writes them, that stand for
        ``members``; pods in ``free`` may be covered or not (a pod's own address, say)."""
        wanted = set(members) - set(free)
        if not wanted:
            return None
        loose = wanted | (set(free) & set(self.by_key))
        if loose == set(self.by_key) and len(self.namespaces.keys() & self.local.keys()) > 1:
            return [{"namespaceSelector": {}}]
        found: list[dict[str, Any]] = []
        for namespace in sorted({self.by_key[key].namespace for key in wanted}):
            local = {pod.key for pod in self.local[namespace]}
            group = wanted & local
            whole = group | (loose & local) == local
            selector = {} if whole else self._select(namespace, group, loose & local)
            if selector is None:
                return None
            peer: dict[str, Any] = {"podSelector": selector}
            if namespace != home:
                peer = {"namespaceSelector": self.namespace_selector(namespace)}
                if selector:
                    peer["podSelector"] = selector
            found.append(peer)
        return found

    def _select(self, namespace: str, exact: set[str], loose: set[str]) -> Selector | None:
        return self.pod_selector(namespace, loose) or self.pod_selector(namespace, exact)
