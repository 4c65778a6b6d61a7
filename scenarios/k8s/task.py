"""Kubernetes NetworkPolicy tasks on a generated application, built from a seed.

Repair: the application runs under its intended policies, and seeded faults (`k8s.policy_faults`)
break them; the agent must bring the allow/deny matrix back to the intent. Build: the
application runs with no policy, and the agent writes the policies for the intent.

The judge probes flows live (a TCP connection or a UDP datagram from the source pod, witnessed
at the destination) and reads the policy set from the API server: its matrix must equal the
intent exactly, which no allow-all and no flow opened past the intent survives.
"""

from __future__ import annotations

import ipaddress
import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import yaml

from netdojo.labs.k8s.netpol.evaluate import Flow
from netdojo.labs.k8s.pods import POD_LINK, pod_lab
from netdojo.labs.k8s.workload import CONTROL_PLANE, pod_device
from netdojo.scenarios.hidden_tests import (
    HiddenTest,
    PolicyMatrixParams,
    PolicyMatrixTest,
    PolicyParams,
    PolicyTest,
    TcpParams,
    TcpTest,
    UdpTest,
)
from netdojo.scenarios.k8s.app import App, generate_app
from netdojo.scenarios.k8s.brief import task_brief, task_constraints
from netdojo.scenarios.k8s.matrix import call_matrix
from netdojo.scenarios.k8s.policy import draw_style, intended_policies
from netdojo.scenarios.k8s.policy_faults import (
    POLICY_FAULTS,
    PolicyChange,
    PolicyFault,
    PolicyFaults,
)
from netdojo.scenarios.k8s.red_herring import draw_red_herring, herring_fault
from netdojo.scenarios.model import (
    DeviceFacts,
    Fault,
    HiddenHalf,
    InterfaceFacts,
    PublicHalf,
    ToolCall,
)
from netdojo.scenarios.registry import Built, ScenarioError

FAULTS_AT_LEVEL = {1: 1, 2: 2, 3: 3}
HERRING_LEVEL = 2
"""The level from which a repair carries a red herring, as the routing repairs do."""
TARGET_PROBES = 4
"""Flows a fault changed that are probed live, per fault (the matrix test covers them all)."""
PRESENT_PROBES = 2
GUARD_OPEN = 8
GUARD_CLOSED = 4
MAX_APPS = 20
"""Applications drawn before a level's faults are given up (each kind may find no place)."""

Manifest = dict[str, Any]


def _key(manifest: Mapping[str, Any]) -> tuple[str, str]:
    return manifest["metadata"]["namespace"], manifest["metadata"]["name"]


def _pod(key: str) -> str:
    return key.split("/", 1)[1]


def flow_test(app: App, flow: Flow, expect: bool, tag: str) -> HiddenTest:
    """A live probe of ``flow`` from its source pod, expected to connect or not."""
    src, dst = _pod(flow.src), _pod(flow.dst)
    device = pod_device(src)
    words = "reaches" if expect else "cannot reach"
    params = TcpParams(target=app.workload.pod(dst).ip, port=flow.port, expect=expect)
    test_id = f"{tag}:{flow.protocol.lower()}:{src}-{dst}:{flow.port}"
    description = f"{src} {words} {dst} on {flow.port}/{flow.protocol}"
    if flow.protocol == "UDP":
        return UdpTest(id=test_id, description=description, device=device, params=params)
    return TcpTest(id=test_id, description=description, device=device, params=params)


def matrix_test(intent: Mapping[Flow, bool]) -> PolicyMatrixTest:
    allowed = sorted(flow.text for flow, ok in intent.items() if ok)
    return PolicyMatrixTest(
        id="policy_matrix",
        description=f"the policies allow exactly the {len(allowed)} intended flows",
        device=CONTROL_PLANE,
        params=PolicyMatrixParams(allowed=allowed),
    )


