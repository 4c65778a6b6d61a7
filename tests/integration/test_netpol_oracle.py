"""netdojo's NetworkPolicy semantics against an analyser nobody here wrote: the allow/deny matrix
that the evaluator computes from the compiled rules must equal network-config-analyzer's
(tests/netpol_oracle.py) for every pair of distinct pods on every port the destination declares,
on the examples of the Kubernetes documentation and on seeded random clusters. No lab is
deployed; the analyser runs in a virtualenv of its own, installed on first use.

Where the analyser departs from the Kubernetes API, our semantics follow the API and the
construct is kept out of the random generator (tests/netpol_random.py); `test_known_departures`
shows each one, so that a later release of the analyser that fixes it is noticed:

- ``egress: []`` without ``policyTypes``. API reference (NetworkPolicySpec.policyTypes): "If
  this field is not specified, it will default based on the existence of ingress or egress rules;
  policies that contain an egress section are assumed to affect egress"; the API server's
  defaulting (SetDefaults_NetworkPolicy) adds Egress only ``if len(obj.Spec.Egress) != 0``. The
  analyser isolates egress whenever the ``egress`` key is present.
- ``Exists``/``DoesNotExist`` in a peer's podSelector next to a namespaceSelector. API reference
  (NetworkPolicyPeer.podSelector): "If namespaceSelector is also set, then the NetworkPolicyPeer
  as a whole selects the pods matching podSelector in the Namespaces selected by
  NamespaceSelector." The analyser evaluates these two operators in the policy's namespace only.
- An empty label value under ``In`` in a namespaceSelector. apimachinery's Requirement.Matches:
  "The operator is In, Labels has the Requirement's key and Labels' value for that key is in
  Requirement's value set." The analyser reads a missing key as the value "".
- Rules of a direction that an explicit ``policyTypes`` leaves out. policyTypes "is a list of rule
  types that the NetworkPolicy relates to"; the API server accepts such a policy and its rules
  of the other direction have no effect. The analyser refuses the policy.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from netdojo.labs.k8s.netpol.cluster import parse_cluster
from netdojo.labs.k8s.netpol.compiler import compile_cluster
from netdojo.labs.k8s.netpol.evaluate import Flow, matrix
from tests.netpol_oracle import OracleError, nca_python, oracle_matrix, run_nca
from tests.netpol_random import scenario

DOCS = Path(__file__).parents[1] / "fixtures" / "netpol_docs"
EXAMPLES = sorted(path.stem for path in DOCS.glob("*.yaml") if path.stem != "cluster")
SCENARIOS = 100
POLICIES = 20
SHOWN = 20


def _load(name: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all((DOCS / f"{name}.yaml").read_text()) if doc]


def _ours(manifests: list[dict[str, Any]]) -> dict[Flow, bool]:
    return matrix(compile_cluster(parse_cluster(manifests)))


def _theirs(
    scenarios: dict[str, list[dict[str, Any]]], workdir: Path
) -> dict[str, dict[Flow, bool]]:
    try:
        out = run_nca(scenarios, workdir)
    except OracleError as error:
        pytest.fail(str(error))
    return {
        name: oracle_matrix(manifests, out[f"{name}/ingress"], out[f"{name}/egress"])
        for name, manifests in scenarios.items()
    }


def _disagreements(label: str, ours: dict[Flow, bool], theirs: dict[Flow, bool]) -> list[str]:
    assert set(ours) == set(theirs), f"{label}: the two matrices cover different flows"
    return [
        f"{label}: {flow.src} -> {flow.dst} {flow.protocol}/{flow.port}: "
        f"netdojo {_verb(allowed)}, analyser {_verb(theirs[flow])}"
        for flow, allowed in ours.items()
        if theirs[flow] != allowed
    ]


def _verb(allowed: bool) -> str:
    return "allows" if allowed else "denies"


@pytest.fixture(scope="module")
def analyser() -> None:
    """The analyser's virtualenv; a failed install fails the tests with pip's error."""
    try:
        nca_python()
    except OracleError as error:
        pytest.fail(str(error))


@pytest.fixture(scope="module")
def documentation(analyser: None, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    scenarios = {name: _load("cluster") + _load(name) for name in EXAMPLES}
    return {"scenarios": scenarios, "theirs": _theirs(scenarios, tmp_path_factory.mktemp("docs"))}


@pytest.mark.parametrize("example", EXAMPLES)
def test_documentation_example(example: str, documentation: dict[str, Any]) -> None:
    ours = _ours(documentation["scenarios"][example])
    wrong = _disagreements(example, ours, documentation["theirs"][example])
    assert not wrong, "\n".join(wrong[:SHOWN])


FEATURES = (
    "policyTypes absent",
    "policyTypes []",
    "Egress only",
    "ingress []",
    "In",
    "NotIn",
    "Exists",
    "DoesNotExist",
    "endPort",
    "except",
    "ipBlock",
    "namespaceSelector",
    "UDP",
    "SCTP",
    "named port",
)


def _features(policies: list[dict[str, Any]]) -> Counter[str]:
    """How many of the policies use each of `FEATURES`."""
    seen: Counter[str] = Counter()
    for policy in policies:
        spec = policy["spec"]
        text = yaml.safe_dump(spec)
        types = spec.get("policyTypes")
        seen["policyTypes absent"] += types is None
        seen["policyTypes []"] += types == []
        seen["Egress only"] += types == ["Egress"]
        seen["ingress []"] += spec.get("ingress") == []
        for marker in ("In", "NotIn", "Exists", "DoesNotExist"):
            seen[marker] += f"operator: {marker}\n" in text
        for marker in ("endPort", "except", "ipBlock", "namespaceSelector", "UDP", "SCTP"):
            seen[marker] += marker in text
        seen["named port"] += any(
            isinstance(port.get("port"), str)
            for rule in (*spec.get("ingress", []), *spec.get("egress", []))
            for port in rule.get("ports") or []
        )
    return seen


def test_random_policies(analyser: None, tmp_path: Path) -> None:
    started = time.monotonic()
    scenarios = {f"seed{seed}": scenario(seed, POLICIES) for seed in range(1, SCENARIOS + 1)}
    policies = [m for ms in scenarios.values() for m in ms if m["kind"] == "NetworkPolicy"]
    assert len(policies) >= 2000
    features = _features(policies)
    assert not [name for name in FEATURES if not features[name]], features
    ours = {name: _ours(manifests) for name, manifests in scenarios.items()}
    theirs = _theirs(scenarios, tmp_path)
    wrong = [line for name in scenarios for line in _disagreements(name, ours[name], theirs[name])]
    flows = [allowed for matrix_ in ours.values() for allowed in matrix_.values()]
    print(
        f"\n{len(policies)} policies in {SCENARIOS} scenarios, {len(flows)} flows "
        f"({sum(flows)} allowed), compared in {time.monotonic() - started:.1f} s"
    )
    assert 0.1 < sum(flows) / len(flows) < 0.9, "the matrices are nearly all one answer"
    assert not wrong, f"{len(wrong)} disagreements:\n" + "\n".join(wrong[:SHOWN])


def _policy(spec: dict[str, Any]) -> dict[str, Any]:
    meta = {"name": "departure", "namespace": "default"}
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": meta,
        "spec": spec,
    }


DB = {"matchLabels": {"role": "db"}}
DEPARTURES = {
    # (the policy, a flow, what the API's semantics say of it)
    "egress [] without policyTypes": (
        _policy({"podSelector": DB, "ingress": [{}], "egress": []}),
        Flow("default/db", "default/frontend", "TCP", 80),
        True,
    ),
    "Exists next to a namespaceSelector": (
        _policy(
            {
                "podSelector": DB,
                "ingress": [
                    {
                        "from": [
                            {
                                "namespaceSelector": {},
                                "podSelector": {
                                    "matchExpressions": [{"key": "role", "operator": "Exists"}]
                                },
                            }
                        ]
                    }
                ],
            }
        ),
        Flow("myproject/api", "default/db", "TCP", 6379),
        True,
    ),
    "In with an empty value in a namespaceSelector": (
        _policy(
            {
                "podSelector": DB,
                "ingress": [
                    {
                        "from": [
                            {
                                "namespaceSelector": {
                                    "matchExpressions": [
                                        {"key": "project", "operator": "In", "values": [""]}
                                    ]
                                }
                            }
                        ]
                    }
                ],
            }
        ),
        Flow("bob/client", "default/db", "TCP", 6379),
        False,
    ),
}


def test_known_departures(analyser: None, tmp_path: Path) -> None:
    scenarios = {
        name.replace(" ", "-"): [*_load("cluster"), policy]
        for name, (policy, _, _) in DEPARTURES.items()
    }
    theirs = _theirs(scenarios, tmp_path / "flows")
    for name, (_, flow, expected) in DEPARTURES.items():
        key = name.replace(" ", "-")
        assert _ours(scenarios[key])[flow] is expected, name
        assert theirs[key][flow] is not expected, f"the analyser now agrees on {name!r}"

    ignored = _policy({"podSelector": DB, "policyTypes": ["Egress"], "ingress": [{}], "egress": []})
    manifests = [*_load("cluster"), ignored]
    assert _ours(manifests)[Flow("default/frontend", "default/db", "TCP", 6379)] is True
    assert _ours(manifests)[Flow("default/db", "default/frontend", "TCP", 80)] is False
    with pytest.raises(OracleError, match="ingress field but no"):
        run_nca({"ignored": manifests}, tmp_path / "refused")
