"""A seeded microservice application on Kubernetes: its pods (names, ports, labels, addresses),
namespaces and services as a `Workload`, and its call graph, which the intended policy
(`netdojo.scenarios.k8s.policy`) allows and nothing else.

`generate_app` draws everything from the generator it is given, iterating only over ordered
data, so one seed gives the same application in any process.
"""

from __future__ import annotations

import random

from pydantic import BaseModel, ConfigDict

from netdojo.labs.k8s.workload import (
    ContainerPort,
    PodPlan,
    Protocol,
    ServicePlan,
    ServicePort,
    Workload,
)
from netdojo.scenarios.k8s.shapes import (
    APP_SHAPES,
    MAIN,
    AppShape,
    Blueprint,
    Node,
    Port,
    Tier,
    boutique,
    layered,
    three_tier,
)

LEVEL_SIZES = {1: (6, 12), 2: (11, 17), 3: (15, 22)}
"""Pods per application at each level, the infrastructure services included."""
LEVEL_NAMESPACES = {1: (1, 1), 2: (2, 2), 3: (2, 3)}
POD_SUBNETS = ("10.244.0.0/24", "10.244.1.0/24", "10.42.0.0/24", "10.32.0.0/24")
IDENTITY_LABELS = ("app", "app.kubernetes.io/name", "name", "service", "component")
TIER_LABELS = ("tier", "layer", "app.kubernetes.io/component", "role")
NAMESPACE_LABELS = ("team", "owner", "group")
TIER_VALUES: dict[Tier, tuple[str, ...]] = {
    "client": ("client", "load", "test"),
    "web": ("frontend", "web", "edge"),
    "backend": ("backend", "api", "service"),
    "data": ("data", "storage", "database"),
    "infra": ("infra", "platform", "system"),
}
TEAMS = ("red", "blue", "green", "payments", "growth", "platform", "core", "search", "identity")
VERSIONS = ("v1", "v2", "v3", "1.0.0", "1.4.2", "2.1.0")
ENVS = ("prod", "staging", "dev", "qa")
SINGLE_NAMESPACES = ("shop", "store", "apps", "prod", "production", "demo", "online", "retail")
NAMESPACE_NAMES: dict[Tier, tuple[str, ...]] = {
    "client": ("frontend", "web", "storefront", "edge"),
    "web": ("frontend", "web", "storefront", "edge"),
    "backend": ("backend", "services", "api", "core", "apps"),
    "data": ("data", "storage", "db", "persistence"),
    "infra": ("infra", "platform", "monitoring", "ops", "observability"),
}
METRICS_PORTS = (9090, 9100, 9464, 8081)
EVERYONE = ("dns", "statsd")
"""Roles every other pod calls on each of their ports."""


class Call(BaseModel):
    """Pod ``src`` calls pod ``dst`` on one of ``dst``'s ports."""

    model_config = ConfigDict(frozen=True)

    src: str
    dst: str
    protocol: Protocol
    port: int


class App(BaseModel):
    """An application: its workload (one pod per service) and its call graph."""

    model_config = ConfigDict(frozen=True)

    shape: AppShape
    workload: Workload
    calls: tuple[Call, ...]
    roles: dict[str, str]
    """Pod name -> its role in the shape (``cart``, ``db``, ``dns``...)."""
    tiers: dict[str, Tier]
    identity_label: str
    """The pod label whose value is the pod's name."""
    tier_label: str | None
    """The pod label naming the pod's tier, when the pods carry one."""
    namespace_label: str
    """A namespace label with a value of its own in each namespace."""

    def key(self, pod: str) -> str:
        """``namespace/name``, as the policy matrix names pods."""
        return f"{self.workload.pod(pod).namespace}/{pod}"

    def namespace(self, pod: str) -> str:
        return self.workload.pod(pod).namespace

    @property
    def pod_names(self) -> list[str]:
        return [pod.name for pod in self.workload.pods]

    @property
    def dns(self) -> str | None:
        """The DNS-like pod every other pod resolves through, if the application has one."""
        return next((pod for pod, role in self.roles.items() if role == "dns"), None)

    @property
    def everyone(self) -> list[str]:
        """The pods every other pod calls on every port they declare."""
        return [pod for pod, role in self.roles.items() if role in EVERYONE]


