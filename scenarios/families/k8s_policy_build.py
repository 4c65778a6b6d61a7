from __future__ import annotations

from netdojo.scenarios.k8s.task import build_instance
from netdojo.scenarios.model import KUBERNETES_TOOLS
from netdojo.scenarios.registry import Family, register

register(
    Family(
        name="k8s-policy-build",
        kind="constructive",
        summary="Write the NetworkPolicies of a microservice application, least privilege.",
        task="k8s.policy_build",
        build=build_instance,
        tools=KUBERNETES_TOOLS,
    )
)
