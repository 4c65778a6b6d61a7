"""Kubernetes labs: pods as devices on a real API server of the lab's own, and the real kubectl
through the tool surface.

One lab for the module: two namespaces, four pods with TCP and UDP ports, two services. The
control plane must be gone with the lab: processes, ports and files.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import AsyncIterator
from typing import Literal

import anyio
import pytest

from netdojo.judges.checks import CheckContext, run_test
from netdojo.labs.k8s.pods import pod_lab
from netdojo.labs.k8s.workload import ContainerPort, PodPlan, ServicePlan, ServicePort, Workload
from netdojo.labs.runtime import LiveLab, start_lab, stop_lab
from netdojo.scenarios.hidden_tests import TcpParams, TcpTest, UdpTest
from netdojo.tools.connect import CONNECT, ConnectArguments
from netdojo.tools.kubectl import KUBECTL, KubectlArguments
from netdojo.tools.lab_tools import LabTools, ToolFailure
from netdojo.tools.trajectory import Trajectory

from .public import public_half

pytestmark = pytest.mark.anyio

WORKLOAD = Workload(
    namespaces={"shop": {"team": "shop"}, "ops": {"team": "ops"}},
    pods=[
        PodPlan(
            name="web",
            namespace="shop",
            labels={"app": "web", "tier": "front"},
            ports=[ContainerPort(port=8080, name="http")],
            ip="10.244.0.10",
        ),
        PodPlan(
            name="cart",
            namespace="shop",
            labels={"app": "cart"},
            ports=[ContainerPort(port=7070), ContainerPort(port=7070, protocol="UDP")],
            ip="10.244.0.11",
        ),
        PodPlan(
            name="db",
            namespace="shop",
            labels={"app": "db"},
            ports=[ContainerPort(port=5432, name="pg")],
            ip="10.244.0.12",
        ),
        PodPlan(name="probe", namespace="ops", labels={"app": "probe"}, ip="10.244.0.20"),
    ],
    services=[
        ServicePlan(
            name="cart",
            namespace="shop",
            selector={"app": "cart"},
            ports=[
                ServicePort(port=7070, target=7070, name="tcp"),
                ServicePort(port=7070, target=7070, protocol="UDP", name="udp"),
            ],
        ),
        ServicePlan(
            name="db",
            namespace="shop",
            selector={"app": "db"},
            ports=[ServicePort(port=15432, target="pg", name="sql")],
        ),
    ],
    subnet="10.244.0.0/24",
)
POLICY = """apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: db-from-cart, namespace: shop}
spec:
  podSelector: {matchLabels: {app: db}}
  ingress:
  - from: [{podSelector: {matchLabels: {app: cart}}}]
    ports: [{port: pg}]
