"""Seeded microservice applications, their intended NetworkPolicy and its faults: determinism,
shapes, valid names and addresses, a matrix that is exactly the call graph, and faults that each
change it and are undone by their fix."""

from __future__ import annotations

import functools
import hashlib
import ipaddress
import json
import os
import random
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from netdojo.labs.names import NAME_PATTERN
from netdojo.scenarios.k8s.app import LEVEL_SIZES, App, generate_app
from netdojo.scenarios.k8s.matrix import PolicyMatrix, call_matrix
from netdojo.scenarios.k8s.policy import (
    PolicyStyle,
    draw_style,
    intended_policies,
)
from netdojo.scenarios.k8s.policy_faults import (
    POLICY_FAULTS,
    FaultKind,
    PolicyFault,
    PolicyFaults,
    apply_change,
)
from netdojo.scenarios.k8s.shapes import APP_SHAPES, AppShape

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


@functools.cache
def cases() -> list[tuple[App, PolicyStyle, list[dict]]]:
    return [build(seed) for seed in SEEDS]


def digest(seeds: range) -> str:
    out = hashlib.sha256()
    for seed in seeds:
        for level in LEVEL_SIZES:
            rng = random.Random(seed)
            app = generate_app(rng, level)
            style = draw_style(app, rng)
            policies = intended_policies(app, style)
            faults = PolicyFaults(app, policies)
            drawn = [faults.inject(kind, rng) for kind in POLICY_FAULTS]
            parts = [app.model_dump(), style.model_dump(), policies]
            parts += [fault.model_dump() if fault else None for fault in drawn]
            out.update(json.dumps(parts).encode())
    return out.hexdigest()


