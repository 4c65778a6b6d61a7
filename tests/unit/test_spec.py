"""`LabSpec` validation: a bad spec gives one error listing every problem."""

from __future__ import annotations

import pytest

from netdojo.labs.errors import LabSpecError
from netdojo.labs.samples import ospf_ring
from netdojo.labs.spec import DeviceSpec, LabSpec, Limits


def test_valid_spec_keeps_interface_order() -> None:
    spec = LabSpec.build(
        name="tri",
        devices=[{"name": "r1"}, {"name": "r2"}, {"name": "h1", "role": "host"}],
        links=[
            {"name": "a", "endpoints": [("r1", 0), ("r2", 0)]},
            {"name": "b", "endpoints": [("r1", 1), ("h1", 0)]},
        ],
    )
    assert spec.interfaces("r1") == [(0, "a"), (1, "b")]
    assert spec.device("h1").limits == Limits()


def test_every_problem_is_listed_in_one_error() -> None:
    with pytest.raises(LabSpecError) as caught:
        LabSpec.build(
            name="Bad Name",
            devices=[
                {"name": "r1"},
                {"name": "r1"},
                {"name": "r2", "limits": {"memory_mib": 1, "cpus": 0, "pids": 1}},
            ],
            links=[
                {"name": "a", "endpoints": [("r1", 0), ("ghost", 0)]},
                {"name": "b", "endpoints": [("r2", 2)]},
            ],
        )
    problems = caught.value.problems
    text = str(caught.value)
    assert any("lab name 'Bad Name'" in p for p in problems)
    assert any("'r1' is used 2 times" in p for p in problems)
    assert any("unknown device 'ghost'" in p for p in problems)
    assert any("memory_mib 1" in p for p in problems)
    assert any("cpus 0" in p for p in problems)
    assert any("pids 1" in p for p in problems)
    assert any("eth0..eth0" in p and "'r2'" in p for p in problems)
    assert f"{len(problems)} problem(s)" in text
    assert all(p in text for p in problems)


def test_wrong_types_are_reported_with_their_location() -> None:
    with pytest.raises(LabSpecError) as caught:
        LabSpec.build(name="x", devices=[{"name": "r1", "role": "switch"}])
    assert any(p.startswith("devices.0.role") for p in caught.value.problems)


def test_file_paths_must_be_absolute_and_contained() -> None:
    with pytest.raises(LabSpecError) as caught:
        LabSpec.build(name="x", devices=[DeviceSpec(name="r1", files={"etc/x": "", "/a/../b": ""})])
    assert len(caught.value.problems) == 2


def test_ospf_ring_sample_is_a_valid_ring() -> None:
    spec = ospf_ring(routers=5, hosts=2)
    routers = [d.name for d in spec.devices if d.role == "router"]
    assert routers == ["r1", "r2", "r3", "r4", "r5"]
    assert [d.name for d in spec.devices if d.role == "host"] == ["h1", "h2"]
    for router in routers:
        ring_links = [link for _, link in spec.interfaces(router) if link.startswith("p")]
        assert len(ring_links) == 2
    assert "router ospf" in spec.device("r3").files["/etc/frr/frr.conf"]


def test_sysctls_stay_in_the_network_namespace() -> None:
    with pytest.raises(LabSpecError) as caught:
        LabSpec.build(name="x", devices=[DeviceSpec(name="r1", sysctls={"kernel.pid_max": 9})])
    assert caught.value.problems == ["device 'r1': sysctl 'kernel.pid_max' must be a net.* key"]
