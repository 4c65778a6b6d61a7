"""The shapes of a microservice application before it is named and placed: its services (each
a role in a tier, with the ports it listens on) and its call graph (who calls whom, on which
port). `netdojo.scenarios.k8s.app` turns a blueprint into pods, labels and namespaces.

Three shapes: Online Boutique's (its real services and call graph, ports drawn per seed), a
three-tier web/api/database application with a cache and a queue, and a random layered DAG.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Literal

from netdojo.labs.k8s.workload import Protocol

AppShape = Literal["boutique", "three-tier", "layered"]
APP_SHAPES: tuple[AppShape, ...] = ("boutique", "three-tier", "layered")
Tier = Literal["client", "web", "backend", "data", "infra"]
TIERS: tuple[Tier, ...] = ("client", "web", "backend", "data", "infra")
MAIN = "main"
"""The key of a service's own port (the one its callers use)."""

GENERIC_NAMES = (
    "auth", "users", "orders", "inventory", "billing", "search", "reviews", "pricing",
    "notifications", "catalog", "accounts", "ledger", "profile", "sessions", "media", "quotes",
    "stock", "tax", "audit", "rates", "fraud", "loyalty", "wishlist", "geo", "invoices",
    "tickets", "booking", "routing", "ratings", "feeds", "payouts", "identity", "content",
    "uploads", "reports",
)  # fmt: skip
SERVICE_PORTS = (8080, 8000, 9000, 50051, 3000, 5000, 7000, 8443, 9080)


@dataclass(frozen=True)
class Port:
    key: str
    protocol: Protocol
    number: int
    name: str | None = None
    """The IANA service name the port may be given in the pod."""


@dataclass
class Node:
    role: str
    tier: Tier
    names: tuple[str, ...]
    """Candidate pod names, most plausible first; one is drawn."""
    ports: list[Port] = field(default_factory=list)


@dataclass
class Blueprint:
    shape: AppShape
    nodes: list[Node]
    edges: list[tuple[str, str, str]]
    """(caller role, callee role, port key of the callee)."""

    def node(self, role: str) -> Node:
        return next(node for node in self.nodes if node.role == role)


def _main(rng: random.Random, numbers: tuple[int, ...], name: str, udp: bool = False) -> Port:
    return Port(MAIN, "UDP" if udp else "TCP", rng.choice(numbers), name)


def boutique(rng: random.Random) -> Blueprint:
    """Online Boutique: eleven services and its load generator, with the real call graph."""

    def grpc(real: int) -> list[Port]:
        return [_main(rng, (real, real, 50051, 8080, 9000), "grpc")]

    nodes = [
        Node("loadgenerator", "client", ("loadgenerator", "loadgen", "traffic", "shopper")),
        Node("frontend", "web", ("frontend", "storefront", "web", "shop-ui"),
             [_main(rng, (8080, 8080, 80, 3000, 8000), "http")]),
        Node("cart", "backend", ("cartservice", "cart", "basket"), grpc(7070)),
        Node("productcatalog", "backend",
             ("productcatalogservice", "productcatalog", "catalog", "products"), grpc(3550)),
        Node("currency", "backend", ("currencyservice", "currency", "fx", "forex"), grpc(7000)),
        Node("payment", "backend", ("paymentservice", "payment", "payments", "charge"),
             grpc(50051)),
        Node("shipping", "backend", ("shippingservice", "shipping", "delivery", "logistics"),
             grpc(50051)),
        Node("email", "backend", ("emailservice", "email", "mailer", "notify"), grpc(8080)),
        Node("checkout", "backend", ("checkoutservice", "checkout", "orders"), grpc(5050)),
        Node("recommendation", "backend",
             ("recommendationservice", "recommendation", "recs", "suggest"), grpc(8080)),
        Node("ad", "backend", ("adservice", "ads", "adverts", "promo"), grpc(9555)),
        Node("redis-cart", "data", ("redis-cart", "cart-cache", "cartstore", "redis"),
             [_main(rng, (6379, 6379, 6380), "redis")]),
    ]  # fmt: skip
    calls = {
        "loadgenerator": ("frontend",),
        "frontend": ("productcatalog", "currency", "cart", "recommendation", "shipping",
                     "checkout", "ad"),
        "checkout": ("productcatalog", "shipping", "payment", "email", "currency", "cart"),
        "recommendation": ("productcatalog",),
        "cart": ("redis-cart",),
    }  # fmt: skip
    edges = [(src, dst, MAIN) for src, dsts in calls.items() for dst in dsts]
    return Blueprint("boutique", nodes, edges)


