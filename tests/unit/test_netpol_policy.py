"""NetworkPolicy manifests: validation, the API server's defaults, and absent versus empty."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from netdojo.labs.k8s.netpol.cluster import parse_cluster
from netdojo.labs.k8s.netpol.policy import NetworkPolicy
from netdojo.labs.k8s.objects import NAME_LABEL, ManifestError, Namespace, Pod


def _policy(spec: dict[str, Any], namespace: str | None = "default") -> NetworkPolicy:
    meta: dict[str, Any] = {"name": "np"}
    if namespace is not None:
        meta["namespace"] = namespace
    return NetworkPolicy.model_validate({"kind": "NetworkPolicy", "metadata": meta, "spec": spec})


@pytest.mark.parametrize(
    ("spec", "types"),
    [
        ({}, {"Ingress"}),
        ({"policyTypes": []}, {"Ingress"}),
        ({"ingress": [{}]}, {"Ingress"}),
        ({"egress": [{}]}, {"Ingress", "Egress"}),
        ({"egress": []}, {"Ingress"}),  # SetDefaults_NetworkPolicy: len(spec.Egress) != 0
        ({"policyTypes": ["Egress"]}, {"Egress"}),
        ({"policyTypes": ["Egress", "Ingress"]}, {"Ingress", "Egress"}),
        ({"policyTypes": ["Ingress"], "egress": [{}]}, {"Ingress"}),
    ],
)
def test_policy_types_default(spec: dict[str, Any], types: set[str]) -> None:
    assert _policy(spec).policy_types == types


def test_rules_outside_the_policy_types_have_no_effect() -> None:
    policy = _policy({"policyTypes": ["Egress"], "ingress": [{}], "egress": [{}]})
    assert policy.ingress_rules == ()
    assert len(policy.egress_rules) == 1


def test_absent_and_empty_fields() -> None:
    policy = _policy(
        {
            "podSelector": None,
            "ingress": [{}, {"from": [], "ports": []}],
            "egress": [{"to": [{"podSelector": {}}]}],
        }
    )
    assert policy.spec.pod_selector.is_empty
    first, second = policy.ingress_rules
    assert first.peers == () and first.ports is None
    assert second.peers == () and second.ports == ()
    assert policy.egress_rules[0].peers[0].pod_selector is not None
    assert policy.egress_rules[0].peers[0].namespace_selector is None
    assert _policy({"ingress": []}).ingress_rules == ()
    assert _policy({}, namespace=None).namespace == "default"


def test_port_protocol_defaults_to_tcp() -> None:
    policy = _policy({"ingress": [{"ports": [{"port": 80}, {"port": 53, "protocol": None}]}]})
    assert [port.protocol for port in policy.ingress_rules[0].ports or ()] == ["TCP", "TCP"]


@pytest.mark.parametrize(
    "port",
    [
        {"port": "http", "endPort": 90},
        {"endPort": 90},
        {"port": 100, "endPort": 90},
        {"port": 0},
        {"port": 65536},
        {"port": "80"},
        {"port": "Http"},
        {"port": "a-very-long-port-name"},
        {"port": "web--api"},
        {"port": 80, "protocol": "ICMP"},
    ],
)
def test_invalid_ports_are_refused(port: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        _policy({"ingress": [{"ports": [port]}]})


@pytest.mark.parametrize(
    "peer",
    [
        {},
        {"ipBlock": {"cidr": "10.0.0.0/8"}, "podSelector": {}},
        {"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.0.0.0/8"]}},
        {"ipBlock": {"cidr": "10.0.0.0/8", "except": ["11.0.0.0/16"]}},
        {"ipBlock": {"cidr": "not-a-cidr"}},
        {"podselector": {}},
    ],
)
def test_invalid_peers_are_refused(peer: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        _policy({"ingress": [{"from": [peer]}]})


def test_a_cidr_with_host_bits_is_read_as_its_network() -> None:
    block = _policy({"egress": [{"to": [{"ipBlock": {"cidr": "10.1.2.3/16"}}]}]})
    peer = block.egress_rules[0].peers[0]
    assert peer.ip_block is not None and str(peer.ip_block.cidr) == "10.1.0.0/16"


def test_namespaces_carry_their_name_label() -> None:
    namespace = Namespace.model_validate(
        {"metadata": {"name": "shop", "labels": {NAME_LABEL: "x"}}}
    )
    assert namespace.labels == {NAME_LABEL: "shop"}


def test_pods_read_ports_and_address() -> None:
    pod = Pod.model_validate(
        {
            "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {
                "containers": [
                    {"name": "a", "ports": [{"name": "http", "containerPort": 80}]},
                    {"name": "b", "ports": [{"containerPort": 53, "protocol": "UDP"}]},
                ]
            },
            "status": {"podIP": "10.0.0.5", "phase": "Running"},
        }
    )
    assert pod.key == "default/web"
    assert str(pod.ip) == "10.0.0.5"
    assert [(p.name, p.container_port, p.protocol) for p in pod.ports] == [
        ("http", 80, "TCP"),
        (None, 53, "UDP"),
    ]


def _ns(name: str) -> dict[str, Any]:
    return {"kind": "Namespace", "metadata": {"name": name}}


def test_a_cluster_is_read_from_lists_and_skips_other_kinds() -> None:
    cluster = parse_cluster(
        [
            {"kind": "List", "items": [_ns("a"), {"kind": "Service", "metadata": {"name": "s"}}]},
            {"kind": "Pod", "metadata": {"name": "p", "namespace": "a"}},
            {"kind": "NetworkPolicy", "metadata": {"name": "np", "namespace": "a"}, "spec": {}},
        ]
    )
    assert [ns.name for ns in cluster.namespaces] == ["a"]
    assert [pod.key for pod in cluster.pods] == ["a/p"]
    assert [policy.key for policy in cluster.policies] == ["a/np"]


@pytest.mark.parametrize(
    ("manifests", "message"),
    [
        ([{"kind": "Pod", "metadata": {"name": "p", "namespace": "b"}}], "not listed"),
        ([_ns("a"), _ns("a")], "listed twice"),
        ([{"kind": "NetworkPolicy", "metadata": {"name": "np"}, "spec": {"x": 1}}], "np"),
        (["not a mapping"], "mapping"),
    ],
)
def test_bad_manifests_raise_a_manifest_error(manifests: list[Any], message: str) -> None:
    with pytest.raises(ManifestError, match=message):
        parse_cluster(manifests)
