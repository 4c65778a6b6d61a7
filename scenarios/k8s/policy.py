"""The least-privilege NetworkPolicy of an application.

`intended_policies` writes manifests (plain dicts, as ``kubectl apply`` takes them) that allow
exactly the application's calls between pods and nothing else on the ports the pods declare.
Their structure follows a `PolicyStyle` drawn per seed: a policy per service, per group of
services called alike, or per port; default-deny per namespace or per pod; ``matchLabels`` or
``matchExpressions``; named or numbered ports; egress isolation in some namespaces.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from netdojo.labs.k8s.objects import NAME_LABEL
from netdojo.scenarios.k8s.app import App

Structure = Literal["service", "grouped", "port"]
Direction = Literal["Ingress", "Egress"]
API_VERSION = "networking.k8s.io/v1"
INGRESS_NAMES = ("allow-{}", "{}-ingress", "{}-netpol", "{}-allow", "ingress-{}")
EGRESS_NAMES = ("{}-egress", "egress-{}", "allow-{}-egress", "{}-egress-allow", "egress-{}")
EVERYONE_EGRESS = ("egress-to-{}", "allow-egress-{}", "allow-{}-access", "to-{}", "reach-{}")
DENY_NAMES = ("default-deny", "deny-all", "default-deny-all", "deny-by-default", "lockdown")

PortRef = tuple[str, int | str]
"""(protocol, port number or container port name)."""
Entry = tuple[str, str, int | str]
"""(peer pod, protocol, port): one call as a rule of the selected pod sees it."""


class PolicyStyle(BaseModel):
    """How the intended policy is written; each choice gives the same matrix."""

    model_config = ConfigDict(frozen=True)

    structure: Structure
    default_deny: bool
    """A default-deny of ingress per namespace; otherwise each pod is isolated by its own."""
    combined_deny: bool
    """One default-deny for both directions where egress is isolated."""
    egress_namespaces: tuple[str, ...]
    expressions: bool
    merge_peers: bool
    """One rule for the peers that use the same ports, rather than one rule per peer."""
    named_ports: bool
    explicit_types: bool
    explicit_tcp: bool
    namespace_label: str
    everyone: Literal["namespaces", "ipblock"]
    """How a service every pod calls admits them: any namespace, or the pods' network."""
    names: int


def draw_style(app: App, rng: random.Random) -> PolicyStyle:
    egress_share = rng.choice((0.0, 0.0, 0.5, 1.0))
    return PolicyStyle(
        structure=rng.choice(("service", "service", "grouped", "port")),
        default_deny=rng.random() < 0.75,
        combined_deny=rng.random() < 0.5,
        egress_namespaces=tuple(
            ns for ns in app.workload.namespaces if rng.random() < egress_share
        ),
        expressions=rng.random() < 0.3,
        merge_peers=rng.random() < 0.5,
        named_ports=rng.random() < 0.7,
        explicit_types=rng.random() < 0.7,
        explicit_tcp=rng.random() < 0.6,
        namespace_label=rng.choice((NAME_LABEL, app.namespace_label)),
        everyone=rng.choice(("namespaces", "ipblock")),
        names=rng.randrange(len(INGRESS_NAMES)),
    )