def _infra(rng: random.Random, level: int, shape: AppShape) -> list[Node]:
    """DNS, a UDP metrics sink and a metrics scraper, each on some seeds. Online Boutique has a
    fixed size: at level 3 it always runs with the DNS and the sink."""
    fixed = shape == "boutique" and level == 3
    nodes = []
    if fixed or rng.random() < 0.5:
        dns = [Port("dns", "UDP", 53, "dns"), Port("dns-tcp", "TCP", 53, "dns-tcp")]
        nodes.append(Node("dns", "infra", ("coredns", "dns", "kube-dns", "resolver"), dns))
    if shape != "boutique" or level > 1:
        if fixed or rng.random() < (0.25 if level == 1 else 0.5):
            statsd = [Port(MAIN, "UDP", 8125, "statsd")]
            sinks = ("statsd", "metrics-sink", "telegraf", "collector")
            nodes.append(Node("statsd", "infra", sinks, statsd))
        if level > 1 and rng.random() < 0.5:
            scrapers = ("prometheus", "scraper", "monitor")
            nodes.append(Node("prometheus", "infra", scrapers, [Port(MAIN, "TCP", 9090, "web")]))
    return nodes


def _blueprint(rng: random.Random, level: int, shape: AppShape) -> Blueprint:
    low, high = LEVEL_SIZES[level]
    size = rng.randint(low, high)
    infra = _infra(rng, level, shape)
    core = max(5, size - len(infra))
    plan = (
        boutique(rng)
        if shape == "boutique"
        else three_tier(rng, core)
        if shape == "three-tier"
        else layered(rng, core)
    )
    plan.nodes += infra
    roles = [node.role for node in plan.nodes]
    metrics_share = 1.0 if "prometheus" in roles else rng.choice((0.0, 0.3, 0.6))
    metrics = rng.choice(METRICS_PORTS)
    for node in plan.nodes:
        taken = {(port.protocol, port.number) for port in node.ports}
        scraped = node.tier not in ("client", "infra") and ("TCP", metrics) not in taken
        if scraped and rng.random() < metrics_share:
            node.ports.append(Port("metrics", "TCP", metrics, "metrics"))
    for node in plan.nodes:
        if node.role in EVERYONE:
            callers = [other.role for other in plan.nodes if other is not node]
            plan.edges += [
                (caller, node.role, port.key) for caller in callers for port in node.ports
            ]
        if node.role == "prometheus":
            plan.edges += [
                (node.role, other.role, "metrics")
                for other in plan.nodes
                if any(port.key == "metrics" for port in other.ports)
            ]
    return plan


def _namespaces(rng: random.Random, level: int, plan: Blueprint) -> dict[str, str]:
    """Role -> namespace: the tiers, in order, cut into one to three namespaces."""
    present = [
        t for t in ("web", "backend", "data", "infra") if any(n.tier == t for n in plan.nodes)
    ]
    count = min(rng.randint(*LEVEL_NAMESPACES[level]), len(present))
    if count == 1:
        name = rng.choice(SINGLE_NAMESPACES)
        return {node.role: name for node in plan.nodes}
    cuts = sorted(rng.sample(range(1, len(present)), count - 1))
    groups = [present[a:b] for a, b in zip([0, *cuts], [*cuts, len(present)], strict=True)]
    used: set[str] = set()
    tier_namespace: dict[str, str] = {"client": ""}
    for group in groups:
        name = rng.choice([n for n in NAMESPACE_NAMES[group[0]] if n not in used])
        used.add(name)
        tier_namespace.update(dict.fromkeys(group, name))
    tier_namespace["client"] = tier_namespace[present[0]]
    return {node.role: tier_namespace[node.tier] for node in plan.nodes}


