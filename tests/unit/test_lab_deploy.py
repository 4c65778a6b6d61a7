"""What a deployment does before and around Kathará, as pure logic: the labels and ids its
create calls carry and collect, Kathará's lab built from a spec, engine checks, and errors told
in one line. (Real deploys are in tests/integration.)"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from docker.errors import APIError
from Kathara.exceptions import MachineAlreadyExistsError

from netdojo.labs.deployment import explain, removal_rounds, sysctl_problems
from netdojo.labs.errors import LabError, LabSpecError
from netdojo.labs.kathara_backend import (
    DEPLOY_LABEL,
    LAB_LABEL,
    NOFILE,
    OWNER_LABEL,
    _install_hooks,
    forget_lab,
    register_lab,
    registered,
)
from netdojo.labs.kathara_lab import to_kathara
from netdojo.labs.owners import owner_tag
from netdojo.labs.spec import DeviceSpec, LabSpec


class FakeApi:
    """Answers create calls as the engine does, with an id."""

    def __init__(self) -> None:
        self.created: list[tuple[str, dict[str, Any]]] = []

    def create_container(self, **kwargs: Any) -> dict[str, str]:
        self.created.append(("container", kwargs))
        return {"Id": f"container-{len(self.created)}"}

    def create_network(self, **kwargs: Any) -> dict[str, str]:
        self.created.append(("network", kwargs))
        return {"Id": f"network-{len(self.created)}"}


@pytest.fixture
def api() -> FakeApi:
    fake = FakeApi()
    _install_hooks(SimpleNamespace(api=fake))  # type: ignore[arg-type]
    return fake


def test_each_create_carries_its_deployment_and_is_collected(api: FakeApi) -> None:
    deployment = register_lab("hash1", "lab-one", {"r1": 64})
    try:
        api.create_network(labels={"lab_hash": "hash1", "name": "a"})
        api.create_container(
            labels={"lab_hash": "hash1", "name": "r1"},
            host_config={"Ulimits": [{"Name": "nproc", "Soft": 50, "Hard": 50}]},
        )
        network_labels = api.created[0][1]["labels"]
        container = api.created[1][1]
        assert network_labels[DEPLOY_LABEL] == container["labels"][DEPLOY_LABEL]
        assert container["labels"][DEPLOY_LABEL] == deployment.deploy_id
        assert container["labels"][LAB_LABEL] == "lab-one"
        assert container["labels"][OWNER_LABEL] == owner_tag()
        assert container["host_config"]["PidsLimit"] == 64
        assert container["host_config"]["Ulimits"] == [
            {"Name": "nproc", "Soft": 50, "Hard": 50},
            {"Name": "nofile", "Soft": NOFILE, "Hard": NOFILE},
        ]
        assert (deployment.networks, deployment.containers) == (["network-1"], ["container-2"])
    finally:
        forget_lab("hash1", deployment.deploy_id)
    assert not registered("hash1")


def test_a_device_nofile_limit_is_kept(api: FakeApi) -> None:
    deployment = register_lab("hash2", "lab-two", {}, persistent=True)
    try:
        api.create_container(
            labels={"lab_hash": "hash2", "name": "r1"},
            host_config={"Ulimits": [{"Name": "nofile", "Soft": 100, "Hard": 200}]},
        )
        labels, host_config = api.created[0][1]["labels"], api.created[0][1]["host_config"]
        assert host_config["Ulimits"] == [{"Name": "nofile", "Soft": 100, "Hard": 200}]
        assert labels[OWNER_LABEL] == "persistent"
    finally:
        forget_lab("hash2", deployment.deploy_id)


def test_one_process_holds_one_lab_per_name(api: FakeApi) -> None:
    first = register_lab("hash3", "same", {})
    try:
        with pytest.raises(LabError, match="a lab named 'same' is already running in this process"):
            register_lab("hash3", "same", {})
        forget_lab("hash3", "another-deployment")
        assert registered("hash3"), "only the deployment's own id closes it"
    finally:
        forget_lab("hash3", first.deploy_id)


def test_a_stopped_deployment_creates_nothing_more(api: FakeApi) -> None:
    deployment = register_lab("hash4", "halted", {})
    try:
        deployment.stopped = True
        with pytest.raises(LabError, match="the deploy of lab halted was stopped"):
            api.create_container(labels={"lab_hash": "hash4", "name": "r1"}, host_config={})
        with pytest.raises(LabError):
            api.create_network(labels={"lab_hash": "hash4", "name": "a"})
        assert api.created == []
    finally:
        forget_lab("hash4", deployment.deploy_id)


def _fabric() -> LabSpec:
    return LabSpec.build(
        name="fabric",
        devices=[
            {"name": "pc1", "image": "alpine:3", "depends_on": ["leaf1"]},
            {
                "name": "leaf1",
                "image": "alpine:3",
                "sysctls": {"net.ipv4.fib_multipath_hash_policy": 1},
                "env": {"ROLE": "leaf"},
                "ulimits": {"nofile": {"soft": 1024, "hard": 2048}},
                "macs": {0: "02:42:0a:00:00:01"},
                "ports": [{"host": 8080, "device": 80}],
                "depends_on": ["spine1"],
            },
            {"name": "spine1", "image": "alpine:3"},
        ],
        links=[
            {"name": "fabric", "endpoints": [("leaf1", 0), ("spine1", 0)]},
            {"name": "hosts", "endpoints": [("leaf1", 1), ("pc1", 0)]},
        ],
    )


def test_kathara_gets_every_setting_and_the_start_order() -> None:
    lab = to_kathara(_fabric(), "fabric-1")
    assert list(lab.machines) == ["spine1", "leaf1", "pc1"]
    assert lab.has_dependencies
    leaf = lab.machines["leaf1"]
    assert leaf.meta["sysctls"]["net.ipv4.fib_multipath_hash_policy"] == 1
    assert leaf.meta["sysctls"]["net.ipv4.igmp_max_memberships"] == 20
    assert leaf.meta["envs"] == {"ROLE": "leaf"}
    assert leaf.meta["ulimits"] == {"nofile": {"soft": 1024, "hard": 2048}}
    assert leaf.meta["ports"] == {}, "ports are relayed on loopback, never published by Docker"
    assert leaf.interfaces[0].mac_address == "02:42:0a:00:00:01"
    assert leaf.interfaces[1].mac_address is None
    assert not to_kathara(LabSpec.build(name="x", devices=[{"name": "a"}]), "x").has_dependencies


def test_optional_settings_are_written_only_when_set() -> None:
    plain = DeviceSpec(name="r1")
    assert set(plain.model_dump()) == {
        "name", "role", "image", "files", "startup", "limits", "ipv6", "sysctls",
    }  # fmt: skip
    spec = _fabric()
    again = LabSpec.model_validate_json(spec.model_dump_json())
    assert again == spec
    assert again.device("leaf1").macs == {0: "02:42:0a:00:00:01"}


def test_spec_refuses_what_kathara_or_docker_would_trip_over() -> None:
    with pytest.raises(LabSpecError) as caught:
        LabSpec.build(
            name="bad",
            devices=[
                {
                    "name": "r1",
                    "sysctls": {"net.ipv4.conf.eth4.rp_filter": 0},
                    "env": {"BAD-NAME": "x", "LINES": "a\nb"},
                    "ulimits": {"nofile": {"soft": 10, "hard": 5}},
                    "macs": {3: "02:00:00:00:00:01"},
                    "ports": [{"host": 80, "device": 80}, {"host": 80, "device": 81}],
                    "depends_on": ["r1", "ghost"],
                },
                {"name": "r2", "macs": {0: "02:00:00:00:00:09"}},
                {"name": "r3", "macs": {0: "02:00:00:00:00:09"}},
            ],
            links=[{"name": "a", "endpoints": [("r1", 0), ("r2", 0), ("r3", 0)]}],
        )
    assert caught.value.problems == [
        "device 'r1': environment variable 'BAD-NAME' must be a word",
        "device 'r1': environment variable LINES holds a line break",
        "device 'r1': ulimit nofile 10:5 must have -1 (unlimited) <= soft <= hard",
        "device 'r1' depends on itself",
        "device 'r1': MAC address '02:00:00:00:00:01' of eth3: the device has no eth3",
        "device 'r3': MAC address '02:00:00:00:00:09' of eth0 is also the MAC of r2 eth0 "
        "on link 'a'",
        "device 'r1': sysctl 'net.ipv4.conf.eth4.rp_filter' names eth4, which the device "
        "does not have",
        "device 'r1': host port 80/tcp is already given to 'r1'",
        "device 'r1' depends on unknown device 'ghost'",
    ]


def test_interface_sysctls_past_eth0_wait_for_docker_27() -> None:
    spec = LabSpec.build(
        name="x",
        devices=[
            {
                "name": "r1",
                "sysctls": {
                    "net.ipv4.conf.eth0.rp_filter": 2,
                    "net.ipv4.conf.eth1.rp_filter": 2,
                    "net.ipv4.conf.default.rp_filter": 2,
                },
            }
        ],
        links=[{"name": "a", "endpoints": [("r1", 0)]}, {"name": "b", "endpoints": [("r1", 1)]}],
    )
    assert sysctl_problems(spec, (27, 1)) == []
    assert sysctl_problems(spec, (20, 10)) == [
        "sysctl net.ipv4.conf.eth1.rp_filter of 'r1': Docker 20.10 sets sysctls before eth1 "
        "exists; use the same key with 'default' in place of the interface (interfaces added "
        "later inherit it)"
    ]


def test_failures_are_told_in_one_line_naming_the_cause() -> None:
    conflict = APIError("409", explanation='Conflict. The container name "/x" is\nin use')
    assert explain(conflict) == 'Conflict. The container name "/x" is in use (APIError)'
    clash = MachineAlreadyExistsError("router1")
    assert (
        explain(clash) == "Device with name `router1` already exists. (MachineAlreadyExistsError)"
    )
    grouped = ExceptionGroup("many", [ValueError("first"), ValueError("second")])
    assert explain(grouped) == "first (ValueError)"


def test_no_two_containers_of_one_network_are_removed_at_once() -> None:
    ring = {
        "r1": {"a", "c", "h1"},
        "r2": {"a", "b", "h2"},
        "r3": {"b", "c"},
        "h1": {"h1"},
        "h2": {"h2"},
        "gone": set(),
    }
    rounds = removal_rounds(ring)
    assert sorted(c for batch in rounds for c in batch) == sorted(ring)
    for batch in rounds:
        for i, first in enumerate(batch):
            assert all(not ring[first] & ring[other] for other in batch[i + 1 :]), batch
    assert len(rounds) == 3
    pods = {f"pod{i}": {"pods"} for i in range(5)}
    assert [len(batch) for batch in removal_rounds(pods)] == [1] * 5
    assert removal_rounds({}) == []
