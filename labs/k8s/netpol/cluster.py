"""The objects network policy is computed over, read from a list of manifests (``kind: List``
items are unpacked; kinds that policy does not read, such as Services, are skipped)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from netdojo.labs.k8s.netpol.policy import NetworkPolicy
from netdojo.labs.k8s.objects import ManifestError, Namespace, Pod

_KINDS: dict[str, type[Namespace | Pod | NetworkPolicy]] = {
    "Namespace": Namespace,
    "Pod": Pod,
    "NetworkPolicy": NetworkPolicy,
}


class Cluster(BaseModel):
    """Namespaces, pods and policies; every pod and policy lives in a listed namespace."""

    model_config = ConfigDict(frozen=True)

    namespaces: tuple[Namespace, ...] = ()
    pods: tuple[Pod, ...] = ()
    policies: tuple[NetworkPolicy, ...] = ()

    @model_validator(mode="after")
    def _consistent(self) -> Cluster:
        names = [ns.name for ns in self.namespaces]
        problems = _duplicates("namespace", names)
        problems += _duplicates("pod", [pod.key for pod in self.pods])
        problems += _duplicates("policy", [policy.key for policy in self.policies])
        known = set(names)
        for obj in (*self.pods, *self.policies):
            if obj.namespace not in known:
                problems.append(f"{obj.kind} {obj.key}: namespace {obj.namespace} is not listed")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def namespace(self, name: str) -> Namespace:
        return next(ns for ns in self.namespaces if ns.name == name)

    def pod(self, key: str) -> Pod:
        return next(pod for pod in self.pods if pod.key == key)


def _duplicates(kind: str, keys: list[str]) -> list[str]:
    counts = Counter(keys)
    return [f"{kind} {key} is listed twice" for key in sorted(counts) if counts[key] > 1]


def _flatten(manifests: Iterable[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    for manifest in manifests:
        if not isinstance(manifest, Mapping):
            raise ManifestError(f"a manifest must be a mapping, not {type(manifest).__name__}")
        if str(manifest.get("kind", "")).endswith("List"):
            yield from _flatten(manifest.get("items") or ())
        else:
            yield manifest


def parse_cluster(manifests: Iterable[Mapping[str, Any]]) -> Cluster:
    """Read namespaces, pods and policies; a ManifestError names the object that is wrong."""
    found: dict[str, list[Any]] = {kind: [] for kind in _KINDS}
    for manifest in _flatten(manifests):
        kind = manifest.get("kind")
        model = _KINDS.get(str(kind))
        if model is None:
            continue
        try:
            found[str(kind)].append(model.model_validate(manifest))
        except ValidationError as error:
            name = (manifest.get("metadata") or {}).get("name", "?")
            raise ManifestError(f"{kind} {name}: {error}") from error
    try:
        return Cluster(
            namespaces=tuple(found["Namespace"]),
            pods=tuple(found["Pod"]),
            policies=tuple(found["NetworkPolicy"]),
        )
    except ValidationError as error:
        raise ManifestError(str(error)) from error
