"""The node agent's service half as pure functions: which pods a Service reaches on which
port, the nat table that sends a ClusterIP there, the names each pod resolves, and the
EndpointSlices the API shows."""

from __future__ import annotations

from netdojo.labs.k8s.services import (
    SERVICES_CHAIN,
    endpoint_slices,
    hosts_file,
    nat_table,
    resolv_conf,
    service_routes,
)
from netdojo.labs.k8s.workload import ContainerPort, PodPlan, ServicePlan, ServicePort, Workload

PODS = [
    PodPlan(
        name="api-1",
        namespace="shop",
        labels={"app": "api"},
        ports=[ContainerPort(port=8080, name="http")],
        ip="10.244.0.10",
    ),
    PodPlan(
        name="api-2",
        namespace="shop",
        labels={"app": "api"},
        ports=[ContainerPort(port=9090, name="http")],
        ip="10.244.0.11",
    ),
    PodPlan(name="api-ops", namespace="ops", labels={"app": "api"}, ip="10.244.0.12"),
    PodPlan(
        name="dns",
        namespace="ops",
        labels={"app": "dns"},
        ports=[ContainerPort(port=53, protocol="UDP", name="dns")],
        ip="10.244.0.13",
    ),
]
API = ServicePlan(
    name="api",
    namespace="shop",
    selector={"app": "api"},
    ports=[ServicePort(port=80, target="http")],
)
DNS = ServicePlan(
    name="dns",
    namespace="ops",
    selector={"app": "dns"},
    ports=[ServicePort(port=53, target=53, protocol="UDP")],
)
EMPTY = ServicePlan(
    name="none", namespace="ops", selector={"app": "gone"}, ports=[ServicePort(port=1, target=1)]
)
WORKLOAD = Workload(
    namespaces={"shop": {}, "ops": {}},
    pods=PODS,
    services=[API, DNS, EMPTY],
    subnet="10.244.0.0/24",
)
IPS = {("shop", "api"): "10.96.0.20", ("ops", "dns"): "10.96.0.10", ("ops", "none"): "10.96.0.30"}


def test_a_named_target_port_is_looked_up_per_pod_and_other_namespaces_are_not_selected() -> None:
    routes = {route.cluster_ip: route for route in service_routes(WORKLOAD, IPS)}
    assert routes["10.96.0.20"].endpoints == (("10.244.0.10", 8080), ("10.244.0.11", 9090))
    assert routes["10.96.0.10"].protocol == "UDP"
    assert routes["10.96.0.10"].endpoints == (("10.244.0.13", 53),)
    assert routes["10.96.0.30"].endpoints == ()


def test_a_service_without_a_cluster_ip_gets_no_route_and_no_name() -> None:
    ips = {key: ip for key, ip in IPS.items() if key != ("shop", "api")}
    assert {route.cluster_ip for route in service_routes(WORKLOAD, ips)} == {
        "10.96.0.10",
        "10.96.0.30",
    }
    assert "api.shop" not in hosts_file(PODS[0], WORKLOAD, ips)


def test_the_nat_table_spreads_a_service_over_its_endpoints_as_kube_proxy_does() -> None:
    text = nat_table(service_routes(WORKLOAD, IPS))
    lines = text.splitlines()
    assert lines[0] == "*nat" and lines[-1] == "COMMIT"
    assert f"-A OUTPUT -j {SERVICES_CHAIN}" in lines
    api = [line for line in lines if "10.96.0.20/32" in line]
    assert api == [
        f"-A {SERVICES_CHAIN} -d 10.96.0.20/32 -p tcp -m tcp --dport 80 -m statistic --mode random "
        "--probability 0.50000 -j DNAT --to-destination 10.244.0.10:8080",
        f"-A {SERVICES_CHAIN} -d 10.96.0.20/32 -p tcp -m tcp --dport 80 "
        "-j DNAT --to-destination 10.244.0.11:9090",
    ]
    assert f"-A {SERVICES_CHAIN} -d 10.96.0.10/32 -p udp -m udp --dport 53 " in text
    assert "10.96.0.30" not in text, "no endpoints, no translation"


def test_short_names_resolve_only_in_the_services_namespace() -> None:
    shop = hosts_file(PODS[0], WORKLOAD, IPS)
    ops = hosts_file(PODS[2], WORKLOAD, IPS)
    assert "10.96.0.20\tapi.shop.svc.cluster.local api.shop.svc api.shop api\n" in shop
    assert "10.96.0.20\tapi.shop.svc.cluster.local api.shop.svc api.shop\n" in ops
    assert "10.244.0.10\tapi-1\n" in shop
    assert resolv_conf(PODS[2]).startswith("search ops.svc.cluster.local svc.cluster.local ")
    assert "nameserver" not in resolv_conf(PODS[2])


def test_an_endpoint_slice_lists_the_selected_pods_and_a_port_they_agree_on() -> None:
    slices = {item["metadata"]["name"]: item for item in endpoint_slices(WORKLOAD)}
    api = slices["api-lab"]
    assert [e["addresses"] for e in api["endpoints"]] == [["10.244.0.10"], ["10.244.0.11"]]
    assert api["ports"] == [], "the pods disagree on the port a name stands for"
    assert slices["dns-lab"]["ports"] == [{"port": 53, "protocol": "UDP"}]
    assert slices["none-lab"]["endpoints"] == []
