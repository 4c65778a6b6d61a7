"""The Kubernetes policy families' instances, as pure data: each fault breaks the intent, its
fix restores it, the solution solves the instance, and the brief tells nothing of the faults.

`kubectl` calls are replayed on the policy set as the API server would apply them (replace,
create, delete), and every verdict comes from netdojo's NetworkPolicy compiler.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from typing import Any

import pytest
import yaml

from netdojo.judges.integrity import allow_all
from netdojo.labs.k8s.netpol.cluster import parse_cluster
from netdojo.labs.k8s.netpol.compiler import compile_cluster
from netdojo.labs.k8s.netpol.evaluate import matrix
from netdojo.labs.k8s.workload import pod_status
from netdojo.scenarios import registry
from netdojo.scenarios.generate import generate
from netdojo.scenarios.hidden_tests import PolicyMatrixTest, PolicyTest, TcpTest, UdpTest
from netdojo.scenarios.k8s import task
from netdojo.scenarios.model import KUBERNETES_TOOLS, Scenario, ToolCall

REPAIR, BUILD = "k8s-policy-repair", "k8s-policy-build"
SEEDS = {1: range(1, 21), 2: range(1, 8), 3: range(1, 6)}
Policies = dict[tuple[str, str], dict[str, Any]]


def _key(manifest: dict[str, Any]) -> tuple[str, str]:
    return manifest["metadata"]["namespace"], manifest["metadata"]["name"]


def replay(policies: Policies, calls: Iterable[ToolCall]) -> Policies:
    """The policy set after ``calls``, as the API server applies them; a call it would
    refuse (replace of a missing policy, create of an existing one) fails the test."""
    result = dict(policies)
    for call in calls:
        assert call.tool == "kubectl"
        words = shlex.split(call.arguments["command"])
        if words[0] == "delete":
            name, namespace = words[2], words[words.index("-n") + 1]
            assert result.pop((namespace, name), None) is not None, words
            continue
        manifest = yaml.safe_load(call.arguments["manifest"])
        present = _key(manifest) in result
        assert present == (words[0] == "replace"), words
        result[_key(manifest)] = manifest
    return result


def allowed_flows(scenario: Scenario, policies: Policies) -> set[str]:
    workload = scenario.hidden.lab.kubernetes
    assert workload is not None
    objects = workload.model_copy(update={"policies": list(policies.values())}).manifests()
    for manifest in objects:
        if manifest["kind"] == "Pod":
            pod = workload.pod(manifest["metadata"]["name"])
            manifest["status"] = pod_status(pod, "2024-01-01T00:00:00Z")["status"]
    verdicts = matrix(compile_cluster(parse_cluster(objects)))
    return {flow.text for flow, ok in verdicts.items() if ok}


def intent(scenario: Scenario) -> set[str]:
    test = next(t for t in scenario.hidden.targets if isinstance(t, PolicyMatrixTest))
    return set(test.params.allowed)


def start_policies(scenario: Scenario) -> Policies:
    workload = scenario.hidden.lab.kubernetes
    assert workload is not None
    policies = {_key(m): m for m in workload.policies}
    return replay(policies, (call for fault in scenario.hidden.faults for call in fault.inject))


def instances(family: str) -> list[Scenario]:
    return [generate(family, level, seed) for level, seeds in SEEDS.items() for seed in seeds]


@pytest.fixture(scope="module")
def repairs() -> list[Scenario]:
    """The faulted instances (healthy controls have tests of their own)."""
    return [scenario for scenario in instances(REPAIR) if not scenario.hidden.healthy]


@pytest.fixture(scope="module")
def builds() -> list[Scenario]:
    return instances(BUILD)


def test_both_families_are_in_the_catalogue_with_kubectl_and_no_device_configuration() -> None:
    families = registry.families()
    assert families[REPAIR].kind == "reactive" and families[BUILD].kind == "constructive"
    for name in (REPAIR, BUILD):
        assert families[name].tools == KUBERNETES_TOOLS
        assert {"configure", "execute"}.isdisjoint(families[name].tools)
    assert len(families[REPAIR].types) == 12


def test_the_faults_break_the_intent_and_the_solution_restores_it(
    repairs: list[Scenario],
) -> None:
    for scenario in repairs:
        wanted = intent(scenario)
        workload = scenario.hidden.lab.kubernetes
        assert workload is not None
        planned = {_key(m): m for m in workload.policies}
        assert allowed_flows(scenario, planned) == wanted, scenario.id
        start = start_policies(scenario)
        assert allowed_flows(scenario, start) != wanted, scenario.id
        solved = replay(start, scenario.hidden.solution)
        assert allowed_flows(scenario, solved) == wanted, scenario.id
        kept = {
            (t.params.namespace, t.params.name)
            for t in scenario.hidden.adherence
            if isinstance(t, PolicyTest)
        }
        assert kept and kept <= set(solved), scenario.id
        assert sum(not f.red_herring for f in scenario.hidden.faults) == scenario.level


def test_from_level_2_a_red_herring_is_kept_and_changes_no_flow_faulty_or_repaired(
    repairs: list[Scenario],
) -> None:
    for scenario in repairs:
        herrings = [f for f in scenario.hidden.faults if f.red_herring]
        assert len(herrings) == (scenario.level >= 2), scenario.id
        if not herrings:
            continue
        herring = herrings[0]
        where = tuple(herring.device.split("/"))
        start = start_policies(scenario)
        without = {key: m for key, m in start.items() if key != where}
        assert where in start and len(without) == len(start) - 1, scenario.id
        assert allowed_flows(scenario, without) == allowed_flows(scenario, start), scenario.id
        solved = replay(start, scenario.hidden.solution)
        repaired = {key: m for key, m in solved.items() if key != where}
        assert allowed_flows(scenario, repaired) == intent(scenario), scenario.id
        assert f"adherence.red_herring:{herring.device}" in {
            t.id for t in scenario.hidden.adherence
        }
        assert not herring.fix and herring.present, scenario.id


def test_every_probe_expects_the_verdict_of_its_state(repairs: list[Scenario]) -> None:
    """Targets and guards expect the intent; a fault's present probes expect the faulty set."""
    for scenario in repairs:
        wanted, faulty = intent(scenario), allowed_flows(scenario, start_policies(scenario))
        workload = scenario.hidden.lab.kubernetes
        assert workload is not None
        keys = {pod.ip: f"{pod.namespace}/{pod.name}" for pod in workload.pods}
        source = {pod.device: f"{pod.namespace}/{pod.name}" for pod in workload.pods}
        probes = [
            *((t, wanted) for t in scenario.hidden.targets + scenario.hidden.guards),
            *((p, faulty) for f in scenario.hidden.faults for p in f.present),
        ]
        for test, verdicts in probes:
            if isinstance(test, TcpTest | UdpTest):
                protocol = "UDP" if isinstance(test, UdpTest) else "TCP"
                flow = f"{source[test.device]}>{keys[test.params.target]}:{test.params.port}"
                assert (f"{flow}/{protocol}" in verdicts) == test.params.expect, test.id


