from __future__ import annotations

from netdojo.scenarios.k8s.policy_mutations import POLICY_FAULTS
from netdojo.scenarios.k8s.task import repair_instance
from netdojo.scenarios.model import KUBERNETES_TOOLS
from netdojo.scenarios.registry import Family, register

register(
    Family(
        name="k8s-policy-repair",
        kind="reactive",
        summary="A microservice application's NetworkPolicies were broken; repair them.",
        build=repair_instance,
        kinds=tuple(f"k8s.{kind}" for kind in POLICY_FAULTS),
        tools=KUBERNETES_TOOLS,
    )
)
