"""Candidate single edits of a live policy set: the undoing of the mistakes people make in
NetworkPolicies.

A misspelt label value is set back to the nearest value pods or namespaces carry; a peer gets
the namespace selector of another namespace, or loses it; ``policyTypes`` takes another set of
directions; an ipBlock loses an ``except``; a port entry takes a port the pods declare, or the
other protocol; a rule, peer or port entry goes; a rule or port entry is added for flows the
intent needs and the policy's pods lack; a policy is deleted. Only policies that select a pod
of a wrong flow are edited (no other edit can right one), except their pod selectors.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from netdojo.clients.heuristic.k8s_eval import Manifest, State
from netdojo.clients.heuristic.k8s_select import Labels
from netdojo.labs.k8s.netpol.evaluate import Flow
from netdojo.labs.k8s.netpol.policy import NetworkPolicy
from netdojo.labs.k8s.objects import NAME_LABEL

NEAREST = 3
"""Known label values tried in place of a value nothing carries."""
TYPES = (["Ingress"], ["Egress"], ["Ingress", "Egress"])
FIELDS = (("ingress", "from"), ("egress", "to"))


@dataclass(frozen=True)
class Edit:
    index: int
    manifest: Manifest | None
    """The policy after the edit; None deletes it."""
    what: str


Change = Callable[[Manifest], None]


def distance(a: str, b: str) -> int:
    """Edits (insert, delete, substitute, swap of neighbours) from ``a`` to ``b``."""
    rows = [list(range(len(b) + 1))]
    for i, x in enumerate(a, 1):
        row = [i]
        for j, y in enumerate(b, 1):
            row.append(min(rows[-1][j] + 1, row[j - 1] + 1, rows[-1][j - 1] + (x != y)))
            if i > 1 and j > 1 and x == b[j - 2] and a[i - 2] == y:
                row[j] = min(row[j], rows[-2][j - 2] + 1)
        rows.append(row)
    return rows[-1][-1]


def _rules(spec: dict[str, Any]) -> Iterator[tuple[str, str, int, dict[str, Any]]]:
    for field, side in FIELDS:
        for number, rule in enumerate(spec.get(field) or ()):
            yield field, side, number, rule


def _types(policy: NetworkPolicy) -> list[str]:
    return [t for t in ("Ingress", "Egress") if t in policy.policy_types]


class Candidates:
    """The edits tried on one state."""

    def __init__(self, state: State, labels: Labels) -> None:
        self.state = state
        self.labels = labels
        ev = state.evaluator
        self.selected = [ev.selected(policy) for policy in state.policies]
        self.ends = {
            "ingress": {flow.dst for flow in state.wrong},
            "egress": {flow.src for flow in state.wrong},
        }
        self.hot = self.ends["ingress"] | self.ends["egress"]
        self.missing = sorted(f for f in state.wrong if ev.intent[f])
        self.pod_values: dict[str, set[str]] = {}
        for pod in labels.pods:
            for key, value in pod.labels.items():
                self.pod_values.setdefault(key, set()).add(value)
        self.ns_values: dict[str, set[str]] = {}
        for ns in labels.namespaces.values():
            for key, value in ns.labels.items():
                self.ns_values.setdefault(key, set()).add(value)

    def __iter__(self) -> Iterator[Edit]:
        kinds: list[Callable[[int, Manifest], Iterator[tuple[Change, str]]]] = [
            self._labels,
            self._namespaces,
            self._policy_types,
            self._excepts,
            self._ports,
            self._removals,
            self._additions,
        ]
        for kind in kinds:
            for index, manifest in enumerate(self.state.manifests):
                if kind != self._labels and not self.selected[index] & self.hot:
                    continue
                for change, what in kind(index, manifest):
                    edited = copy.deepcopy(manifest)
                    change(edited)
                    if edited != manifest:
                        yield Edit(index, edited, f"{_name(manifest)}: {what}")
        for index, manifest in enumerate(self.state.manifests):
            if self.selected[index] & self.hot:
                yield Edit(index, None, f"{_name(manifest)}: deleted")

    def _live(self, index: int, manifest: Manifest) -> Iterator[tuple[str, str, int, dict]]:
        """The rules of the policy whose direction decides a wrong flow of its pods."""
        for field, side, number, rule in _rules(manifest["spec"]):
            if self.selected[index] & self.ends[field]:
                yield field, side, number, rule

    # ---- selectors ----------------------------------------------------------------------

    def _selectors(self, manifest: Manifest) -> Iterator[tuple[tuple[Any, ...], dict]]:
        yield ("spec", "podSelector"), self.pod_values
        for field, side, number, rule in _rules(manifest["spec"]):
            for peer, entry in enumerate(rule.get(side) or ()):
                base = ("spec", field, number, side, peer)
                if entry.get("podSelector"):
                    yield (*base, "podSelector"), self.pod_values
                if entry.get("namespaceSelector"):
                    yield (*base, "namespaceSelector"), self.ns_values

    def _labels(self, index: int, manifest: Manifest) -> Iterator[tuple[Change, str]]:
        for path, known in self._selectors(manifest):
            selector = _at(manifest, path) or {}
            for key, value in sorted((selector.get("matchLabels") or {}).items()):
                for new in _nearest(value, known.get(key, set())):
                    yield _set((*path, "matchLabels", key), new), f"label {value!r} -> {new!r}"
            for number, expression in enumerate(selector.get("matchExpressions") or ()):
                for item, value in enumerate(expression.get("values") or ()):
                    for new in _nearest(value, known.get(expression.get("key"), set())):
                        where = (*path, "matchExpressions", number, "values", item)
                        yield _set(where, new), f"label value {value!r} -> {new!r}"

    def _namespaces(self, index: int, manifest: Manifest) -> Iterator[tuple[Change, str]]:
        spaces = sorted(self.labels.local)
        for field, side, number, rule in self._live(index, manifest):
            for peer, entry in enumerate(rule.get(side) or ()):
                if "ipBlock" in entry:
                    continue
                path = ("spec", field, number, side, peer, "namespaceSelector")
                for ns in spaces:
                    selector = {"matchLabels": {NAME_LABEL: ns}}
                    yield _set(path, selector), f"{field} peer in namespace {ns}"
                yield _set(path, {}), f"{field} peer in any namespace"
                if "namespaceSelector" in entry and entry.get("podSelector") is not None:
                    yield _drop(path), f"{field} peer in the policy's own namespace"

    def _policy_types(self, index: int, manifest: Manifest) -> Iterator[tuple[Change, str]]:
        current = _types(self.state.policies[index])
        for types in TYPES:
            if types != current:
                yield _set(("spec", "policyTypes"), list(types)), f"policyTypes {types}"

    def _excepts(self, index: int, manifest: Manifest) -> Iterator[tuple[Change, str]]:
        for field, side, number, rule in self._live(index, manifest):
            for peer, entry in enumerate(rule.get(side) or ()):
                cuts = (entry.get("ipBlock") or {}).get("except") or []
                path = ("spec", field, number, side, peer, "ipBlock", "except")
                for cut, value in enumerate(cuts):
                    change = _drop(path) if len(cuts) == 1 else _drop((*path, cut))
                    yield change, f"{field} ipBlock except {value} removed"

    def _ports(self, index: int, manifest: Manifest) -> Iterator[tuple[Change, str]]:
        for field, _, number, rule in self._live(index, manifest):
            # a port that rights a wrong flow is one its destination declares
            ends = self.ends["ingress"]
            targets = ends & self.selected[index] if field == "ingress" else ends
            for item, entry in enumerate(rule.get("ports") or ()):
                path = ("spec", field, number, "ports", item)
                protocol = entry.get("protocol") or "TCP"
                for value in self._port_values(targets, protocol):
                    if value != entry.get("port"):
                        yield _set((*path, "port"), value), f"{field} port -> {value}"
                other = "UDP" if protocol == "TCP" else "TCP"
                yield _set((*path, "protocol"), other), f"{field} port protocol -> {other}"

    def _port_values(self, targets: set[str], protocol: str) -> list[int | str]:
        pods = [pod for pod in self.labels.pods if pod.key in targets]
        declared = [port for pod in pods for port in pod.ports if port.protocol == protocol]
        numbers = sorted({port.container_port for port in declared})
        names = sorted({port.name for port in declared if port.name})
        return [*numbers, *names]

    def _removals(self, index: int, manifest: Manifest) -> Iterator[tuple[Change, str]]:
        for field, side, number, rule in self._live(index, manifest):
            yield _drop(("spec", field, number)), f"{field} rule {number + 1} removed"
            for key, what in ((side, "peer"), ("ports", "port")):
                entries = rule.get(key) or []
                if len(entries) > 1:
                    for item, _ in enumerate(entries):
                        path = ("spec", field, number, key, item)
                        yield _drop(path), f"{field} rule {number + 1}: {what} {item + 1} removed"

    def _additions(self, index: int, manifest: Manifest) -> Iterator[tuple[Change, str]]:
        policy = self.state.policies[index]
        selected = self.selected[index]
        rules = self.state.rules
        for field, side in FIELDS:
            if field.capitalize() not in policy.policy_types:
                continue
            ingress = field == "ingress"
            groups: dict[tuple[Any, ...], set[str]] = {}
            for flow in self.missing:
                mine, other = (flow.dst, flow.src) if ingress else (flow.src, flow.dst)
                direction = rules[mine].ingress if ingress else rules[mine].egress
                peer_ip = rules[other].ip
                if mine not in selected or peer_ip is None:
                    continue
                if direction.admits(peer_ip, flow.protocol, flow.port):
                    continue
                groups.setdefault(("port", mine, flow.protocol, flow.port), set()).add(other)
                groups.setdefault(("peer", mine, other), set()).add(_port_text(flow))
            free = selected if len(selected) == 1 else set()
            for key, found in sorted(groups.items()):
                if key[0] == "port":
                    peers = self.labels.peers(policy.namespace, found, free)
                    ports = [{"protocol": key[2], "port": key[3]}]
                else:
                    peers = self.labels.peers(policy.namespace, {key[2]}, free)
                    ports = [_port_entry(text) for text in sorted(found)]
                if peers is not None:
                    rule = {side: peers, "ports": ports}
                    yield _append(("spec", field), rule), f"{field} rule added ({key[0]})"
            wanted = sorted({(k[2], k[3]) for k in groups if k[0] == "port"})
            for number, rule in enumerate(manifest["spec"].get(field) or ()):
                if not rule.get("ports"):
                    continue
                for protocol, port in wanted:
                    entry = {"protocol": protocol, "port": port}
                    path = ("spec", field, number, "ports")
                    yield _append(path, entry), f"{field} rule {number + 1}: port {port} added"


def _name(manifest: Manifest) -> str:
    meta = manifest["metadata"]
    return f"{meta.get('namespace', 'default')}/{meta['name']}"


def _port_text(flow: Flow) -> str:
    return f"{flow.protocol}/{flow.port}"


def _port_entry(text: str) -> dict[str, Any]:
    protocol, port = text.split("/")
    return {"protocol": protocol, "port": int(port)}


def _nearest(value: str, known: set[str]) -> list[str]:
    if not known or value in known:
        return []
    return sorted(known, key=lambda other: (distance(value, other), other))[:NEAREST]


def _at(obj: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        obj = obj[step]
    return obj


def _set(path: tuple[Any, ...], value: Any) -> Change:
    def change(manifest: Manifest) -> None:
        _at(manifest, path[:-1])[path[-1]] = copy.deepcopy(value)

    return change


def _drop(path: tuple[Any, ...]) -> Change:
    def change(manifest: Manifest) -> None:
        parent = _at(manifest, path[:-1])
        del parent[path[-1]]

    return change


def _append(path: tuple[Any, ...], value: Any) -> Change:
    def change(manifest: Manifest) -> None:
        parent = _at(manifest, path[:-1])
        parent.setdefault(path[-1], [])
        if parent[path[-1]] is None:
            parent[path[-1]] = []
        parent[path[-1]].append(copy.deepcopy(value))

    return change
