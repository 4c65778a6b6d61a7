"""The node agent's service half, what kube-proxy and cluster DNS give a pod elsewhere.

Once the API server has allocated every Service its ClusterIP: each pod's own network namespace
translates a ClusterIP and port to the pods the Service selects (DNAT in the nat table's
OUTPUT, before the egress policy sees the packet, as with kube-proxy), each pod's
``/etc/hosts`` names every Service (``name`` in the pod's own namespace, ``name.namespace``,
``name.namespace.svc`` and ``name.namespace.svc.cluster.local`` everywhere), and the API holds
one EndpointSlice per Service. Services and pods are read-only to an agent, so this is set
once, before the agent's turn.

Names resolve from the hosts file, not from a DNS server: the resolver has no nameserver, so a
name outside the cluster fails inside the pod and no query leaves it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from netdojo.labs.k8s.workload import NODE, PodPlan, ServicePlan, ServicePort, Workload

DOMAIN = "cluster.local"
SERVICES_CHAIN = "NETDOJO-SERVICES"
SLICE_LABEL = "kubernetes.io/service-name"


@dataclass(frozen=True)
class ServiceRoute:
    """One port of a Service: its ClusterIP and port, and the pods' addresses and ports."""

    cluster_ip: str
    protocol: str
    port: int
    endpoints: tuple[tuple[str, int], ...]


def selected(workload: Workload, service: ServicePlan) -> list[PodPlan]:
    """The pods a Service selects: in its namespace, with every label of its selector."""
    return [
        pod
        for pod in workload.pods
        if pod.namespace == service.namespace
        and all(pod.labels.get(key) == value for key, value in service.selector.items())
    ]


def target_port(pod: PodPlan, port: ServicePort) -> int | None:
    """The pod's port a Service port sends to: a number as given, a name looked up among the
    pod's container ports of the same protocol (None when the pod has no such port)."""
    if isinstance(port.target, int):
        return port.target
    return next(
        (p.port for p in pod.ports if p.name == port.target and p.protocol == port.protocol),
        None,
    )


def service_routes(
    workload: Workload, cluster_ips: dict[tuple[str, str], str]
) -> list[ServiceRoute]:
    """Every port of every Service that has a ClusterIP (keyed by namespace and name)."""
    routes = []
    for service in workload.services:
        cluster_ip = cluster_ips.get((service.namespace, service.name))
        if not cluster_ip:
            continue
        pods = selected(workload, service)
        for port in service.ports:
            endpoints = tuple(
                (pod.ip, number) for pod in pods if (number := target_port(pod, port)) is not None
            )
            routes.append(ServiceRoute(cluster_ip, port.protocol, port.port, endpoints))
    return routes


def nat_table(routes: list[ServiceRoute]) -> str:
    """``iptables-restore`` input for a pod's nat table: each Service port sent to one of its
    endpoints, picked at random as kube-proxy does; a port without endpoints is left alone."""
    lines = [
        "*nat",
        *(f":{chain} ACCEPT [0:0]" for chain in ("PREROUTING", "INPUT", "OUTPUT", "POSTROUTING")),
        f":{SERVICES_CHAIN} - [0:0]",
        f"-A OUTPUT -j {SERVICES_CHAIN}",
    ]
    for route in routes:
        proto = route.protocol.lower()
        destination = f"-d {route.cluster_ip}/32 -p {proto} -m {proto} --dport {route.port}"
        match = f"-A {SERVICES_CHAIN} {destination}"
        left = len(route.endpoints)
        for ip, port in route.endpoints:
            pick = "" if left == 1 else f" -m statistic --mode random --probability {1 / left:.5f}"
            lines.append(f"{match}{pick} -j DNAT --to-destination {ip}:{port}")
            left -= 1
    lines.append("COMMIT")
    return "\n".join(lines) + "\n"


def hosts_file(pod: PodPlan, workload: Workload, cluster_ips: dict[tuple[str, str], str]) -> str:
    """A pod's ``/etc/hosts``: itself, then every Service with a ClusterIP by its names."""
    lines = ["127.0.0.1\tlocalhost", f"{pod.ip}\t{pod.name}"]
    for service in workload.services:
        cluster_ip = cluster_ips.get((service.namespace, service.name))
        if not cluster_ip:
            continue
        full = f"{service.name}.{service.namespace}"
        names = [f"{full}.svc.{DOMAIN}", f"{full}.svc", full]
        if service.namespace == pod.namespace:
            names.append(service.name)
        lines.append(f"{cluster_ip}\t{' '.join(names)}")
    return "\n".join(lines) + "\n"


def resolv_conf(pod: PodPlan) -> str:
    """The search path of a pod in its namespace, and no nameserver to send a query to."""
    search = f"{pod.namespace}.svc.{DOMAIN} svc.{DOMAIN} {DOMAIN}"
    return f"search {search}\noptions ndots:5\n"


def endpoint_slices(workload: Workload) -> list[dict[str, Any]]:
    """One EndpointSlice per Service, as the EndpointSlice controller writes them."""
    slices: list[dict[str, Any]] = []
    for service in workload.services:
        pods = selected(workload, service)
        ports = []
        for port in service.ports:
            numbers = {target_port(pod, port) for pod in pods} - {None}
            if len(numbers) == 1:
                entry: dict[str, Any] = {"port": numbers.pop(), "protocol": port.protocol}
                if port.name is not None:
                    entry["name"] = port.name
                ports.append(entry)
        slices.append(
            {
                "apiVersion": "discovery.k8s.io/v1",
                "kind": "EndpointSlice",
                "metadata": {
                    "name": f"{service.name}-lab",
                    "namespace": service.namespace,
                    "labels": {
                        SLICE_LABEL: service.name,
                        "endpointslice.kubernetes.io/managed-by": "netdojo",
                    },
                },
                "addressType": "IPv4",
                "endpoints": [
                    {
                        "addresses": [pod.ip],
                        "conditions": {"ready": True, "serving": True, "terminating": False},
                        "targetRef": {"kind": "Pod", "name": pod.name, "namespace": pod.namespace},
                        "nodeName": NODE,
                    }
                    for pod in pods
                ],
                "ports": ports,
            }
        )
    return slices
