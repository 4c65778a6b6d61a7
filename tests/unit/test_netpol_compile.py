"""Compiling policies into per-pod rules: isolation, peers as addresses, port resolution; and the
evaluator over the compiled rules."""

from __future__ import annotations

from typing import Any

from netdojo.labs.k8s.netpol.cluster import Cluster, parse_cluster
from netdojo.labs.k8s.netpol.compiler import compile_cluster
from netdojo.labs.k8s.netpol.evaluate import Flow, allowed, matrix
from netdojo.labs.k8s.netpol.ir import ClusterRules, PortRange

HTTP80 = {"name": "http", "containerPort": 80}
HTTP8080 = {"name": "http", "containerPort": 8080}
DNS_UDP = {"name": "dns", "containerPort": 53, "protocol": "UDP"}


def _pod(key: str, ip: str | None, labels: dict[str, str], *ports: dict[str, Any]) -> dict:
    namespace, name = key.split("/")
    pod: dict[str, Any] = {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {"containers": [{"name": "c", "ports": list(ports)}]},
    }
    if ip:
        pod["status"] = {"podIP": ip}
    return pod


NAMESPACES = [
    {"kind": "Namespace", "metadata": {"name": "shop", "labels": {"team": "a"}}},
    {"kind": "Namespace", "metadata": {"name": "ops", "labels": {"team": "b"}}},
]
PODS = [
    _pod("shop/web", "10.0.0.1", {"app": "web"}, HTTP80),
    _pod("shop/api", "10.0.0.2", {"app": "api"}, HTTP8080, DNS_UDP),
    _pod("shop/db", "10.0.1.3", {"app": "db"}, {"containerPort": 5432}),
    _pod("ops/mon", "10.0.2.4", {"app": "web"}, {"containerPort": 9100}),
]


def _cluster(*specs: dict[str, Any], pods: list[dict] | None = None) -> Cluster:
    policies = [
        {
            "kind": "NetworkPolicy",
            "metadata": {"name": f"np{i}", "namespace": spec.get("namespace", "shop")},
            "spec": {key: value for key, value in spec.items() if key != "namespace"},
        }
        for i, spec in enumerate(specs)
    ]
    return parse_cluster([*NAMESPACES, *(PODS if pods is None else pods), *policies])


def _rules(*specs: dict[str, Any], pods: list[dict] | None = None) -> ClusterRules:
    return compile_cluster(_cluster(*specs, pods=pods))


def test_no_policy_isolates_nothing() -> None:
    rules = _rules()
    assert not any(p.ingress.isolated or p.egress.isolated for p in rules.pods)
    assert all(matrix(rules).values())


def test_isolation_follows_selection_and_policy_types() -> None:
    rules = _rules(
        {"podSelector": {"matchLabels": {"app": "db"}}},
        {"podSelector": {"matchLabels": {"app": "web"}}, "policyTypes": ["Egress"]},
    )
    db, web, mon = rules.pod("shop/db"), rules.pod("shop/web"), rules.pod("ops/mon")
    assert (db.ingress.isolated, db.egress.isolated) == (True, False)
    assert (web.ingress.isolated, web.egress.isolated) == (False, True)
    assert not mon.egress.isolated  # a policy selects pods of its own namespace only
    assert not allowed(rules, "shop/api", "shop/db", "TCP", 5432)
    assert not allowed(rules, "shop/web", "shop/api", "TCP", 8080)
    assert allowed(rules, "shop/api", "shop/web", "TCP", 80)


def test_policies_selecting_a_pod_add_up() -> None:
    rules = _rules(
        {
            "podSelector": {},
            "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "web"}}}]}],
        },
        {"podSelector": {"matchLabels": {"app": "db"}}, "ingress": [{"ports": [{"port": 5432}]}]},
    )
    assert allowed(rules, "shop/web", "shop/api", "TCP", 8080)
    assert not allowed(rules, "ops/mon", "shop/api", "TCP", 8080)
    assert allowed(rules, "ops/mon", "shop/db", "TCP", 5432)
    assert [a.origin for a in rules.pod("shop/db").ingress.allows] == [
        "shop/np0 ingress[0]",
        "shop/np1 ingress[0]",
    ]


def test_peers_resolve_to_pod_addresses() -> None:
    same_namespace = {"podSelector": {"matchLabels": {"app": "web"}}}
    other_namespace = {"namespaceSelector": {"matchLabels": {"team": "b"}}}
    both = {"namespaceSelector": {}, "podSelector": {"matchLabels": {"app": "web"}}}
    peers = []
    for peer in (same_namespace, other_namespace, both):
        rules = _rules(
            {"podSelector": {"matchLabels": {"app": "db"}}, "ingress": [{"from": [peer]}]}
        )
        allow = rules.pod("shop/db").ingress.allows[0]
        peers.append([str(block.network) for block in allow.peers or ()])
    assert peers == [["10.0.0.1/32"], ["10.0.2.4/32"], ["10.0.2.4/32", "10.0.0.1/32"]]


def test_a_rule_whose_peers_select_nothing_allows_nothing() -> None:
    nobody = {"podSelector": {"matchLabels": {"app": "none"}}}
    rules = _rules({"podSelector": {}, "ingress": [{"from": [nobody]}]})
    assert rules.pod("shop/web").ingress.allows == ()
    assert rules.pod("shop/web").ingress.isolated


