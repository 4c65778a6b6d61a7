"""Seeded microservice applications and their intended NetworkPolicy: determinism, shapes, valid
names and addresses, and a matrix that is exactly the call graph."""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import random
import re
import subprocess
import sys
from collections import Counter

import pytest

from netdojo.labs.names import NAME_PATTERN
from netdojo.scenarios.k8s_app import LEVEL_SIZES, App, generate_app
from netdojo.scenarios.k8s_policy import (
    PolicyMatrix,
    PolicyStyle,
    call_matrix,
    draw_style,
    intended_policies,
)
from netdojo.scenarios.k8s_shapes import APP_SHAPES, AppShape

SEEDS = range(200)
DNS_LABEL = re.compile(r"^[a-z]([a-z0-9-]*[a-z0-9])?$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$")
LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?)?$")
PORT_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")


def case(seed: int) -> tuple[AppShape, int]:
    """Every shape at every level, spread over the seeds."""
    return APP_SHAPES[seed % 3], 1 + (seed // 3) % 3


def build(seed: int) -> tuple[App, PolicyStyle, list[dict]]:
    shape, level = case(seed)
    rng = random.Random(seed)
    app = generate_app(rng, level, shape)
    style = draw_style(app, rng)
    return app, style, intended_policies(app, style)


CASES = [build(seed) for seed in SEEDS]


def digest(seeds: range) -> str:
    out = hashlib.sha256()
    for seed in seeds:
        for level in LEVEL_SIZES:
            rng = random.Random(seed)
            app = generate_app(rng, level)
            style = draw_style(app, rng)
            text = json.dumps([app.model_dump(), style.model_dump(), intended_policies(app, style)])
            out.update(text.encode())
    return out.hexdigest()


def test_one_seed_gives_byte_identical_output_in_any_process() -> None:
    script = "from tests.unit.test_k8s_app import digest; print(digest(range(6)))"
    here = digest(range(6))
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        )
        assert done.stdout.strip() == here


def test_seeds_draw_different_applications() -> None:
    texts = {json.dumps(app.model_dump()) for app, _, _ in CASES}
    assert len(texts) == len(CASES)


def test_every_level_sizes_the_application_and_its_namespaces() -> None:
    for seed, (app, _, _) in zip(SEEDS, CASES, strict=True):
        shape, level = case(seed)
        low, high = (12 + 2 * (level == 3), 15) if shape == "boutique" else LEVEL_SIZES[level]
        assert app.shape == shape
        assert low <= len(app.workload.pods) <= high + (level == 1)
        namespaces = len(app.workload.namespaces)
        assert namespaces == 1 if level == 1 else 2 <= namespaces <= 3
        assert set(app.workload.namespaces) == {pod.namespace for pod in app.workload.pods}


def test_boutique_has_online_boutiques_call_graph() -> None:
    app = next(app for app, _, _ in CASES if app.shape == "boutique")
    by_role = {(app.roles[c.src], app.roles[c.dst]) for c in app.calls}
    core = {pair for pair in by_role if not {"dns", "statsd", "prometheus"} & set(pair)}
    assert core == {
        ("loadgenerator", "frontend"),
        *(
            ("frontend", dst)
            for dst in ("productcatalog", "currency", "cart", "recommendation", "shipping")
        ),
        ("frontend", "checkout"),
        ("frontend", "ad"),
        *(
            ("checkout", dst)
            for dst in ("productcatalog", "shipping", "payment", "email", "currency", "cart")
        ),
        ("recommendation", "productcatalog"),
        ("cart", "redis-cart"),
    }


def test_names_addresses_labels_and_ports_are_valid() -> None:
    for app, _, policies in CASES:
        pods = app.workload.pods
        names = [pod.name for pod in pods]
        assert len(set(names)) == len(names)
        network = ipaddress.ip_network(app.workload.subnet)
        assert network.prefixlen == 24
        hosts = [ipaddress.ip_address(pod.ip) for pod in pods]
        assert len(set(hosts)) == len(hosts)
        for pod, host in zip(pods, hosts, strict=True):
            assert re.match(NAME_PATTERN, pod.name) and DNS_LABEL.match(pod.name)
            assert host in network and int(host) - int(network.network_address) not in (0, 1, 255)
            assert pod.labels[app.identity_label] == pod.name
            assert all(LABEL_VALUE.match(value) for value in pod.labels.values())
            named = [port.name for port in pod.ports if port.name]
            assert len(set(named)) == len(named)
            assert all(PORT_NAME.match(name) and len(name) <= 15 for name in named)
        for labels in app.workload.namespaces.values():
            assert app.namespace_label in labels
        values = [labels[app.namespace_label] for labels in app.workload.namespaces.values()]
        assert len(set(values)) == len(values)
        keys = [(p["metadata"]["namespace"], p["metadata"]["name"]) for p in policies]
        assert len(set(keys)) == len(keys)
        assert all(DNS_SUBDOMAIN.match(name) and len(name) <= 253 for _, name in keys)
        assert {s.name for s in app.workload.services} == {p.name for p in pods if p.ports}


def test_calls_go_to_declared_ports_of_other_pods() -> None:
    for app, _, _ in CASES:
        assert len(set(app.calls)) == len(app.calls)
        for call in app.calls:
            assert call.src != call.dst
            declared = {(p.protocol, p.port) for p in app.workload.pod(call.dst).ports}
            assert (call.protocol, call.port) in declared
        for pod in app.everyone:
            callers = {c.src for c in app.calls if c.dst == pod}
            assert callers == set(app.pod_names) - {pod}


def test_the_draw_covers_every_shape_protocol_and_style() -> None:
    protocols = Counter(c.protocol for app, _, _ in CASES for c in app.calls)
    assert protocols["TCP"] > protocols["UDP"] > 0
    assert sum(app.dns is not None for app, _, _ in CASES) > 50
    styles = [style for _, style, _ in CASES]
    assert {s.structure for s in styles} == {"service", "grouped", "port"}
    for field in ("default_deny", "expressions", "merge_peers", "named_ports", "explicit_tcp"):
        assert {getattr(s, field) for s in styles} == {True, False}
    assert {s.everyone for s in styles} == {"namespaces", "ipblock"}
    assert 30 < sum(bool(s.egress_namespaces) for s in styles) < 170
    cross = [p for _, _, ps in CASES for p in ps if "namespaceSelector" in json.dumps(p)]
    assert cross
    assert any("matchExpressions" in json.dumps(ps) for _, _, ps in CASES)


@pytest.mark.parametrize("part", range(4))
def test_the_intended_policy_allows_exactly_the_call_graph(part: int) -> None:
    for app, _, policies in CASES[part::4]:
        assert PolicyMatrix(app)(policies) == call_matrix(app)
