"""The kubectl allowlist: reads of the lab's kinds, changes to NetworkPolicies only, manifests
from the call and never from a file, and no flag that picks another server or identity."""

from __future__ import annotations

import json

import pytest

from netdojo.tools.kubectl_allowlist import KubectlRefused, check_manifest, parse_kubectl

POLICY = """apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: allow-web, namespace: shop}
spec: {podSelector: {matchLabels: {app: web}}, policyTypes: [Ingress]}
"""


@pytest.mark.parametrize(
    ("command", "changes"),
    [
        ("get pods -A -o wide", False),
        ("kubectl get networkpolicies -n shop -o yaml", False),
        ("get netpol,svc -n shop --show-labels", False),
        ("get pods -l app=web -o jsonpath={.items[*].status.podIP}", False),
        ("describe networkpolicy/allow-web -n shop", False),
        ("explain networkpolicy.spec.ingress --recursive", False),
        ("api-resources", False),
        ("delete networkpolicy allow-web -n shop", True),
        ("delete netpol --all -n shop", True),
        ('patch networkpolicy allow-web -n shop --type=merge -p {"spec":{}}', True),
        ("patch networkpolicy allow-web -n shop --type json -p []", True),
        ("label networkpolicy allow-web tier=web --overwrite -n shop", True),
        ("annotate networkpolicy allow-web note- -n shop", True),
        ("delete networkpolicy allow-web -n shop --dry-run=server", False),
    ],
)
def test_allowed_commands_and_whether_they_change_state(command: str, changes: bool) -> None:
    parsed = parse_kubectl(command)
    assert parsed.changes_state is changes
    assert parsed.argv[0] != "kubectl"


@pytest.mark.parametrize("verb", ["apply", "create", "replace", "delete"])
def test_a_manifest_comes_from_the_call_through_dash_f(verb: str) -> None:
    parsed = parse_kubectl(f"{verb} -f -", POLICY)
    assert parsed.changes_state and parsed.argv == [verb, "-f", "-"]
    assert not parse_kubectl(f"{verb} -f - --dry-run=server", POLICY).changes_state


@pytest.mark.parametrize(
    ("command", "manifest", "reason"),
    [
        ("exec web -- sh", None, "the verb 'exec' is not allowed"),
        ("port-forward pod/web 80", None, "the verb 'port-forward' is not allowed"),
        ("proxy", None, "the verb 'proxy' is not allowed"),
        ("cp web:/etc/passwd x", None, "the verb 'cp' is not allowed"),
        ("auth can-i --list", None, "the verb 'auth' is not allowed"),
        ("edit networkpolicy x", None, "the verb 'edit' is not allowed"),
        ("get secrets -A", None, "the resource 'secrets' is not allowed"),
        ("get nodes", None, "the resource 'nodes' is not allowed"),
        ("get clusterroles", None, "the resource 'clusterroles' is not allowed"),
        ("get pods --kubeconfig=/root/.kube/config", None, "the flag '--kubeconfig'"),
        ("get pods -s https://10.0.0.1", None, "the flag '-s'"),
        ("get pods --server=https://10.0.0.1", None, "the flag '--server'"),
        ("get pods --token=abc", None, "the flag '--token'"),
        ("get pods --as=system:admin", None, "the flag '--as'"),
        ("get --raw /api", None, "the flag '--raw'"),
        ("get pods -v=9", None, "the flag '-v'"),
        ("get pods -o go-template-file=/etc/shadow", None, "-o must be"),
        ("get pods -o jsonpath-file=/etc/shadow", None, "-o must be"),
        ("apply -f /etc/frr/frr.conf", None, "-f is allowed only as `-f -`"),
        ("apply -k .", None, "the flag '-k'"),
        ("apply -f -", None, "none was given"),
        ("get pods", POLICY, "a manifest is read only by `-f -`"),
        ("get -f -", POLICY, "-f is allowed only as `-f -` with apply"),
        ("delete pod web -n shop", None, "pods are read-only"),
        ("label pod web app=db", None, "pods are read-only"),
        ("label namespace shop team=x", None, "namespaces are read-only"),
        ("create namespace evil", None, "create takes its objects from `-f -`"),
        ("patch networkpolicy x --type=bogus -p {}", None, "--type must be one of"),
        ("delete networkpolicy x --dry-run=maybe", None, "--dry-run must be one of"),
        ("get pods -n Bad_NS", None, "is not a namespace name"),
        ("get pods -n", None, "-n needs a value"),
        ("get pods web;id", None, "is not an object name"),
        ("get pods; rm -rf /", None, "the flag '-rf'"),
        ("", None, "empty command"),
        ("get pods $(id)", None, "is not an object name"),
    ],
)
def test_refused_commands_say_why(command: str, manifest: str | None, reason: str) -> None:
    with pytest.raises(KubectlRefused) as refused:
        parse_kubectl(command, manifest)
    assert reason in refused.value.reason
    assert "Allowed forms:" in str(refused.value)


@pytest.mark.parametrize(
    ("manifest", "reason"),
    [
        ("kind: Pod\nmetadata: {name: x}\n", "NetworkPolicy objects only, not 'Pod'"),
        (POLICY + "---\nkind: Namespace\nmetadata: {name: x}\n", "not 'Namespace'"),
        (json.dumps({"kind": "List", "items": [{"kind": "Secret"}]}), "not 'Secret'"),
        ("- a\n- b\n", "must be an object"),
        ("{: nope", "not YAML or JSON"),
        ("", "holds no object"),
        ("x" * (64 * 1024 + 1), "at most"),
    ],
)
def test_a_manifest_may_hold_network_policies_only(manifest: str, reason: str) -> None:
    with pytest.raises(KubectlRefused, match=reason):
        check_manifest(manifest)


def test_several_policies_and_lists_of_policies_are_accepted() -> None:
    check_manifest(POLICY + "---\n" + POLICY)
    listed = {"apiVersion": "v1", "kind": "List", "items": [{"kind": "NetworkPolicy"}]}
    check_manifest(json.dumps(listed))
