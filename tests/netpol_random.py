"""Seeded random clusters for checking NetworkPolicy semantics: namespaces, pods with addresses and
ports, and policies that use every feature (selectors with matchLabels and all four
matchExpressions operators, namespace selectors alone and with pod selectors, ipBlocks with
excepts over the pods' own addresses, numbered, named and ranged ports on TCP, UDP and SCTP,
absent and empty fields, every form of policyTypes).

Left out, and why (each is a construct on which the analyser used as oracle departs from the
Kubernetes API; see tests/integration/test_netpol_oracle.py): ``egress: []`` without
``policyTypes``; rules of a direction the policy's explicit ``policyTypes`` leaves out;
``Exists``/``DoesNotExist`` in a peer's podSelector next to a namespaceSelector; empty label
values. Named ports are not put in egress rules with ipBlock peers (the oracle cannot resolve
them against an address), and ``spec.podSelector`` is always written.
"""

from __future__ import annotations

import random
from ipaddress import IPv4Address, IPv4Network
from typing import Any

NAMESPACES = ("alpha", "beta", "gamma")
NS_LABELS = {"team": ("red", "blue"), "env": ("prod", "dev")}
POD_LABELS = {"app": ("web", "api", "db", "cache"), "tier": ("front", "back"), "role": ("x", "y")}
# (name, port, protocol): names repeat with different numbers, so a named port resolves
# differently on different destination pods.
PORTS = (
    ("http", 80, "TCP"),
    ("http", 8080, "TCP"),
    ("https", 443, "TCP"),
    ("dns", 53, "UDP"),
    ("dns", 53, "TCP"),
    ("db", 5432, "TCP"),
    ("metrics", 9100, "UDP"),
    ("sig", 9000, "SCTP"),
    ("sig", 3868, "SCTP"),
    ("cache", 6379, "TCP"),
)
PORT_NAMES = (*sorted({name for name, _, _ in PORTS}), "nothere")
SUBNET = IPv4Network("10.0.0.0/22")


def scenario(seed: int, policies: int) -> list[dict[str, Any]]:
    """Namespaces, 6-12 pods and ``policies`` policies, the same for the same seed."""
    rng = random.Random(seed)
    namespaces = [_namespace(rng, name) for name in NAMESPACES[: rng.randint(2, 3)]]
    names = [ns["metadata"]["name"] for ns in namespaces]
    addresses = rng.sample(range(1, SUBNET.num_addresses - 1), rng.randint(6, 12))
    pods = [_pod(rng, i, rng.choice(names), SUBNET[a]) for i, a in enumerate(addresses)]
    gen = _Policies(rng, names, [pod["status"]["podIP"] for pod in pods])
    return [*namespaces, *pods, *(gen.policy(f"np{i}") for i in range(policies))]


def _namespace(rng: random.Random, name: str) -> dict[str, Any]:
    labels = {k: rng.choice(v) for k, v in NS_LABELS.items() if rng.random() < 0.6}
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def _pod(rng: random.Random, index: int, namespace: str, ip: IPv4Address) -> dict[str, Any]:
    labels = {k: rng.choice(v) for k, v in POD_LABELS.items() if rng.random() < 0.6}
    chosen: dict[str, tuple[str, int, str]] = {}
    for name, port, protocol in rng.sample(PORTS, rng.randint(1, 3)):
        if name not in chosen and (port, protocol) not in {(p, q) for _, p, q in chosen.values()}:
            chosen[name] = (name, port, protocol)
    ports = [
        {"containerPort": port, "protocol": protocol}
        | ({"name": name} if rng.random() < 0.85 else {})
        for name, port, protocol in chosen.values()
    ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"p{index}", "namespace": namespace, "labels": labels},
        "spec": {"containers": [{"name": "main", "ports": ports}]},
        "status": {"podIP": str(ip)},
    }