def _generic(rng: random.Random, count: int, tier: Tier, taken: set[str]) -> list[Node]:
    """``count`` services with names from the generic pool, each with one port."""
    suffix = rng.choice(("", "", "-svc", "-api", "-service"))
    names = [name for name in GENERIC_NAMES if name not in taken]
    chosen = rng.sample(names, count)
    taken.update(chosen)
    nodes = []
    for name in chosen:
        udp = rng.random() < 0.1
        port = _main(rng, SERVICE_PORTS, "udp-api" if udp else rng.choice(("http", "grpc")), udp)
        nodes.append(Node(name, tier, (f"{name}{suffix}", name, f"{name}-v2"), [port]))
    return nodes


def three_tier(rng: random.Random, size: int) -> Blueprint:
    """Web front ends, an API layer, a database, a cache, a queue and its workers."""
    taken: set[str] = set()
    client = []
    if rng.random() < 0.6:
        client.append(Node("client", "client", ("loadgen", "users", "synthetic", "probe")))
    webs = [
        Node("web", "web", ("web", "portal", "site", "ui"), [_main(rng, (80, 8080, 3000), "http")])
    ]
    if size >= 8 and rng.random() < 0.5:
        webs.append(Node("admin", "web", ("admin", "admin-ui", "console", "backoffice"),
                         [_main(rng, (80, 8080, 8443, 9000), "http")]))  # fmt: skip
    memcached = rng.random() < 0.4
    data = [
        Node("db", "data", ("postgres", "db", "database", "pg"), [_main(rng, (5432,), "postgres")])
        if rng.random() < 0.5
        else Node("db", "data", ("mysql", "db", "mariadb", "sql"), [_main(rng, (3306,), "mysql")]),
        Node("cache", "data", ("memcached", "cache", "memcache"),
             [_main(rng, (11211,), "memcache", udp=rng.random() < 0.5)])
        if memcached
        else Node("cache", "data", ("redis", "cache", "session-cache"),
                  [_main(rng, (6379,), "redis")]),
        rng.choice((
            Node("queue", "data", ("rabbitmq", "queue", "broker", "mq"),
                 [_main(rng, (5672,), "amqp")]),
            Node("queue", "data", ("nats", "queue", "events", "bus"),
                 [_main(rng, (4222,), "nats")]),
            Node("queue", "data", ("kafka", "queue", "stream", "log"),
                 [_main(rng, (9092,), "kafka")]),
        )),
    ]  # fmt: skip
    workers = [Node("worker", "backend", ("worker", "jobs", "consumer", "indexer"))]
    if size >= 10 and rng.random() < 0.5:
        workers.append(Node("worker2", "backend", ("scheduler", "cron", "mailer-worker")))
    fixed = len(client) + len(webs) + len(data) + len(workers)
    apis = _generic(rng, max(2, size - fixed), "backend", taken)
    edges = [(node.role, webs[0].role, MAIN) for node in client]
    edges += [(webs[0].role, api.role, MAIN) for api in apis]
    if len(webs) > 1:
        edges += [(webs[1].role, api.role, MAIN) for api in rng.sample(apis, len(apis) // 2 + 1)]
    for index, api in enumerate(apis):
        for store, chance in (("db", 0.8), ("cache", 0.5), ("queue", 0.4)):
            if index == 0 or rng.random() < chance:
                edges.append((api.role, store, MAIN))
        later = apis[index + 1 :]
        if later and rng.random() < 0.3:
            edges.append((api.role, rng.choice(later).role, MAIN))
    for worker in workers:
        edges.append((worker.role, "queue", MAIN))
        if rng.random() < 0.7:
            edges.append((worker.role, "db", MAIN))
    return Blueprint("three-tier", [*client, *webs, *apis, *data, *workers], edges)


def layered(rng: random.Random, size: int) -> Blueprint:
    """A random DAG in layers: a client, gateways, then services that call only deeper layers;
    every service below the gateways has a caller."""
    taken: set[str] = set()
    client = Node("client", "client", ("client", "loadgen", "users", "traffic"))
    count = max(3, size - 1)
    depth = 3 if count < 8 else rng.choice((3, 4)) if count < 14 else rng.choice((4, 5))
    sizes = [1] * depth
    for _ in range(count - depth):
        sizes[rng.randrange(1, depth) if rng.random() < 0.85 else 0] += 1
    layers: list[list[Node]] = []
    for index, width in enumerate(sizes):
        tier: Tier = "web" if index == 0 else "data" if index == depth - 1 else "backend"
        layers.append(_generic(rng, width, tier, taken))
    edges = [(client.role, gateway.role, MAIN) for gateway in layers[0]]
    for index in range(1, depth):
        for node in layers[index]:
            edges.append((rng.choice(layers[index - 1]).role, node.role, MAIN))
    for index in range(depth - 1):
        deeper = [node for layer in layers[index + 1 :] for node in layer]
        for node in layers[index]:
            for callee in rng.sample(deeper, min(len(deeper), rng.randint(0, 2))):
                edges.append((node.role, callee.role, MAIN))
    unique = list(dict.fromkeys(edges))
    return Blueprint("layered", [client, *(n for layer in layers for n in layer)], unique)
