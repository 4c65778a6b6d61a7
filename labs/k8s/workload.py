"""A workload: the namespaces, pods and services a scenario plans, and the API objects they
are (`netdojo.labs.k8s.pods` makes each pod a lab device).

There is no kubelet: a pod's status is written through the API as a node agent writes it
(`pod_status`). Every pod is bound to the one node, ``NODE``.
"""

from __future__ import annotations

import ipaddress
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from netdojo.labs.names import NAME_PATTERN

NODE = "lab"
CONTROL_PLANE = "kubernetes"
"""How tools and hidden tests name a lab's cluster where they would name a device."""
IMAGE = "netdojo/pod"
"""The image a pod's manifest names; what runs is the lab's device image."""


Protocol = Literal["TCP", "UDP"]


class ContainerPort(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    port: int = Field(ge=1, le=65535)
    protocol: Protocol = "TCP"
    name: str | None = Field(default=None, max_length=15, description="an IANA_SVC_NAME")

    def manifest(self) -> dict[str, Any]:
        port: dict[str, Any] = {"containerPort": self.port, "protocol": self.protocol}
        if self.name is not None:
            port["name"] = self.name
        return port


def pod_device(pod: str) -> str:
    """The lab device of the pod named ``pod``: its name with '_' for '-', which a device name
    cannot hold and a pod name cannot hold the other way round."""
    return pod.replace("-", "_")


class PodPlan(BaseModel):
    """A pod, and the lab device that is it (device name = pod name)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=NAME_PATTERN)
    namespace: str
    labels: dict[str, str] = Field(default_factory=dict)
    ports: list[ContainerPort] = Field(default_factory=list)
    ip: str

    @property
    def device(self) -> str:
        return pod_device(self.name)

    def manifest(self) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": self.name, "namespace": self.namespace, "labels": self.labels},
            "spec": {
                "nodeName": NODE,
                "containers": [
                    {
                        "name": "app",
                        "image": IMAGE,
                        "ports": [port.manifest() for port in self.ports],
                    }
                ],
            },
        }


class ServicePort(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    port: int = Field(ge=1, le=65535)
    target: int | str = Field(description="the pods' port number or container port name")
    protocol: Protocol = "TCP"
    name: str | None = None


class ServicePlan(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    namespace: str
    selector: dict[str, str]
    ports: list[ServicePort]

    def manifest(self) -> dict[str, Any]:
        ports = []
        for port in self.ports:
            entry: dict[str, Any] = {
                "port": port.port,
                "targetPort": port.target,
                "protocol": port.protocol,
            }
            if port.name is not None:
                entry["name"] = port.name
            ports.append(entry)
        return {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": {"selector": self.selector, "ports": ports},
        }


class Workload(BaseModel):
    """Namespaces (name -> labels), their pods and services, on one pod network."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    namespaces: dict[str, dict[str, str]]
    pods: list[PodPlan]
    services: list[ServicePlan] = Field(default_factory=list)
    subnet: str = Field(description="the pods' network, e.g. 10.244.0.0/24")
    policies: list[dict[str, Any]] = Field(
        default_factory=list, description="NetworkPolicy manifests in force from the start"
    )

    @model_validator(mode="after")
    def _consistent(self) -> Workload:
        network = ipaddress.ip_network(self.subnet)
        devices = [pod.device for pod in self.pods]
        if len(set(devices)) != len(devices):
            raise ValueError("pod names must be unique across namespaces (one device each)")
        ips = [pod.ip for pod in self.pods]
        if len(set(ips)) != len(ips):
            raise ValueError("pod addresses must be unique")
        for pod in self.pods:
            if ipaddress.ip_address(pod.ip) not in network:
                raise ValueError(f"pod {pod.name}: {pod.ip} is not in {self.subnet}")
        placed = [(pod.name, pod.namespace) for pod in self.pods]
        placed += [(service.name, service.namespace) for service in self.services]
        for name, namespace in placed:
            if namespace not in self.namespaces:
                raise ValueError(f"{name}: namespace {namespace!r} is not planned")
        return self

    def pod(self, name: str) -> PodPlan:
        return next(pod for pod in self.pods if pod.name == name)

    def manifests(self) -> list[dict[str, Any]]:
        """The node, namespaces, pods, services and policies, in the order they can be
        created."""
        node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE}}
        namespaces = [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}
            for name, labels in self.namespaces.items()
        ]
        return [
            node,
            *namespaces,
            *(pod.manifest() for pod in self.pods),
            *(service.manifest() for service in self.services),
            *self.policies,
        ]


def pod_status(pod: PodPlan, started: str) -> dict[str, Any]:
    """The status a node agent reports for a running, ready pod (a merge patch of ``status``);
    ``started`` is an RFC 3339 time."""
    ready = {"type": "Ready", "status": "True", "lastTransitionTime": started}
    return {
        "status": {
            "phase": "Running",
            "podIP": pod.ip,
            "podIPs": [{"ip": pod.ip}],
            "startTime": started,
            "conditions": [
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": started},
                {"type": "Initialized", "status": "True", "lastTransitionTime": started},
                {"type": "ContainersReady", "status": "True", "lastTransitionTime": started},
                ready,
            ],
            "containerStatuses": [
                {
                    "name": "app",
                    "image": IMAGE,
                    "imageID": "",
                    "ready": True,
                    "started": True,
                    "restartCount": 0,
                    "state": {"running": {"startedAt": started}},
                }
            ],
        }
    }