class _Policies:
    def __init__(self, rng: random.Random, namespaces: list[str], ips: list[str]) -> None:
        self.rng = rng
        self.namespaces = namespaces
        self.ips = ips

    def policy(self, name: str) -> dict[str, Any]:
        rng = self.rng
        spec: dict[str, Any] = {"podSelector": self.selector(POD_LABELS, exists=True)}
        types = rng.choice([None, None, ["Ingress"], ["Egress"], ["Ingress", "Egress"], []])
        if types is not None:
            spec["policyTypes"] = types
        if not types or "Ingress" in types:
            self.rules(spec, "ingress", "from", allow_empty=True)
        if types and "Egress" in types:
            self.rules(spec, "egress", "to", allow_empty=True)
        elif not types and rng.random() < 0.6:
            self.rules(spec, "egress", "to", allow_empty=False)
        meta = {"name": name, "namespace": rng.choice(self.namespaces)}
        return {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": meta,
            "spec": spec,
        }

    def rules(self, spec: dict[str, Any], field: str, peers: str, allow_empty: bool) -> None:
        draw = self.rng.random()
        if allow_empty and draw < 0.15:
            return
        if allow_empty and draw < 0.25:
            spec[field] = []
            return
        spec[field] = [self.rule(peers) for _ in range(self.rng.randint(1, 3))]

    def rule(self, key: str) -> dict[str, Any]:
        rng = self.rng
        rule: dict[str, Any] = {}
        draw = rng.random()
        if draw < 0.05:
            rule[key] = []
        elif draw > 0.15:
            rule[key] = [self.peer() for _ in range(rng.randint(1, 3))]
        named_ok = key == "from" or not any("ipBlock" in peer for peer in rule.get(key, []))
        draw = rng.random()
        if draw < 0.05:
            rule["ports"] = []
        elif draw > 0.3:
            rule["ports"] = [self.port(named_ok) for _ in range(rng.randint(1, 3))]
        return rule

    def peer(self) -> dict[str, Any]:
        draw = self.rng.random()
        if draw < 0.3:
            return {"podSelector": self.selector(POD_LABELS, exists=True)}
        if draw < 0.5:
            return {"namespaceSelector": self.namespace_selector()}
        if draw < 0.72:
            return {
                "namespaceSelector": self.namespace_selector(),
                "podSelector": self.selector(POD_LABELS, exists=False),
            }
        return {"ipBlock": self.ip_block()}

    def namespace_selector(self) -> dict[str, Any]:
        pools = {**NS_LABELS, "kubernetes.io/metadata.name": tuple(self.namespaces)}
        return self.selector(pools, exists=True)

    def selector(self, pools: dict[str, tuple[str, ...]], exists: bool) -> dict[str, Any]:
        rng = self.rng
        draw = rng.random()
        selector: dict[str, Any] = {}
        if draw < 0.2:
            return selector
        if draw < 0.7:
            keys = rng.sample(sorted(pools), rng.randint(1, 2))
            selector["matchLabels"] = {k: rng.choice(pools[k]) for k in keys}
        if draw >= 0.55:
            operators = ["In", "NotIn"] + (["Exists", "DoesNotExist"] if exists else [])
            selector["matchExpressions"] = [
                self.requirement(pools, rng.choice(operators)) for _ in range(rng.randint(1, 2))
            ]
        return selector

    def requirement(self, pools: dict[str, tuple[str, ...]], operator: str) -> dict[str, Any]:
        key = self.rng.choice(sorted(pools))
        requirement: dict[str, Any] = {"key": key, "operator": operator}
        if operator in ("In", "NotIn"):
            requirement["values"] = self.rng.sample(
                pools[key], self.rng.randint(1, len(pools[key]))
            )
        return requirement

    def ip_block(self) -> dict[str, Any]:
        rng = self.rng
        around = (
            IPv4Address(rng.choice(self.ips)) if rng.random() < 0.8 else SUBNET[rng.randrange(1024)]
        )
        prefix = rng.choice([21, 22, 23, 24, 25, 26, 28, 30, 32])
        cidr = IPv4Network(f"{around}/{prefix}", strict=False)
        block: dict[str, Any] = {"cidr": str(cidr)}
        if prefix < 32 and rng.random() < 0.5:
            cuts = set()
            for _ in range(rng.randint(1, 2)):
                inside = cidr[rng.randrange(cidr.num_addresses)]
                if rng.random() < 0.6:
                    inside = IPv4Address(rng.choice(self.ips))
                    if inside not in cidr:
                        continue
                cut_prefix = rng.randint(prefix + 1, min(32, prefix + 8))
                cuts.add(str(IPv4Network(f"{inside}/{cut_prefix}", strict=False)))
            if cuts:
                block["except"] = sorted(cuts)
        return block

    def port(self, named_ok: bool) -> dict[str, Any]:
        rng = self.rng
        port: dict[str, Any] = {}
        protocol = rng.choice([None, "TCP", "TCP", "UDP", "SCTP"])
        if protocol:
            port["protocol"] = protocol
        draw = rng.random()
        if draw < 0.1:
            return port
        if draw < 0.35 and named_ok:
            port["port"] = rng.choice(PORT_NAMES)
            return port
        number = rng.choice([p for _, p, _ in PORTS] + [rng.randint(1, 10000)])
        port["port"] = number
        if draw > 0.75:
            port["endPort"] = min(65535, number + rng.choice([0, 1, 100, 3000, 10000]))
        return port
