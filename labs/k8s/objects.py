"""The Kubernetes objects a policy lab uses, parsed from manifest dicts as ``kubectl get -o json``
or a YAML file gives them: Namespace, Pod and (in `netpol.policy`) NetworkPolicy.

Only the fields that network policy reads are modelled; every other field is ignored.
"""

from __future__ import annotations

from ipaddress import IPv4Address, IPv6Address
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from netdojo.errors import NetdojoError

Protocol = Literal["TCP", "UDP", "SCTP"]
NAME_LABEL = "kubernetes.io/metadata.name"
"""The label the API server puts on every namespace, set to its name."""


class ManifestError(NetdojoError):
    """A manifest that is not a valid object of a kind netdojo reads."""


class _Lenient(BaseModel):
    """A manifest part: unknown fields are ignored, camelCase names are accepted."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)


class ObjectMeta(_Lenient):
    name: str = Field(min_length=1)
    namespace: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)


class Namespace(_Lenient):
    kind: Literal["Namespace"] = "Namespace"
    metadata: ObjectMeta

    @model_validator(mode="after")
    def _name_label(self) -> Namespace:
        # The API server sets this label on every namespace and keeps it equal to the name.
        self.metadata.labels[NAME_LABEL] = self.metadata.name
        return self

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def labels(self) -> dict[str, str]:
        return self.metadata.labels


class ContainerPort(_Lenient):
    name: str | None = None
    container_port: int = Field(alias="containerPort", ge=1, le=65535)
    protocol: Protocol = "TCP"


class Container(_Lenient):
    name: str = ""
    ports: tuple[ContainerPort, ...] = ()


class PodSpec(_Lenient):
    containers: tuple[Container, ...] = ()


class PodStatus(_Lenient):
    pod_ip: IPv4Address | IPv6Address | None = Field(default=None, alias="podIP")


class Namespaced(_Lenient):
    """An object that lives in a namespace (``default`` when the manifest names none)."""

    metadata: ObjectMeta

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def namespace(self) -> str:
        return self.metadata.namespace or "default"

    @property
    def key(self) -> str:
        """``namespace/name``: how the object is named across the cluster."""
        return f"{self.namespace}/{self.name}"


class Pod(Namespaced):
    kind: Literal["Pod"] = "Pod"
    spec: PodSpec = PodSpec()
    status: PodStatus = PodStatus()

    @property
    def labels(self) -> dict[str, str]:
        return self.metadata.labels

    @property
    def ip(self) -> IPv4Address | IPv6Address | None:
        return self.status.pod_ip

    @property
    def ports(self) -> tuple[ContainerPort, ...]:
        """Every container's declared ports, in the order of the manifest."""
        return tuple(port for container in self.spec.containers for port in container.ports)