def kubectl_calls(change: PolicyChange, existing: Iterable[tuple[str, str]]) -> list[ToolCall]:
    """The kubectl calls making ``change`` on a cluster holding the ``existing`` policies: an
    existing policy replaced whole (``apply`` keeps fields its manifest leaves out), a new one
    created, a deleted one deleted."""
    present = set(existing)
    calls = []
    for manifest in change.apply:
        verb = "replace" if _key(manifest) in present else "create"
        calls.append(
            ToolCall(
                tool="kubectl",
                arguments={"command": f"{verb} -f -", "manifest": yaml.safe_dump(manifest)},
            )
        )
    calls += [
        ToolCall(
            tool="kubectl",
            arguments={"command": f"delete networkpolicy {ref.name} -n {ref.namespace}"},
        )
        for ref in change.delete
    ]
    return calls


def public_half(app: App, brief: str, constraints: list[str]) -> PublicHalf:
    prefix = ipaddress.ip_network(app.workload.subnet).prefixlen
    return PublicHalf(
        brief=brief,
        devices=[
            DeviceFacts(
                name=pod.device,
                role="host",
                interfaces=[
                    InterfaceFacts(name="eth0", link=POD_LINK, address=f"{pod.ip}/{prefix}")
                ],
            )
            for pod in app.workload.pods
        ],
        links=[(POD_LINK, [pod.device for pod in app.workload.pods])],
        constraints=constraints,
    )


def guard_tests(
    app: App, intent: Mapping[Flow, bool], avoid: set[Flow], rng: random.Random
) -> list[HiddenTest]:
    """Flows no fault touches, probed to hold as intended: some open, some closed."""
    open_flows = sorted(f for f, ok in intent.items() if ok and f not in avoid)
    closed = sorted(f for f, ok in intent.items() if not ok and f not in avoid)
    picked = [
        *((f, True) for f in rng.sample(open_flows, min(GUARD_OPEN, len(open_flows)))),
        *((f, False) for f in rng.sample(closed, min(GUARD_CLOSED, len(closed)))),
    ]
    return [flow_test(app, flow, expect, "guard") for flow, expect in picked]


def _draw_faults(
    app: App, policies: list[Manifest], level: int, rng: random.Random
) -> list[PolicyFault] | None:
    """``FAULTS_AT_LEVEL[level]`` faults of distinct kinds in distinct policies, each drawn on
    the set the ones before left; None when the application offers too few."""
    kinds = list(POLICY_FAULTS)
    rng.shuffle(kinds)
    faults: list[PolicyFault] = []
    current = policies
    for kind in kinds:
        if len(faults) == FAULTS_AT_LEVEL[level]:
            break
        avoid = {f.policy for f in faults}
        fault = PolicyFaults(app, current).inject(kind, rng, avoid)
        if fault is None or _collides(fault, faults):
            continue
        faults.append(fault)
        current = list(fault.policies)
    return faults if len(faults) == FAULTS_AT_LEVEL[level] else None


def _collides(fault: PolicyFault, before: Sequence[PolicyFault]) -> bool:
    """Whether ``fault`` changes a flow an earlier fault changed: each fault's symptoms and
    fix must stand alone, whatever order they are repaired in."""
    seen = {(f.src, f.dst, f.protocol, f.port) for b in before for f in b.changed}
    return any((f.src, f.dst, f.protocol, f.port) in seen for f in fault.changed)


def _refs(policies: Iterable[Mapping[str, Any]]) -> list[tuple[str, str]]:
    return [_key(m) for m in policies]


def _fault(app: App, fault: PolicyFault, before: list[Manifest], rng: random.Random) -> Fault:
    changed = [Flow(f.src, f.dst, f.protocol, f.port) for f in fault.changed]
    verdicts = {Flow(f.src, f.dst, f.protocol, f.port): f.allowed for f in fault.changed}
    shown = rng.sample(changed, min(PRESENT_PROBES, len(changed)))
    return Fault(
        type=f"k8s.{fault.kind}",
        device=f"{fault.policy.namespace}/{fault.policy.name}",
        params={"description": fault.description},
        inject=kubectl_calls(fault.inject, _refs(before)),
        fix=kubectl_calls(fault.fix, _refs(fault.policies)),
        present=[flow_test(app, flow, verdicts[flow], "present") for flow in shown],
    )