def test_guards_are_flows_no_fault_changes(repairs: list[Scenario]) -> None:
    for scenario in repairs:
        present = {p.id.partition(":")[2] for f in scenario.hidden.faults for p in f.present}
        guards = {g.id.partition(":")[2] for g in scenario.hidden.guards}
        targets = {t.id.partition(":")[2] for t in scenario.hidden.targets}
        assert not guards & (present | targets), scenario.id


def test_a_build_starts_open_and_its_solution_is_exactly_the_intent(
    builds: list[Scenario],
) -> None:
    for scenario in builds:
        workload = scenario.hidden.lab.kubernetes
        assert workload is not None and not workload.policies
        wanted = intent(scenario)
        assert allowed_flows(scenario, {}) != wanted
        assert allowed_flows(scenario, replay({}, scenario.hidden.solution)) == wanted
        closed = [t for t in scenario.hidden.targets if isinstance(t, TcpTest | UdpTest)]
        assert closed and not any(t.params.expect for t in closed)
        assert all(g.params.expect for g in scenario.hidden.guards if isinstance(g, TcpTest))


def test_the_brief_states_the_intent_and_nothing_of_the_faults(repairs: list[Scenario]) -> None:
    for scenario in repairs:
        text = scenario.public.brief + " ".join(scenario.public.constraints)
        for fault in scenario.hidden.faults:
            assert fault.device.split("/", 1)[1] not in text, (scenario.id, fault.device)
            assert fault.type.removeprefix("k8s.").replace("_", " ") not in text
        workload = scenario.hidden.lab.kubernetes
        assert workload is not None
        for pod in workload.pods:
            assert pod.name in scenario.public.brief


def test_briefs_vary() -> None:
    openings = {generate(REPAIR, 1, seed).public.brief.split(".")[0][:30] for seed in range(40)}
    assert len(openings) >= 4


def test_the_public_half_is_the_same_whatever_the_faults(monkeypatch: pytest.MonkeyPatch) -> None:
    drawn = {seed: generate(REPAIR, 2, seed) for seed in range(1, 11)}
    monkeypatch.setattr(task, "POLICY_FAULTS", tuple(reversed(task.POLICY_FAULTS)))
    for seed, before in drawn.items():
        after = generate(REPAIR, 2, seed)
        assert after.public == before.public
        if not before.hidden.healthy:
            assert [f.type for f in after.hidden.faults] != [f.type for f in before.hidden.faults]


def test_no_policy_of_a_design_admits_everything(
    repairs: list[Scenario], builds: list[Scenario]
) -> None:
    for scenario in [*repairs, *builds]:
        workload = scenario.hidden.lab.kubernetes
        assert workload is not None
        solved = replay(start_policies(scenario), scenario.hidden.solution)
        planned = [*workload.policies, *solved.values()]
        assert not [m for m in planned if allow_all(m["spec"])], scenario.id