def test_one_seed_gives_byte_identical_output_in_any_process() -> None:
    script = "from tests.unit.test_k8s_app import digest; print(digest(range(4)))"
    here = digest(range(4))
    hash_seed = "1" if os.environ.get("PYTHONHASHSEED") != "1" else "2"
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    command = [sys.executable, "-c", script]
    root = Path(__file__).parents[2]
    done = subprocess.run(command, env=env, cwd=root, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == here


def test_seeds_draw_different_applications() -> None:
    texts = {json.dumps(app.model_dump()) for app, _, _ in cases()}
    assert len(texts) == len(cases())


def test_every_level_sizes_the_application_and_its_namespaces() -> None:
    for seed, (app, _, _) in zip(SEEDS, cases(), strict=True):
        shape, level = case(seed)
        low, high = (12 + 2 * (level == 3), 15) if shape == "boutique" else LEVEL_SIZES[level]
        assert app.shape == shape
        assert low <= len(app.workload.pods) <= high + (level == 1)
        namespaces = len(app.workload.namespaces)
        assert namespaces == 1 if level == 1 else 2 <= namespaces <= 3
        assert set(app.workload.namespaces) == {pod.namespace for pod in app.workload.pods}


def test_boutique_has_online_boutiques_call_graph() -> None:
    app = next(app for app, _, _ in cases() if app.shape == "boutique")
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
    for app, _, policies in cases():
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
    for app, _, _ in cases():
        assert len(set(app.calls)) == len(app.calls)
        for call in app.calls:
            assert call.src != call.dst
            declared = {(p.protocol, p.port) for p in app.workload.pod(call.dst).ports}
            assert (call.protocol, call.port) in declared
        for pod in app.everyone:
            callers = {c.src for c in app.calls if c.dst == pod}
            assert callers == set(app.pod_names) - {pod}


def test_the_draw_covers_every_shape_protocol_and_style() -> None:
    protocols = Counter(c.protocol for app, _, _ in cases() for c in app.calls)
    assert protocols["TCP"] > protocols["UDP"] > 0
    assert sum(app.dns is not None for app, _, _ in cases()) > 50
    styles = [style for _, style, _ in cases()]
    assert {s.structure for s in styles} == {"service", "grouped", "port"}
    for field in ("default_deny", "expressions", "merge_peers", "named_ports", "explicit_tcp"):
        assert {getattr(s, field) for s in styles} == {True, False}
    assert {s.everyone for s in styles} == {"namespaces", "ipblock"}
    assert 30 < sum(bool(s.egress_namespaces) for s in styles) < 170
    cross = [p for _, _, ps in cases() for p in ps if "namespaceSelector" in json.dumps(p)]
    assert cross
    assert any("matchExpressions" in json.dumps(ps) for _, _, ps in cases())


@pytest.mark.parametrize("part", range(4))
def test_the_intended_policy_allows_exactly_the_call_graph(part: int) -> None:
    for app, _, policies in cases()[part::4]:
        assert PolicyMatrix(app)(policies) == call_matrix(app)


BLOCKING_ONLY: set[FaultKind] = {
    "ingress_removed",
    "egress_added",
    "default_deny_added",
    "egress_without_rules",
    "egress_type_missing",
    "ipblock_except",
    "dns_blocked",
}
MIN_PLACES: dict[FaultKind, int] = {"ipblock_except": 30, "egress_type_missing": 40}
"""Seeds (of 200) that must offer a kind a place; every other kind needs 100."""


def faults_of(seed: int) -> tuple[App, list[dict], PolicyFaults, dict[FaultKind, PolicyFault]]:
    app, _, policies = cases()[seed]
    faults = PolicyFaults(app, policies)
    drawn = {kind: faults.inject(kind, random.Random(f"{seed}:{kind}")) for kind in POLICY_FAULTS}
    return app, policies, faults, {kind: f for kind, f in drawn.items() if f is not None}


@functools.cache
def drawn_faults() -> list[tuple[App, list[dict], PolicyFaults, dict[FaultKind, PolicyFault]]]:
    return [faults_of(seed) for seed in SEEDS]


def test_every_kind_finds_a_place_on_most_policy_sets() -> None:
    places = Counter(kind for *_, drawn in drawn_faults() for kind in drawn)
    for kind in POLICY_FAULTS:
        assert places[kind] >= MIN_PLACES.get(kind, 100), kind
    for kind in ("ingress_removed", "port_changed", "protocol_changed", "selector_typo"):
        assert places[kind] == len(SEEDS)
    with_dns = sum(app.dns is not None for app, *_ in drawn_faults())
    assert places["dns_blocked"] == with_dns


def test_a_fault_is_injected_by_its_change_and_undone_by_its_fix() -> None:
    for _, policies, _, drawn in drawn_faults():
        for fault in drawn.values():
            assert apply_change(policies, fault.inject) == list(fault.policies)
            assert apply_change(fault.policies, fault.fix) == policies
            assert fault.changed and fault.description
            refs = [*fault.inject.apply, *fault.fix.apply]
            assert all(m["metadata"]["name"] == fault.policy.name for m in refs)


def test_each_fault_changes_the_flows_its_kind_changes() -> None:
    for app, _, _, drawn in drawn_faults():
        calls = call_matrix(app)
        for kind, fault in drawn.items():
            for flow in fault.changed:
                assert calls[(flow.src, flow.dst, flow.protocol, flow.port)] != flow.allowed
            if kind in BLOCKING_ONLY:
                assert not fault.opened, kind
            if kind == "ingress_added":
                assert fault.opened and not fault.blocked
            if kind == "dns_blocked":
                dns = app.key(app.dns or "")
                assert any(
                    f.dst == dns and (f.protocol, f.port) == ("UDP", 53) for f in fault.blocked
                )


@pytest.mark.parametrize("part", range(4))
def test_a_faults_changed_flows_are_the_whole_difference_of_the_matrices(part: int) -> None:
    for _, _, drawn_from, drawn in drawn_faults()[part::16]:
        for fault in drawn.values():
            after = drawn_from.evaluate(list(fault.policies))
            before = drawn_from.matrix
            differ = {flow: verdict for flow, verdict in after.items() if verdict != before[flow]}
            assert differ
            assert {(f.src, f.dst, f.protocol, f.port): f.allowed for f in fault.changed} == differ


def test_faults_keep_off_the_policies_to_avoid() -> None:
    for _, _, drawn_from, drawn in drawn_faults()[:20]:
        for kind, fault in drawn.items():
            again = drawn_from.inject(kind, random.Random(0), avoid=[fault.policy])
            assert again is None or again.policy != fault.policy
