"""`megalos_problems`: each constraint of Kathará's Kubernetes manager broken on its own, and
what the generated scenarios of every family break."""

from __future__ import annotations

import random
import string
from importlib.metadata import version
from typing import Any

import pytest

from netdojo.labs.megalos import (
    CONFIGMAP_MAX_BYTES,
    KATHARA_VERSION,
    base64_size,
    megalos_problems,
    packed_size,
    vxlan_stem,
)
from netdojo.labs.spec import LabSpec
from netdojo.scenarios.generate import generate
from netdojo.scenarios.registry import families

KUBERNETES_FAMILIES = {"k8s-policy-build", "k8s-policy-repair"}
LINKLESS_FAMILIES = {"capacity-planning"}
"""A planning model's lab is one device with no link: nothing keeps it off a cluster."""


def lab(
    devices: list[dict[str, Any]] | None = None, links: list[dict[str, Any]] | None = None
) -> LabSpec:
    """Two routers on one link, configured by the names a pod's interfaces have."""
    return LabSpec.build(
        name="cluster",
        devices=devices
        or [
            {"name": "r1", "startup": ["ip address add 10.0.0.1/30 dev net0"]},
            {"name": "r2", "files": {"/etc/frr/frr.conf": "interface net0\n"}},
        ],
        links=links or [{"name": "t0", "endpoints": [("r1", 0), ("r2", 0)]}],
    )


def kinds(problems: list[str]) -> set[str]:
    return {p.split(":")[0] for p in problems}


def test_the_constraints_are_those_of_the_installed_kathara() -> None:
    assert version("kathara") == KATHARA_VERSION


def test_a_lab_that_names_pod_interfaces_fits() -> None:
    assert megalos_problems(lab()) == []


def test_device_and_link_names_must_be_label_values() -> None:
    spec = lab(
        devices=[{"name": "r1_"}, {"name": "r2"}],
        links=[{"name": "core-", "endpoints": [("r1_", 0), ("r2", 0)]}],
    )
    problems = megalos_problems(spec)
    assert any(p.startswith("device name: 'r1_'") for p in problems)
    assert any(p.startswith("link name: 'core-'") for p in problems)


@pytest.mark.parametrize(
    ("first", "second"),
    [("backbone1", "backbone2"), ("lan_1", "lan1"), ("lan10", "lan100"), ("core_a1", "corea2")],
)
def test_links_need_distinct_vxlan_stems(first: str, second: str) -> None:
    spec = lab(
        devices=[{"name": "r1"}, {"name": "r2"}],
        links=[
            {"name": first, "endpoints": [("r1", 0), ("r2", 0)]},
            {"name": second, "endpoints": [("r1", 1), ("r2", 1)]},
        ],
    )
    (problem,) = megalos_problems(spec)
    assert problem.startswith("link name:")
    assert repr(vxlan_stem(first)) in problem and repr(second) in problem


def test_vxlan_stem_is_what_the_cni_keeps() -> None:
    assert vxlan_stem("t12") == "t12"
    assert vxlan_stem("Lan_100") == "lan10"
    assert vxlan_stem("pods") == "pods"


def test_interface_names_are_found_in_startup_files_and_sysctls() -> None:
    spec = lab(
        devices=[
            {
                "name": "r1",
                "startup": ["ip link set eth1 up", "ip link add veth0 type veth"],
                "files": {"/etc/frr/frr.conf": "interface eth0\n ip ospf cost 10\n"},
                "sysctls": {"net.ipv4.conf.eth0.rp_filter": 0},
            },
            {"name": "r2", "startup": ["ethtool -K net0 tx off"]},
        ],
        links=[
            {"name": "t0", "endpoints": [("r1", 0), ("r2", 0)]},
            {"name": "t1", "endpoints": [("r1", 1)]},
        ],
    )
    (problem,) = megalos_problems(spec)
    assert problem.startswith("interface names: device 'r1' names eth0, eth1 ")
    assert "(in /etc/frr/frr.conf, startup, sysctls)" in problem


def test_files_may_not_go_under_the_configmap_mount() -> None:
    spec = lab(devices=[{"name": "r1", "files": {"/tmp/kathara/x": "1"}}, {"name": "r2"}])
    assert kinds(megalos_problems(spec)) == {"device files"}


def test_a_device_folder_over_a_configmap_is_refused() -> None:
    noise = "".join(random.Random(1).choices(string.printable, k=1_100_000))
    spec = lab(devices=[{"name": "r1", "files": {"/data/noise": noise}}, {"name": "r2"}])
    (problem,) = megalos_problems(spec)
    assert problem.startswith("device files: 'r1' packs to ")
    assert base64_size(packed_size(spec.device("r1"))) > CONFIGMAP_MAX_BYTES


def test_a_large_folder_that_compresses_fits() -> None:
    spec = lab(devices=[{"name": "r1", "files": {"/data/zeros": "0" * 2_000_000}}, {"name": "r2"}])
    assert megalos_problems(spec) == []


def test_ulimits_and_host_ports_are_unsupported() -> None:
    spec = lab(
        devices=[
            {"name": "r1", "ulimits": {"nofile": {"soft": 1024, "hard": 1024}}},
            {"name": "r2", "ports": [{"host": 8080, "device": 80}]},
        ]
    )
    problems = megalos_problems(spec)
    assert len(problems) == 2
    assert kinds(problems) == {"unsupported option"}


def test_packed_size_counts_files_and_startup() -> None:
    spec = lab()
    small = packed_size(spec.device("r2"))
    grown = spec.device("r2").model_copy(update={"startup": ["x" * 5000]})
    assert 0 < small < packed_size(grown)


@pytest.mark.parametrize("family", sorted(families()))
def test_generated_labs_break_only_interface_names(family: str) -> None:
    """Every generated lab names its interfaces eth<N>, which a pod calls net<N>; nothing else
    keeps a routed family's lab off the cluster. A Kubernetes family's lab carries its workload."""
    expected = {"interface names"} | (
        {"kubernetes workload"} if family in KUBERNETES_FAMILIES else set()
    )
    if family in LINKLESS_FAMILIES:
        expected = set()
    for level in (1, 2, 3):
        for seed in (1, 2):
            spec = generate(family, level, seed).hidden.lab
            assert kinds(megalos_problems(spec)) == expected, (family, level, seed)
