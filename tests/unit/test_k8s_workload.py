"""A workload's two faces: the API objects a scenario's pods become, and their lab devices."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from netdojo.labs.k8s.pods import LISTENER_PATH, POD_LINK, pod_lab
from netdojo.labs.k8s.workload import (
    NODE,
    ContainerPort,
    PodPlan,
    ServicePlan,
    ServicePort,
    Workload,
    pod_status,
)
from netdojo.labs.spec import LabSpec


def _workload(**changes: object) -> Workload:
    data: dict[str, object] = {
        "namespaces": {"shop": {"team": "shop"}, "ops": {}},
        "pods": [
            PodPlan(
                name="web",
                namespace="shop",
                labels={"app": "web"},
                ip="10.244.0.10",
                ports=[ContainerPort(port=8080, name="http")],
            ),
            PodPlan(
                name="dns",
                namespace="ops",
                labels={"app": "dns"},
                ip="10.244.0.11",
                ports=[ContainerPort(port=53, protocol="UDP"), ContainerPort(port=53)],
            ),
            PodPlan(name="probe", namespace="ops", ip="10.244.0.12"),
        ],
        "services": [
            ServicePlan(
                name="web",
                namespace="shop",
                selector={"app": "web"},
                ports=[ServicePort(port=80, target="http", name="web")],
            ),
        ],
        "subnet": "10.244.0.0/24",
    }
    data.update(changes)
    return Workload.model_validate(data)


def test_manifests_come_in_creation_order_and_bind_every_pod_to_the_node() -> None:
    manifests = _workload().manifests()
    kinds = [m["kind"] for m in manifests]
    assert kinds == ["Node", "Namespace", "Namespace", "Pod", "Pod", "Pod", "Service"]
    pods = [m for m in manifests if m["kind"] == "Pod"]
    assert {p["spec"]["nodeName"] for p in pods} == {NODE}
    dns = next(p for p in pods if p["metadata"]["name"] == "dns")
    assert dns["metadata"] == {"name": "dns", "namespace": "ops", "labels": {"app": "dns"}}
    assert dns["spec"]["containers"][0]["ports"] == [
        {"containerPort": 53, "protocol": "UDP"},
        {"containerPort": 53, "protocol": "TCP"},
    ]
    web = next(p for p in pods if p["metadata"]["name"] == "web")
    assert web["spec"]["containers"][0]["ports"] == [
        {"containerPort": 8080, "protocol": "TCP", "name": "http"}
    ]
    service = manifests[-1]
    assert service["spec"] == {
        "selector": {"app": "web"},
        "ports": [{"port": 80, "targetPort": "http", "protocol": "TCP", "name": "web"}],
    }


def test_each_pod_is_a_device_on_the_pods_network_listening_on_its_ports() -> None:
    workload = _workload()
    spec = pod_lab(workload, "shop")
    assert spec.kubernetes == workload
    assert [d.name for d in spec.devices] == ["web", "dns", "probe"]
    assert [link.name for link in spec.links] == [POD_LINK]
    assert spec.links[0].endpoints == [("web", 0), ("dns", 0), ("probe", 0)]
    dns = spec.device("dns")
    assert dns.role == "host"
    assert dns.startup[0] == "ip address add 10.244.0.11/24 dev eth0"
    assert f"python3 {LISTENER_PATH} dns UDP/53 TCP/53 " in dns.startup[-1]
    assert LISTENER_PATH in dns.files
    probe = spec.device("probe")
    assert not probe.files and not any("python3" in line for line in probe.startup)


def test_a_running_pod_reports_its_planned_address_and_readiness() -> None:
    pod = _workload().pod("web")
    status = pod_status(pod, "2026-01-01T00:00:00Z")["status"]
    assert status["phase"] == "Running" and status["podIP"] == "10.244.0.10"
    assert status["podIPs"] == [{"ip": "10.244.0.10"}]
    ready = {c["type"]: c["status"] for c in status["conditions"]}
    assert ready["Ready"] == "True" and ready["ContainersReady"] == "True"


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"subnet": "10.245.0.0/24"}, "is not in 10.245.0.0/24"),
        ({"namespaces": {"shop": {}}}, "namespace 'ops' is not planned"),
        (
            {
                "pods": [
                    PodPlan(name="a", namespace="ops", ip="10.244.0.1"),
                    PodPlan(name="a", namespace="shop", ip="10.244.0.2"),
                ]
            },
            "pod names must be unique",
        ),
        (
            {
                "pods": [
                    PodPlan(name="a", namespace="ops", ip="10.244.0.1"),
                    PodPlan(name="b", namespace="shop", ip="10.244.0.1"),
                ]
            },
            "pod addresses must be unique",
        ),
    ],
)
def test_an_inconsistent_workload_is_refused(change: dict[str, object], problem: str) -> None:
    with pytest.raises(ValidationError, match=problem):
        _workload(**change)


def test_a_lab_spec_names_a_device_for_every_pod_and_serialises_a_workload_only_when_set() -> None:
    spec = pod_lab(_workload(), "shop")
    assert LabSpec.model_validate_json(spec.model_dump_json()) == spec
    with pytest.raises(ValidationError, match="pod 'probe' has no device"):
        LabSpec(name="shop", devices=spec.devices[:2], links=[], kubernetes=spec.kubernetes)
    plain = LabSpec(name="plain", devices=spec.devices[:1])
    assert "kubernetes" not in plain.model_dump()


def test_a_pod_name_must_also_be_a_device_name() -> None:
    with pytest.raises(ValidationError):
        PodPlan(name="Frontend", namespace="shop", ip="10.244.0.1")