def repair_instance(level: int, rng: random.Random, lab_name: str) -> Built:
    """The brief is drawn from the application and a generator split off before the faults,
    so it is the same whatever the faults are: it cannot tell them."""
    for _ in range(MAX_APPS):
        app = generate_app(rng, level)
        words = random.Random(rng.getrandbits(64))
        intended = intended_policies(app, draw_style(app, rng))
        drawn = _draw_faults(app, intended, level, rng)
        if drawn is not None:
            rules = task_constraints(words, repair=True)
            public = public_half(app, task_brief(app, words, True, rules), rules)
            return Built(public, _repair(app, intended, drawn, rng, lab_name, level))
    raise ScenarioError(f"k8s policy repair: no level {level} application took its faults")


def _repair(
    app: App,
    intended: list[Manifest],
    drawn: list[PolicyFault],
    rng: random.Random,
    lab_name: str,
    level: int,
) -> HiddenHalf:
    """The faults in order, then at levels 2-3 a red herring (`k8s.red_herring`)."""
    intent = call_matrix(app)
    faults, before = [], intended
    for fault in drawn:
        faults.append(_fault(app, fault, before, rng))
        before = list(fault.policies)
    changed = {Flow(f.src, f.dst, f.protocol, f.port): f.allowed for d in drawn for f in d.changed}
    probed = rng.sample(sorted(changed), min(TARGET_PROBES * len(drawn), len(changed)))
    targets: list[HiddenTest] = [
        *(flow_test(app, flow, intent[flow], "target") for flow in probed),
        matrix_test(intent),
    ]
    added = {(r.namespace, r.name) for d in drawn for r in d.fix.delete}
    herring = draw_red_herring(app, intended, before, rng) if level >= HERRING_LEVEL else None
    adherence: list[HiddenTest] = [
        PolicyTest(
            id=f"adherence:policy:{namespace}/{name}",
            description=f"NetworkPolicy {namespace}/{name} is kept",
            device=CONTROL_PLANE,
            params=PolicyParams(namespace=namespace, name=name),
        )
        for namespace, name in _refs(intended)
        if (namespace, name) not in added
    ]
    if herring is not None:
        oddity, kept = herring_fault(herring)
        faults.append(oddity)
        adherence.append(kept)
    workload = app.workload.model_copy(update={"policies": intended})
    return HiddenHalf(
        lab=pod_lab(workload, lab_name),
        faults=faults,
        solution=[call for fault in reversed(faults) for call in fault.fix],
        targets=targets,
        guards=guard_tests(app, intent, set(changed), rng),
        adherence=adherence,
    )


def build_instance(level: int, rng: random.Random, lab_name: str) -> Built:
    app = generate_app(rng, level)
    intended = intended_policies(app, draw_style(app, rng))
    intent = call_matrix(app)
    closed = sorted(flow for flow, ok in intent.items() if not ok)
    probed = rng.sample(closed, min(TARGET_PROBES * 2, len(closed)))
    targets: list[HiddenTest] = [
        *(flow_test(app, flow, False, "target") for flow in probed),
        matrix_test(intent),
    ]
    open_flows = sorted(flow for flow, ok in intent.items() if ok)
    guards = [
        flow_test(app, flow, True, "guard")
        for flow in rng.sample(open_flows, min(GUARD_OPEN, len(open_flows)))
    ]
    solution = kubectl_calls(PolicyChange(apply=tuple(intended)), ())
    hidden = HiddenHalf(
        lab=pod_lab(app.workload, lab_name),
        solution=solution,
        targets=targets,
        guards=guards,
    )
    rules = task_constraints(rng, repair=False)
    return Built(public_half(app, task_brief(app, rng, False, rules), rules), hidden)