def policy(namespace: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def _ref(app: App, style: PolicyStyle, pod: str, protocol: str, port: int) -> PortRef:
    declared = app.workload.pod(pod).ports
    name = next(p.name for p in declared if p.port == port and p.protocol == protocol)
    return (protocol, name if style.named_ports and name else port)


def port_manifest(style: PolicyStyle, ref: PortRef) -> dict[str, Any]:
    protocol, port = ref
    if protocol == "TCP" and not style.explicit_tcp:
        return {"port": port}
    return {"protocol": protocol, "port": port}


def pod_selector(app: App, style: PolicyStyle, namespace: str, pods: Sequence[str]) -> dict:
    """A selector of exactly ``pods`` among the pods of ``namespace``."""
    key = app.identity_label
    if len(pods) == 1 and not style.expressions:
        return {"matchLabels": {key: pods[0]}}
    if len(pods) > 1:
        local = [pod for pod in app.workload.pods if pod.namespace == namespace]
        labels = app.workload.pod(pods[0]).labels
        for label in filter(None, (app.tier_label, "team")):
            value = labels.get(label)
            matched = [pod.name for pod in local if pod.labels.get(label) == value]
            if value is not None and sorted(matched) == sorted(pods):
                return {"matchLabels": {label: value}}
    return {"matchExpressions": [{"key": key, "operator": "In", "values": sorted(pods)}]}


def namespace_selector(app: App, style: PolicyStyle, namespace: str) -> dict:
    if style.namespace_label == NAME_LABEL:
        return {"matchLabels": {NAME_LABEL: namespace}}
    value = app.workload.namespaces[namespace][style.namespace_label]
    return {"matchLabels": {style.namespace_label: value}}


def peers(app: App, style: PolicyStyle, namespace: str, pods: Iterable[str]) -> list[dict]:
    """Peers standing for exactly ``pods``, seen from a policy in ``namespace``."""
    by_namespace: dict[str, list[str]] = {}
    for pod in pods:
        by_namespace.setdefault(app.namespace(pod), []).append(pod)
    found = []
    for peer_namespace, members in by_namespace.items():
        selector = pod_selector(app, style, peer_namespace, members)
        if peer_namespace == namespace:
            found.append({"podSelector": selector})
        else:
            ns = namespace_selector(app, style, peer_namespace)
            found.append({"namespaceSelector": ns, "podSelector": selector})
    return found


def _rules(
    app: App, style: PolicyStyle, namespace: str, entries: Sequence[Entry], direction: Direction
) -> list[dict]:
    refs: dict[str, list[PortRef]] = {}
    for peer, protocol, port in entries:
        refs.setdefault(peer, []).append((protocol, port))
    if style.merge_peers:
        merged: dict[tuple[PortRef, ...], list[str]] = {}
        for peer, ports in refs.items():
            merged.setdefault(tuple(ports), []).append(peer)
        groups = list(merged.items())
    else:
        groups = [(tuple(ports), [peer]) for peer, ports in refs.items()]
    field = "from" if direction == "Ingress" else "to"
    return [
        {
            field: peers(app, style, namespace, members),
            "ports": [port_manifest(style, ref) for ref in ports],
        }
        for ports, members in groups
    ]


def _groups(
    app: App, style: PolicyStyle, signatures: dict[str, list[Entry]]
) -> list[tuple[str, list[str], list[Entry]]]:
    """(namespace, selected pods, their entries): the policies the structure asks for."""
    grouped: dict[tuple[Any, ...], tuple[str, list[str], list[Entry]]] = {}
    for pod, entries in signatures.items():
        namespace = app.namespace(pod)
        keys: list[tuple[tuple[Any, ...], list[Entry]]]
        if style.structure == "service":
            keys = [((pod,), entries)]
        elif style.structure == "grouped":
            keys = [((namespace, *sorted(entries, key=repr)), entries)]
        else:
            by_port: dict[PortRef, list[Entry]] = {}
            for entry in entries:
                by_port.setdefault(entry[1:], []).append(entry)
            keys = [((namespace, *sorted(group, key=repr)), group) for group in by_port.values()]
        for key, group in keys:
            grouped.setdefault(key, (namespace, [], group))[1].append(pod)
    return list(grouped.values())


def _signatures(app: App, style: PolicyStyle, direction: Direction) -> dict[str, list[Entry]]:
    everyone = set(app.everyone)
    found: dict[str, list[Entry]] = {}
    for call in app.calls:
        if call.dst in everyone:
            continue
        protocol, port = _ref(app, style, call.dst, call.protocol, call.port)
        if direction == "Ingress":
            found.setdefault(call.dst, []).append((call.src, protocol, port))
        elif app.namespace(call.src) in style.egress_namespaces:
            found.setdefault(call.src, []).append((call.dst, protocol, port))
    return {pod: found[pod] for pod in app.pod_names if pod in found}


def _label(app: App, style: PolicyStyle, namespace: str, pods: list[str]) -> str:
    selector = pod_selector(app, style, namespace, pods)
    if "matchLabels" in selector:
        return next(iter(selector["matchLabels"].values()))
    return "-".join(pods[:2]) + ("-and-more" if len(pods) > 2 else "")


def _allow_policies(app: App, style: PolicyStyle, direction: Direction) -> list[dict]:
    forms = INGRESS_NAMES if direction == "Ingress" else EGRESS_NAMES
    found = []
    for namespace, pods, entries in _groups(app, style, _signatures(app, style, direction)):
        label = _label(app, style, namespace, pods)
        if style.structure == "port":
            label += f"-{entries[0][2]}-{entries[0][1].lower()}"
        spec: dict[str, Any] = {"podSelector": pod_selector(app, style, namespace, pods)}
        if direction == "Ingress":
            spec["ingress"] = _rules(app, style, namespace, entries, direction)
            if style.explicit_types:
                spec["policyTypes"] = ["Ingress"]
        else:
            spec["policyTypes"] = ["Egress"]
            spec["egress"] = _rules(app, style, namespace, entries, direction)
        found.append(policy(namespace, forms[style.names].format(label), spec))
    return found


def _everyone_policies(app: App, style: PolicyStyle) -> list[dict]:
    found = []
    for pod in app.everyone:
        namespace = app.namespace(pod)
        ports = [
            port_manifest(style, _ref(app, style, pod, port.protocol, port.port))
            for port in app.workload.pod(pod).ports
        ]
        sources = (
            [{"namespaceSelector": {}}]
            if style.everyone == "namespaces"
            else [{"ipBlock": {"cidr": app.workload.subnet}}]
        )
        spec: dict[str, Any] = {
            "podSelector": pod_selector(app, style, namespace, [pod]),
            "ingress": [{"from": sources, "ports": ports}],
        }
        if style.explicit_types:
            spec["policyTypes"] = ["Ingress"]
        found.append(policy(namespace, INGRESS_NAMES[style.names].format(pod), spec))
        for source in style.egress_namespaces:
            if style.everyone == "ipblock":
                to = [{"ipBlock": {"cidr": f"{app.workload.pod(pod).ip}/32"}}]
            else:
                to = peers(app, style, source, [pod])
            spec = {
                "podSelector": {},
                "policyTypes": ["Egress"],
                "egress": [{"to": to, "ports": ports}],
            }
            found.append(policy(source, EVERYONE_EGRESS[style.names].format(pod), spec))
    return found


def _isolation(app: App, style: PolicyStyle) -> list[dict]:
    """The default-deny policies, or the policies that isolate pods no allow policy selects."""
    name = DENY_NAMES[style.names]
    admitted = {*_signatures(app, style, "Ingress"), *app.everyone}
    found = []
    for namespace in app.workload.namespaces:
        egress = namespace in style.egress_namespaces
        if style.default_deny and egress and style.combined_deny:
            spec = {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
            found.append(policy(namespace, name, spec))
            continue
        if style.default_deny:
            found.append(policy(namespace, name, {"podSelector": {}, "policyTypes": ["Ingress"]}))
        else:
            bare = [
                pod.name
                for pod in app.workload.pods
                if pod.namespace == namespace and pod.ports and pod.name not in admitted
            ]
            if bare:
                spec = {
                    "podSelector": pod_selector(app, style, namespace, bare),
                    "policyTypes": ["Ingress"],
                }
                label = _label(app, style, namespace, bare)
                found.append(policy(namespace, f"isolate-{label}", spec))
        if egress:
            spec = {"podSelector": {}, "policyTypes": ["Egress"]}
            found.append(policy(namespace, f"{name}-egress", spec))
    return found


def _unique_names(policies: list[dict]) -> list[dict]:
    seen: set[tuple[str, str]] = set()
    for manifest in policies:
        meta = manifest["metadata"]
        base, count = meta["name"], 1
        while (meta["namespace"], meta["name"]) in seen:
            count += 1
            meta["name"] = f"{base}-{count}"
        seen.add((meta["namespace"], meta["name"]))
    return policies


def intended_policies(app: App, style: PolicyStyle) -> list[dict[str, Any]]:
    """The policies that allow exactly the application's calls, namespace by namespace, each
    namespace's isolation first."""
    allows = [
        *_allow_policies(app, style, "Ingress"),
        *_allow_policies(app, style, "Egress"),
        *_everyone_policies(app, style),
    ]
    isolation = _isolation(app, style)
    ordered = [
        manifest
        for namespace in app.workload.namespaces
        for manifest in [*isolation, *allows]
        if manifest["metadata"]["namespace"] == namespace
    ]
    return _unique_names(ordered)