def test_pods_without_an_address_match_no_peer() -> None:
    pods = [*PODS, _pod("shop/pending", None, {"app": "web"}, HTTP80)]
    rules = _rules(
        {
            "podSelector": {"matchLabels": {"app": "db"}},
            "ingress": [{"from": [{"podSelector": {}}]}],
        },
        pods=pods,
    )
    peers = rules.pod("shop/db").ingress.allows[0].peers or ()
    assert len(peers) == 3
    assert not any(
        flow.src == "shop/pending" or flow.dst == "shop/pending" for flow in matrix(rules)
    )


def test_ip_blocks_cover_pod_addresses_minus_excepts() -> None:
    block = {"ipBlock": {"cidr": "10.0.0.0/23", "except": ["10.0.0.2/32"]}}
    rules = _rules({"podSelector": {"matchLabels": {"app": "db"}}, "ingress": [{"from": [block]}]})
    assert allowed(rules, "shop/web", "shop/db", "TCP", 5432)
    assert not allowed(rules, "shop/api", "shop/db", "TCP", 5432)
    assert not allowed(rules, "ops/mon", "shop/db", "TCP", 5432)


def test_ports_resolve_with_protocol_ranges_and_names() -> None:
    rules = _rules(
        {
            "podSelector": {"matchLabels": {"app": "api"}},
            "ingress": [
                {
                    "ports": [
                        {"port": "http"},
                        {"port": "dns"},  # TCP by default: the pod's dns is UDP
                        {"port": 9000, "endPort": 9100, "protocol": "UDP"},
                        {"protocol": "SCTP"},
                        {"port": "missing"},
                    ]
                }
            ],
        }
    )
    assert rules.pod("shop/api").ingress.allows[0].ports == (
        PortRange(protocol="TCP", first=8080, last=8080),
        PortRange(protocol="UDP", first=9000, last=9100),
        PortRange(protocol="SCTP", first=1, last=65535),
    )


def test_a_rule_whose_named_ports_resolve_to_nothing_allows_nothing() -> None:
    rules = _rules(
        {"podSelector": {"matchLabels": {"app": "db"}}, "ingress": [{"ports": [{"port": "http"}]}]}
    )
    assert rules.pod("shop/db").ingress.allows == ()


def test_named_egress_ports_resolve_on_each_destination() -> None:
    rules = _rules(
        {
            "podSelector": {"matchLabels": {"app": "web"}},
            "policyTypes": ["Egress"],
            "egress": [{"ports": [{"port": "http"}, {"port": 5432}]}],
        }
    )
    allows = rules.pod("shop/web").egress.allows
    assert allows[0].peers is None
    assert allows[0].ports == (PortRange(protocol="TCP", first=5432, last=5432),)
    named = {str(a.peers[0].network): a.ports for a in allows[1:] if a.peers}
    assert named == {
        "10.0.0.2/32": (PortRange(protocol="TCP", first=8080, last=8080),),
        "10.0.0.1/32": (PortRange(protocol="TCP", first=80, last=80),),
    }
    assert allowed(rules, "shop/web", "shop/api", "TCP", 8080)
    assert not allowed(rules, "shop/web", "shop/api", "TCP", 80)
    assert allowed(rules, "shop/web", "shop/db", "TCP", 5432)
    assert not allowed(rules, "shop/web", "ops/mon", "TCP", 9100)


def test_a_rule_without_ports_allows_every_protocol() -> None:
    rules = _rules({"podSelector": {"matchLabels": {"app": "api"}}, "ingress": [{}]})
    assert rules.pod("shop/api").ingress.allows[0].ports is None
    assert allowed(rules, "ops/mon", "shop/api", "UDP", 53)


def test_both_directions_must_allow() -> None:
    rules = _rules(
        {"podSelector": {"matchLabels": {"app": "web"}}, "policyTypes": ["Egress"], "egress": [{}]},
        {
            "podSelector": {"matchLabels": {"app": "api"}},
            "ingress": [{"ports": [{"port": 53, "protocol": "UDP"}]}],
        },
    )
    assert allowed(rules, "shop/web", "shop/api", "UDP", 53)
    assert not allowed(rules, "shop/web", "shop/api", "TCP", 8080)


def test_the_matrix_covers_declared_ports_of_distinct_pods() -> None:
    flows = set(matrix(_rules()))
    assert Flow("shop/web", "shop/api", "UDP", 53) in flows
    assert Flow("shop/web", "shop/web", "TCP", 80) not in flows
    assert len(flows) == 3 * (1 + 2 + 1 + 1)
    assert allowed(_rules({"podSelector": {}}), "shop/web", "shop/web", "TCP", 80)


def test_compilation_is_deterministic() -> None:
    every_namespace: dict[str, Any] = {"from": [{"namespaceSelector": {}}]}
    specs: list[dict[str, Any]] = [{"podSelector": {}, "ingress": [every_namespace]}]
    assert _rules(*specs) == compile_cluster(
        Cluster(
            namespaces=_cluster().namespaces,
            pods=tuple(reversed(_cluster().pods)),
            policies=_cluster(*specs).policies,
        )
    )
