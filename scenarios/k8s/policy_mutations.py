"""The places each policy fault can take in a policy set, as candidate mutations
(`k8s.policy_sites`). `k8s.policy_faults` keeps the first, in a seeded order, that changes the
matrix.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping
from functools import partial
from ipaddress import ip_address, ip_network
from typing import Any, Literal

from netdojo.labs.k8s.netpol.evaluate import Flow
from netdojo.labs.k8s.objects import NAME_LABEL
from netdojo.labs.k8s.workload import PodPlan
from netdojo.scenarios.k8s.policy_sites import (
    Mutation,
    Path,
    Sites,
    at,
    compact,
    peer_paths,
    policy_types,
    port_paths,
    rule_name,
    rules_of,
)

FaultKind = Literal[
    "ingress_removed",
    "ingress_added",
    "port_changed",
    "protocol_changed",
    "egress_added",
    "selector_typo",
    "wrong_namespace_selector",
    "default_deny_added",
    "egress_without_rules",
    "egress_type_missing",
    "ipblock_except",
    "dns_blocked",
]
POLICY_FAULTS: tuple[FaultKind, ...] = FaultKind.__args__  # type: ignore[attr-defined]
Candidate = Callable[[], Mutation | None]
ABSENT_NAMESPACE = "default"
"""A namespace every cluster has and no application pod runs in."""


# ---- NetArena's five ----------------------------------------------------------------------


def _remove_rule(field: str, index: int, manifest: dict[str, Any]) -> str:
    rule = manifest["spec"][field].pop(index)
    return f"{field} rule {index + 1} removed ({compact(rule)})"


def ingress_removed(s: Sites) -> list[Candidate]:
    return [
        partial(s.edit, index, partial(_remove_rule, field, number))
        for index, manifest in s.editable()
        for field, number, _ in rules_of(manifest)
        if field == "ingress"
    ]


def _add_ingress(s: Sites, src: PodPlan, port: tuple[str, int], manifest: dict[str, Any]) -> str:
    namespace = manifest["metadata"]["namespace"]
    broad = s.rng.random() < 0.25 and src.namespace == namespace
    peer = {"podSelector": {}} if broad else s.peer(namespace, src.name)
    rule = {"from": [peer], "ports": [{"protocol": port[0], "port": port[1]}]}
    manifest["spec"].setdefault("ingress", []).append(rule)
    return f"ingress rule added ({compact(rule)})"


def ingress_added(s: Sites) -> list[Candidate]:
    found: list[Candidate] = []
    for index, manifest in s.editable():
        if "Ingress" not in policy_types(manifest["spec"]):
            continue
        for dst in s.selected(manifest):
            for protocol, port in dict.fromkeys((p.protocol, p.port) for p in dst.ports):
                for src in s.app.workload.pods:
                    if src.name == dst.name or s.allowed(src.name, dst.name, protocol, port):
                        continue
                    if s.sends(src, dst, protocol, port):
                        add = partial(_add_ingress, s, src, (protocol, port))
                        found.append(partial(s.edit, index, add))
    return found


CONFUSED_PORTS = {8080: 8000, 8000: 8080, 80: 8080, 443: 8443, 5432: 5433, 6379: 6380, 53: 5353}


def _change_port(s: Sites, path: Path, manifest: dict[str, Any]) -> str | None:
    entry = at(manifest, path)
    old = entry.get("port")
    if old is None:
        return None
    protocol = entry.get("protocol", "TCP")
    if isinstance(old, str):
        names = {p.name for pod in s.app.workload.pods for p in pod.ports if p.protocol == protocol}
        options: list[int | str] = sorted(name for name in names if name and name != old)
        options.append(f"{old}s")
    else:
        numbers = {
            p.port for pod in s.app.workload.pods for p in pod.ports if p.protocol == protocol
        }
        options = sorted(number for number in numbers if number != old)
        options += [CONFUSED_PORTS.get(old, old + 1), old + 1]
    entry["port"] = s.rng.choice(options)
    return f"port {old}/{protocol} of {rule_name(path)} changed to {entry['port']}"


def port_changed(s: Sites) -> list[Candidate]:
    return [
        partial(s.edit, index, partial(_change_port, s, path))
        for index, manifest in s.editable()
        for path in port_paths(manifest)
    ]


def _change_protocol(path: Path, manifest: dict[str, Any]) -> str:
    entry = at(manifest, path)
    old = entry.get("protocol", "TCP")
    entry["protocol"] = "UDP" if old == "TCP" else "TCP"
    port = entry.get("port", "any port")
    return f"protocol of port {port} in {rule_name(path)}: {old} -> {entry['protocol']}"


def protocol_changed(s: Sites) -> list[Candidate]:
    return [
        partial(s.edit, index, partial(_change_protocol, path))
        for index, manifest in s.editable()
        for path in port_paths(manifest)
    ]


def _egress_policy(s: Sites, pod: str) -> Mutation:
    namespace = s.app.namespace(pod)
    callees = list(dict.fromkeys(call.dst for call in s.app.calls if call.src == pod))
    dropped = s.rng.choice(callees)
    rules = []
    if len(callees) > 1 and s.rng.random() < 0.6:
        for callee in callees:
            ports = [
                {"protocol": c.protocol, "port": c.port}
                for c in s.app.calls
                if c.src == pod and c.dst == callee
            ]
            if callee != dropped:
                rules.append({"to": [s.peer(namespace, callee)], "ports": ports})
        what = f"{pod}'s egress limited to its callees but {dropped}"
    else:
        what = f"{pod}'s egress denied"
    spec = {
        "podSelector": {"matchLabels": {s.app.identity_label: pod}},
        "policyTypes": ["Egress"],
        "egress": rules,
    }
    return s.add(namespace, (f"{pod}-egress", f"restrict-{pod}", f"{pod}-lockdown"), spec, what)


def egress_added(s: Sites) -> list[Candidate]:
    callers = dict.fromkeys(call.src for call in s.app.calls)
    return [partial(_egress_policy, s, pod) for pod in callers if not s.egress_isolated(pod)]


# ---- selectors ----------------------------------------------------------------------------


def _typo(value: str, rng: random.Random) -> str:
    cut = rng.randrange(1, max(2, len(value) - 1))
    forms = [
        value[:cut] + value[cut + 1 :],
        value[:cut] + value[cut] + value[cut:],
        value[:-1] if value.endswith("s") else f"{value}s",
        value.replace("-", "", 1),
        value.replace("service", "svc"),
    ]
    if 0 < cut < len(value) - 1:
        forms.append(value[:cut] + value[cut + 1] + value[cut] + value[cut + 2 :])
    valid = [f for f in forms if f != value and f[0].isalnum() and f[-1].isalnum()]
    return rng.choice(valid)


def _selector_paths(manifest: Mapping[str, Any]) -> Iterator[Path]:
    selectors: list[Path] = [("spec", "podSelector")]
    selectors += [(*peer, "podSelector") for peer in peer_paths(manifest)]
    for path in selectors:
        try:
            selector = at(manifest, path)
        except (KeyError, IndexError):
            continue
        for key in sorted(selector.get("matchLabels") or {}):
            yield (*path, "matchLabels", key)
        for number, expression in enumerate(selector.get("matchExpressions") or ()):
            for item, _ in enumerate(expression.get("values") or ()):
                yield (*path, "matchExpressions", number, "values", item)


def _misspell(s: Sites, path: Path, manifest: dict[str, Any]) -> str | None:
    parent = at(manifest, path[:-1])
    old = parent[path[-1]]
    known = {value for pod in s.app.workload.pods for value in pod.labels.values()}
    new = _typo(old, s.rng)
    if new in known:
        return None
    parent[path[-1]] = new
    where = "podSelector" if path[1] == "podSelector" else f"a peer of {rule_name(path)}"
    return f"label value {old!r} misspelt {new!r} in {where}"


def selector_typo(s: Sites) -> list[Candidate]:
    return [
        partial(s.edit, index, partial(_misspell, s, path))
        for index, manifest in s.editable()
        for path in _selector_paths(manifest)
    ]


def _renamespace(s: Sites, path: Path, manifest: dict[str, Any]) -> str | None:
    peer = at(manifest, path)
    own = manifest["metadata"]["namespace"]
    others = [ns for ns in s.app.workload.namespaces if ns != own] or [ABSENT_NAMESPACE]
    selector = peer.get("namespaceSelector")
    if selector is None:
        wrong = s.rng.choice(others)
        peer["namespaceSelector"] = {"matchLabels": {NAME_LABEL: wrong}}
        return f"peer of {rule_name(path)} now in namespace {wrong}, not {own}"
    choices: list[dict[str, Any] | None] = [
        {"matchLabels": {NAME_LABEL: ns}} for ns in [own, *others]
    ]
    choices = [choice for choice in choices if choice != selector]
    if selector.get("matchLabels") and "podSelector" in peer:
        choices.append(None)
    wrong_selector = s.rng.choice(choices)
    if wrong_selector is None:
        del peer["namespaceSelector"]
        return f"namespaceSelector of a peer of {rule_name(path)} removed"
    peer["namespaceSelector"] = wrong_selector
    return (
        f"namespaceSelector of a peer of {rule_name(path)} changed from "
        f"{compact(selector)} to {compact(wrong_selector)}"
    )


def wrong_namespace_selector(s: Sites) -> list[Candidate]:
    return [
        partial(s.edit, index, partial(_renamespace, s, path))
        for index, manifest in s.editable()
        for path in peer_paths(manifest)
        if "ipBlock" not in at(manifest, path)
    ]


# ---- isolation and policy types -----------------------------------------------------------

DENY_NAMES = {
    ("Ingress",): ("default-deny-ingress", "deny-all-ingress", "ingress-lockdown"),
    ("Egress",): ("default-deny-egress", "deny-all-egress", "egress-lockdown"),
    ("Ingress", "Egress"): ("default-deny-all", "deny-everything", "zero-trust"),
}


def _deny(s: Sites, namespace: str, types: tuple[str, ...]) -> Mutation:
    spec = {"podSelector": {}, "policyTypes": list(types)}
    what = f"denies all {' and '.join(types).lower()} in {namespace}, with no allows beside it"
    return s.add(namespace, DENY_NAMES[types], spec, what)


def default_deny_added(s: Sites) -> list[Candidate]:
    found: list[Candidate] = []
    for namespace in s.app.workload.namespaces:
        local = [pod for pod in s.app.workload.pods if pod.namespace == namespace]
        open_ = {
            "Ingress": any(pod.ports and not s.ingress_isolated(pod.name) for pod in local),
            "Egress": any(
                pod.name in s.callers and not s.egress_isolated(pod.name) for pod in local
            ),
        }
        found += [
            partial(_deny, s, namespace, types)
            for types in DENY_NAMES
            if any(open_[direction] for direction in types)
        ]
    return found


def _add_egress_type(manifest: dict[str, Any]) -> str:
    manifest["spec"]["policyTypes"] = ["Ingress", "Egress"]
    return "policyTypes lists Egress, but the policy has no egress rules"


def egress_without_rules(s: Sites) -> list[Candidate]:
    return [
        partial(s.edit, index, _add_egress_type)
        for index, manifest in s.editable()
        if not manifest["spec"].get("egress")
        and "Egress" not in policy_types(manifest["spec"])
        and any(
            pod.name in s.callers and not s.egress_isolated(pod.name)
            for pod in s.selected(manifest)
        )
    ]


def _drop_egress_type(manifest: dict[str, Any]) -> str:
    manifest["spec"]["policyTypes"] = ["Ingress"]
    return "policyTypes lists only Ingress, so its egress rules are ignored"


def egress_type_missing(s: Sites) -> list[Candidate]:
    return [
        partial(s.edit, index, _drop_egress_type)
        for index, manifest in s.editable()
        if manifest["spec"].get("egress") and "Egress" in policy_types(manifest["spec"])
    ]


# ---- addresses and DNS --------------------------------------------------------------------


def _cut(s: Sites, path: Path, pod: PodPlan, manifest: dict[str, Any]) -> str | None:
    block = at(manifest, path)["ipBlock"]
    network = ip_network(block["cidr"], strict=False)
    length = s.rng.randint(max(network.prefixlen + 1, 26), 30)
    cut = str(ip_network(f"{pod.ip}/{length}", strict=False))
    if cut in block.get("except", ()):
        return None
    block.setdefault("except", []).append(cut)
    return f"ipBlock {block['cidr']} now excepts {cut}, the range of {pod.name}"


def _reaches(s: Sites, pod: PodPlan, targets: list[PodPlan], field: str | int) -> bool:
    """Whether ``pod`` has an allowed flow to (ingress) or from (egress) one of ``targets``."""
    pairs = [(pod, t) if field == "ingress" else (t, pod) for t in targets if t.name != pod.name]
    return any(
        s.allowed(src.name, dst.name, p.protocol, p.port) for src, dst in pairs for p in dst.ports
    )


def ipblock_except(s: Sites) -> list[Candidate]:
    found: list[Candidate] = []
    for index, manifest in s.editable():
        for path in peer_paths(manifest):
            block = at(manifest, path).get("ipBlock")
            if block is None or ip_network(block["cidr"], strict=False).prefixlen >= 30:
                continue
            network = ip_network(block["cidr"], strict=False)
            targets = s.selected(manifest)
            for pod in s.app.workload.pods:
                if ip_address(pod.ip) in network and _reaches(s, pod, targets, path[1]):
                    found.append(partial(s.edit, index, partial(_cut, s, path, pod)))
    return found


def _reaches_dns(s: Sites, flows: list[Flow]) -> bool:
    dns = s.app.key(s.app.dns or "")
    return any(flow.dst == dns and flow.protocol == "UDP" and flow.port == 53 for flow in flows)


def _drop_dns_port(path: Path, manifest: dict[str, Any]) -> str | None:
    rules = at(manifest, path[:2])
    rule = rules[path[2]]
    entry = rule["ports"].pop(path[4])
    if not rule["ports"]:
        rules.pop(path[2])
    return f"egress to DNS over UDP removed ({compact(entry)})"


def _udp_dns(s: Sites, entry: Mapping[str, Any]) -> bool:
    if entry.get("protocol") != "UDP" or s.app.dns is None:
        return False
    ports = s.app.workload.pod(s.app.dns).ports
    names = {p.name for p in ports if p.port == 53 and p.protocol == "UDP"}
    return entry.get("port") == 53 or entry.get("port") in names - {None}


def _tcp_only(s: Sites, namespace: str) -> Mutation:
    local = [pod.name for pod in s.app.workload.pods if pod.namespace == namespace]
    udp = sorted({c.port for c in s.app.calls if c.src in local and c.protocol == "UDP"} - {53})
    rules: list[dict[str, Any]] = [{"ports": [{"protocol": "TCP"}]}]
    if udp:
        rules.append({"ports": [{"protocol": "UDP", "port": port} for port in udp]})
    spec = {"podSelector": {}, "policyTypes": ["Egress"], "egress": rules}
    what = "egress allowed on TCP and the application's other UDP ports, not DNS"
    names = ("restrict-egress", "egress-allowlist", "limit-egress")
    return s.add(namespace, names, spec, what)


def dns_blocked(s: Sites) -> list[Candidate]:
    if s.app.dns is None:
        return []
    found: list[Candidate] = [
        partial(s.edit, index, partial(_drop_dns_port, path))
        for index, manifest in s.editable()
        for path in port_paths(manifest)
        if path[1] == "egress" and _udp_dns(s, at(manifest, path))
    ]
    for namespace in s.app.workload.namespaces:
        local = [pod.name for pod in s.app.workload.pods if pod.namespace == namespace]
        if not any(s.egress_isolated(pod) for pod in local):
            found.append(partial(_tcp_only, s, namespace))
    return [partial(_requiring_dns, s, option) for option in found]


def _requiring_dns(s: Sites, option: Candidate) -> Mutation | None:
    mutation = option()
    if mutation is not None:
        mutation.accepts = partial(_reaches_dns, s)
    return mutation


BUILDERS: dict[FaultKind, Callable[[Sites], list[Candidate]]] = {
    "ingress_removed": ingress_removed,
    "ingress_added": ingress_added,
    "port_changed": port_changed,
    "protocol_changed": protocol_changed,
    "egress_added": egress_added,
    "selector_typo": selector_typo,
    "wrong_namespace_selector": wrong_namespace_selector,
    "default_deny_added": default_deny_added,
    "egress_without_rules": egress_without_rules,
    "egress_type_missing": egress_type_missing,
    "ipblock_except": ipblock_except,
    "dns_blocked": dns_blocked,
}


def candidates(kind: FaultKind, sites: Sites) -> list[Candidate]:
    return BUILDERS[kind](sites)