"""


@pytest.fixture(scope="module")
async def kube() -> AsyncIterator[LiveLab]:
    lab = await start_lab(pod_lab(WORKLOAD, "kube"))
    try:
        yield lab
    finally:
        await stop_lab(lab)


def _tools(lab: LiveLab) -> LabTools:
    return LabTools(lab, public_half(lab.spec), Trajectory(episode="kube"))


async def _kubectl(tools: LabTools, command: str, manifest: str = "") -> str:
    result = await KUBECTL.run(tools, KubectlArguments(command=command, manifest=manifest))
    assert result.ok, result.output
    return result.output


async def test_pods_are_api_objects_running_at_their_devices_addresses(kube: LiveLab) -> None:
    tools = _tools(kube)
    listed = json.loads(await _kubectl(tools, "get pods -A -o json"))
    seen = {
        item["metadata"]["name"]: (
            item["metadata"]["namespace"],
            item["status"]["phase"],
            item["status"]["podIP"],
            {c["type"]: c["status"] for c in item["status"]["conditions"]}["Ready"],
        )
        for item in listed["items"]
    }
    assert seen == {pod.name: (pod.namespace, "Running", pod.ip, "True") for pod in WORKLOAD.pods}
    namespaces = json.loads(await _kubectl(tools, "get namespaces -o json"))
    labels = {n["metadata"]["name"]: n["metadata"]["labels"] for n in namespaces["items"]}
    assert labels["shop"]["team"] == "shop"
    assert labels["shop"]["kubernetes.io/metadata.name"] == "shop"
    service = json.loads(await _kubectl(tools, "get service cart -n shop -o json"))
    assert service["spec"]["clusterIP"].startswith("10.96.")
    for pod in WORKLOAD.pods:
        done = await kube.exec(pod.name, ["ip", "-4", "-o", "address", "show", "eth0"])
        assert f"inet {pod.ip}/24" in done.stdout


async def test_every_container_port_answers_with_its_pods_name(kube: LiveLab) -> None:
    for pod in WORKLOAD.pods:
        for port in pod.ports:
            if port.protocol == "TCP":
                argv = ["nc", "-w", "2", pod.ip, str(port.port)]
            else:
                argv = ["sh", "-c", f"echo ping | nc -u -w 1 {pod.ip} {port.port}"]
            done = await kube.exec("probe", argv)
            assert done.stdout.strip() == pod.name, (pod.name, port, done)


async def test_the_tool_applies_policies_and_returns_the_api_servers_own_errors(
    kube: LiveLab,
) -> None:
    tools = _tools(kube)
    created = await _kubectl(tools, "apply -f -", POLICY)
    assert "networkpolicy.networking.k8s.io/db-from-cart created" in created
    listed = json.loads(await _kubectl(tools, "get netpol -n shop -o json"))
    assert [p["metadata"]["name"] for p in listed["items"]] == ["db-from-cart"]
    invalid = await KUBECTL.run(
        tools,
        KubectlArguments(command="apply -f - --dry-run=server", manifest=POLICY.replace("pg", "0")),
    )
    assert not invalid.ok and not invalid.changed
    assert 'The NetworkPolicy "db-from-cart" is invalid' in invalid.output
    assert "spec.ingress[0].ports[0].port" in invalid.output
    await _kubectl(tools, "delete networkpolicy db-from-cart -n shop")
    with pytest.raises(ToolFailure, match="the verb 'exec' is not allowed"):
        await KUBECTL.run(tools, KubectlArguments(command="exec web -- sh"))
    with pytest.raises(ToolFailure, match="pods are read-only"):
        await KUBECTL.run(tools, KubectlArguments(command="label pod web app=db -n shop"))
    steps = tools.trajectory.steps
    assert [s.tool for s in steps] == ["kubectl"] * 6
    assert [s.changed_state for s in steps] == [True, False, False, True, False, False]
    assert [s.refused for s in steps] == [False] * 4 + [True, True]


async def _answer(lab: LiveLab, source: str, target: PodPlan, port: int) -> str:
    done = await lab.exec(source, ["nc", "-w", "1", target.ip, str(port)])
    return done.stdout.strip() or "no answer"


async def test_a_policy_is_enforced_in_the_pods_once_applied_and_lifted_once_deleted(
    kube: LiveLab,
) -> None:
    assert kube.cluster is not None and kube.cluster.enforcer is not None
    enforcer = kube.cluster.enforcer
    tools = _tools(kube)
    db, cart, web = WORKLOAD.pod("db"), WORKLOAD.pod("cart"), WORKLOAD.pod("web")
    assert await anyio.to_thread.run_sync(enforcer.wait_round), "changes of earlier tests settle"
    assert await _answer(kube, "web", db, 5432) == "db"
    await _kubectl(tools, "apply -f -", POLICY)
    assert await anyio.to_thread.run_sync(enforcer.wait_round)
    assert await _answer(kube, "cart", db, 5432) == "db"
    assert await _answer(kube, "web", db, 5432) == "no answer"
    assert await _answer(kube, "probe", db, 5432) == "no answer"
    assert await _answer(kube, "web", cart, 7070) == "cart", "only db is isolated"
    assert await _via_service(tools, "cart", "db.shop", 15432) == "db"
    assert await _via_service(tools, "web", "db.shop", 15432) == "no answer", "policy after DNAT"
    done = await kube.exec("db", ["iptables", "-S", "NETDOJO-INGRESS"])
    assert f"-A NETDOJO-INGRESS -s {cart.ip}/32 -p tcp -m tcp --dport 5432 -j ACCEPT" in done.stdout
    await _kubectl(tools, "delete networkpolicy db-from-cart -n shop")
    assert await anyio.to_thread.run_sync(enforcer.wait_round)
    assert await _answer(kube, "web", db, 5432) == "db"
    assert not enforcer.errors, enforcer.errors
    assert web.name in enforcer.applied


async def _via_service(
    tools: LabTools, source: str, service: str, port: int, protocol: Literal["TCP", "UDP"] = "TCP"
) -> str:
    arguments = ConnectArguments(source=source, destination=service, port=port, protocol=protocol)
    result = await CONNECT.run(tools, arguments)
    return result.answer if result.connected else "no answer"


async def test_services_resolve_by_name_in_their_namespace_and_reach_the_pods_they_select(
    kube: LiveLab,
) -> None:
    tools = _tools(kube)
    service = json.loads(await _kubectl(tools, "get service cart -n shop -o json"))
    cluster_ip = service["spec"]["clusterIP"]
    own = await kube.exec("web", ["getent", "hosts", "cart"])
    assert own.stdout.split()[0] == cluster_ip, own
    other = await kube.exec("probe", ["getent", "hosts", "cart"])
    assert not other.ok, "a short name resolves only in the service's own namespace"
    full = await kube.exec("probe", ["getent", "hosts", "cart.shop.svc.cluster.local"])
    assert full.stdout.split()[0] == cluster_ip, full
    outside = await kube.exec("probe", ["getent", "hosts", "example.com"])
    assert not outside.ok, "no name outside the cluster resolves"
    assert await _via_service(tools, "probe", "cart.shop", 7070) == "cart"
    assert await _via_service(tools, "probe", "cart.shop.svc", 7070, "UDP") == "cart"
    assert await _via_service(tools, "probe", cluster_ip, 7070) == "cart"
    assert await _via_service(tools, "probe", "db.shop.svc.cluster.local", 15432) == "db"
    unknown = await CONNECT.run(
        tools, ConnectArguments(source="probe", destination="nowhere.shop", port=80)
    )
    assert not unknown.connected and unknown.error, unknown
    slices = json.loads(await _kubectl(tools, "get endpointslices -n shop -o json"))
    addresses = {
        item["metadata"]["labels"]["kubernetes.io/service-name"]: [
            address for endpoint in item["endpoints"] for address in endpoint["addresses"]
        ]
        for item in slices["items"]
    }
    assert addresses == {"cart": [WORKLOAD.pod("cart").ip], "db": [WORKLOAD.pod("db").ip]}


def _udp(source: str, target: PodPlan, port: int) -> UdpTest:
    return UdpTest(
        id=f"udp:{source}-{target.name}:{port}",
        description="a datagram is answered",
        device=source,
        params=TcpParams(target=target.ip, port=port),
    )


async def test_udp_and_tcp_tests_are_witnessed_at_the_pod_the_plan_names(kube: LiveLab) -> None:
    owners = {pod.ip: pod.name for pod in WORKLOAD.pods}
    ctx = CheckContext(kube, owners)
    cart, db = WORKLOAD.pod("cart"), WORKLOAD.pod("db")
    answered = await run_test(ctx, _udp("probe", cart, 7070))
    assert answered.passed, answered.evidence
    assert "delivered to a socket on cart" in answered.evidence
    silent = await run_test(ctx, _udp("probe", db, 5432))
    assert not silent.passed and "no answer" in silent.evidence
    tcp = TcpTest(
        id="t", description="d", device="probe", params=TcpParams(target=db.ip, port=5432)
    )
    assert (await run_test(ctx, tcp)).passed
    elsewhere = CheckContext(kube, {**owners, cart.ip: "web"})
    misplaced = await run_test(elsewhere, _udp("probe", cart, 7070))
    assert not misplaced.passed
    assert "web delivered no datagram" in misplaced.evidence


async def test_the_control_plane_goes_with_its_lab() -> None:
    lab = await start_lab(pod_lab(WORKLOAD.model_copy(update={"services": []}), "kube-gone"))
    assert lab.cluster is not None
    plane = lab.cluster.plane
    pids = [proc.pid for proc in plane.processes.values()]
    port = plane.config.apiserver_port
    await stop_lab(lab)
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert not plane.config.workdir.exists()
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0


async def test_a_lab_without_a_cluster_has_no_kubectl(kube: LiveLab) -> None:
    cluster, kube.cluster = kube.cluster, None
    try:
        with pytest.raises(ToolFailure, match="no Kubernetes cluster"):
            await KUBECTL.run(_tools(kube), KubectlArguments(command="get pods"))
    finally:
        kube.cluster = cluster


async def test_connect_reaches_a_pods_port_and_reads_who_answered(kube: LiveLab) -> None:
    tools = _tools(kube)
    tcp = await CONNECT.run(tools, ConnectArguments(source="probe", destination="web", port=8080))
    assert tcp.connected and tcp.answer == "web", tcp
    udp = await CONNECT.run(
        tools,
        ConnectArguments(source="probe", destination="10.244.0.11", port=7070, protocol="UDP"),
    )
    assert udp.connected and udp.answer == "cart", udp
    closed = await CONNECT.run(tools, ConnectArguments(source="probe", destination="web", port=9))
    assert not closed.connected and not closed.answer, closed