def _pod_names(rng: random.Random, plan: Blueprint) -> dict[str, str]:
    taken: set[str] = set()
    names = {}
    for node in plan.nodes:
        free = [name for name in node.names if name not in taken]
        name = rng.choice(free[:2]) if free else f"{node.names[0]}-{len(taken)}"
        taken.add(name)
        names[node.role] = name
    return names


def _container_ports(rng: random.Random, node: Node, named_share: float) -> list[ContainerPort]:
    return [
        ContainerPort(
            port=port.number,
            protocol=port.protocol,
            name=port.name if port.name and rng.random() < named_share else None,
        )
        for port in node.ports
    ]


def _service(pod: PodPlan, identity: str) -> ServicePlan:
    ports = [
        ServicePort(
            port=port.port,
            target=port.name or port.port,
            protocol=port.protocol,
            name=port.name or f"{port.protocol.lower()}-{port.port}",
        )
        for port in pod.ports
    ]
    return ServicePlan(
        name=pod.name, namespace=pod.namespace, selector={identity: pod.name}, ports=ports
    )


def generate_app(rng: random.Random, level: int, shape: AppShape | None = None) -> App:
    """An application of the given shape (drawn when ``None``) and size level (1-3)."""
    if level not in LEVEL_SIZES:
        raise ValueError(f"unknown level {level}; levels are {sorted(LEVEL_SIZES)}")
    shape = shape or rng.choice(APP_SHAPES)
    plan = _blueprint(rng, level, shape)
    placed = _namespaces(rng, level, plan)
    names = _pod_names(rng, plan)
    identity = rng.choice(IDENTITY_LABELS)
    tier_label = rng.choice(TIER_LABELS) if rng.random() < 0.85 else None
    tier_values = {tier: rng.choice(values) for tier, values in TIER_VALUES.items()}
    team_share, version_share, named_share = (rng.choice((0.0, 0.5, 1.0)) for _ in range(3))
    subnet = rng.choice(POD_SUBNETS)
    hosts = rng.sample(range(2, 255), len(plan.nodes))
    base = subnet.rsplit(".", 1)[0]
    pods = []
    for node, host in zip(plan.nodes, hosts, strict=True):
        labels = {identity: names[node.role]}
        if tier_label:
            labels[tier_label] = tier_values[node.tier]
        if rng.random() < team_share:
            labels["team"] = rng.choice(TEAMS)
        if rng.random() < version_share:
            labels["version"] = rng.choice(VERSIONS)
        pods.append(
            PodPlan(
                name=names[node.role],
                namespace=placed[node.role],
                labels=labels,
                ports=_container_ports(rng, node, named_share),
                ip=f"{base}.{host}",
            )
        )
    namespace_label = rng.choice(NAMESPACE_LABELS)
    env = rng.choice(ENVS)
    teams = rng.sample(TEAMS, len(TEAMS))
    namespaces = {
        name: {namespace_label: teams[index], "env": env}
        for index, name in enumerate(dict.fromkeys(placed.values()))
    }
    ports = {(node.role, port.key): port for node in plan.nodes for port in node.ports}
    calls = tuple(
        dict.fromkeys(
            Call(src=names[src], dst=names[dst], protocol=port.protocol, port=port.number)
            for src, dst, key in plan.edges
            for port in (ports[(dst, key)],)
        )
    )
    workload = Workload(
        namespaces=namespaces,
        pods=pods,
        services=[_service(pod, identity) for pod in pods if pod.ports],
        subnet=subnet,
    )
    return App(
        shape=shape,
        workload=workload,
        calls=calls,
        roles={names[node.role]: node.role for node in plan.nodes},
        tiers={names[node.role]: node.tier for node in plan.nodes},
        identity_label=identity,
        tier_label=tier_label,
        namespace_label=namespace_label,
    )
