"""The NetworkPolicy object (``networking.k8s.io/v1``) as a manifest writes it, validated as the
API server validates it, with the API server's defaults.

Absent and empty are kept apart where the API reference gives them different meanings and merged
where it does not:

- ``spec.podSelector`` absent or ``{}``: every pod of the policy's namespace;
- ``ingress``/``egress`` absent or ``[]``: the policy allows nothing in that direction (it only
  isolates), while ``[{}]`` is one rule that allows everything;
- a rule's ``from``/``to`` absent or ``[]``: every source/destination; its ``ports`` absent or
  ``[]``: all traffic, any protocol;
- a peer's ``podSelector``/``namespaceSelector`` present but ``{}``: every pod/namespace, while
  an absent ``namespaceSelector`` means the policy's own namespace;
- ``policyTypes`` absent or ``[]``: ``Ingress``, plus ``Egress`` when the policy has at least
  one egress rule (``SetDefaults_NetworkPolicy``: ``len(spec.Egress) != 0``).
"""

from __future__ import annotations

import re
from ipaddress import IPv4Network, IPv6Network, ip_network
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator, model_validator

from netdojo.labs.k8s.objects import Namespaced, Protocol
from netdojo.labs.k8s.selectors import LabelSelector

PolicyType = Literal["Ingress", "Egress"]
Network = IPv4Network | IPv6Network
_PORT_NAME = re.compile(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?")


class _Spec(BaseModel):
    """A part of a policy's spec: unknown fields are errors, as a misspelt field must not pass."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


def _network(value: Any) -> Any:
    # As the API server reads a CIDR: host bits are masked (``10.0.0.1/24`` is ``10.0.0.0/24``).
    return ip_network(value, strict=False) if isinstance(value, str) else value


class IPBlock(_Spec):
    cidr: Network
    except_: tuple[Network, ...] = Field(default=(), alias="except")

    @field_validator("cidr", mode="before")
    @classmethod
    def _parse_cidr(cls, value: Any) -> Any:
        return _network(value)

    @field_validator("except_", mode="before")
    @classmethod
    def _parse_except(cls, value: Any) -> Any:
        return [_network(item) for item in value] if isinstance(value, list | tuple) else value

    @model_validator(mode="after")
    def _excepts_inside(self) -> IPBlock:
        for cut in self.except_:
            inside = cut.version == self.cidr.version and cut.subnet_of(self.cidr)  # type: ignore[arg-type]
            if not inside or cut.prefixlen <= self.cidr.prefixlen:
                raise ValueError(f"except {cut} must be a strict subset of cidr {self.cidr}")
        return self


class PolicyPeer(_Spec):
    pod_selector: LabelSelector | None = Field(default=None, alias="podSelector")
    namespace_selector: LabelSelector | None = Field(default=None, alias="namespaceSelector")
    ip_block: IPBlock | None = Field(default=None, alias="ipBlock")

    @model_validator(mode="after")
    def _one_kind(self) -> PolicyPeer:
        selectors = self.pod_selector is not None or self.namespace_selector is not None
        if not selectors and self.ip_block is None:
            raise ValueError("a peer must set podSelector, namespaceSelector or ipBlock")
        if selectors and self.ip_block is not None:
            raise ValueError("a peer may not set ipBlock together with a selector")
        return self


class PolicyPort(_Spec):
    protocol: Protocol = "TCP"
    port: StrictInt | str | None = None
    end_port: StrictInt | None = Field(default=None, alias="endPort")

    @field_validator("protocol", mode="before")
    @classmethod
    def _default_tcp(cls, value: Any) -> Any:
        return "TCP" if value is None else value

    @model_validator(mode="after")
    def _valid_port(self) -> PolicyPort:
        if isinstance(self.port, int) and not 1 <= self.port <= 65535:
            raise ValueError(f"port {self.port} is not in 1-65535")
        if isinstance(self.port, str) and not _valid_port_name(self.port):
            raise ValueError(f"port name {self.port!r} is not a valid port name")
        if self.end_port is not None:
            if not isinstance(self.port, int):
                raise ValueError("endPort needs a numeric port")
            if not self.port <= self.end_port <= 65535:
                raise ValueError(f"endPort {self.end_port} must be in {self.port}-65535")
        return self


def _valid_port_name(name: str) -> bool:
    """An IANA service name: 1-15 lowercase letters, digits and inner single hyphens, with at
    least one letter."""
    return (
        len(name) <= 15
        and _PORT_NAME.fullmatch(name) is not None
        and "--" not in name
        and any(ch.isalpha() for ch in name)
    )


class IngressRule(_Spec):
    ports: tuple[PolicyPort, ...] | None = None
    from_: tuple[PolicyPeer, ...] | None = Field(default=None, alias="from")

    @property
    def peers(self) -> tuple[PolicyPeer, ...]:
        """The sources; empty means every source."""
        return self.from_ or ()


class EgressRule(_Spec):
    ports: tuple[PolicyPort, ...] | None = None
    to: tuple[PolicyPeer, ...] | None = None

    @property
    def peers(self) -> tuple[PolicyPeer, ...]:
        """The destinations; empty means every destination."""
        return self.to or ()


Rule = IngressRule | EgressRule


class NetworkPolicySpec(_Spec):
    pod_selector: LabelSelector = Field(default_factory=LabelSelector, alias="podSelector")
    ingress: tuple[IngressRule, ...] | None = None
    egress: tuple[EgressRule, ...] | None = None
    policy_types: tuple[PolicyType, ...] | None = Field(
        default=None, alias="policyTypes", max_length=2
    )

    @field_validator("pod_selector", mode="before")
    @classmethod
    def _null_is_empty(cls, value: Any) -> Any:
        return {} if value is None else value


class NetworkPolicy(Namespaced):
    kind: Literal["NetworkPolicy"] = "NetworkPolicy"
    spec: NetworkPolicySpec = NetworkPolicySpec()

    @property
    def policy_types(self) -> frozenset[PolicyType]:
        """The directions this policy isolates, with the API server's default applied."""
        if self.spec.policy_types:
            return frozenset(self.spec.policy_types)
        return frozenset(("Ingress", "Egress") if self.spec.egress else ("Ingress",))

    @property
    def ingress_rules(self) -> tuple[IngressRule, ...]:
        """The ingress rules in force: none unless the policy isolates ingress."""
        return (self.spec.ingress or ()) if "Ingress" in self.policy_types else ()

    @property
    def egress_rules(self) -> tuple[EgressRule, ...]:
        """The egress rules in force: none unless the policy isolates egress."""
        return (self.spec.egress or ()) if "Egress" in self.policy_types else ()
