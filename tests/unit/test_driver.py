"""The network driver's pure logic: names, MACs and protocol answers."""

from __future__ import annotations

import re

import pytest

from netdojo.labs.plugin import driver

MAC = "02:00:00:00:00:01"


def test_names_fit_linux_interface_names() -> None:
    network, endpoint = "a" * 64, "b" * 64
    assert driver.bridge_name(network).startswith("kt-")
    for name in (driver.bridge_name(network), *driver.veth_names(endpoint)):
        assert len(name) <= 15


def test_derived_mac_is_stable_unicast_and_local() -> None:
    mac = driver.derived_mac("A", "0", "e1")
    assert mac == driver.derived_mac("A", "0", "e1")
    assert mac != driver.derived_mac("A", "1", "e1")
    assert re.fullmatch(r"([0-9a-f]{2}:){5}[0-9a-f]{2}", mac)
    first = int(mac[:2], 16)
    assert first & 0x01 == 0 and first & 0x02 == 0x02


@pytest.fixture
def plain_driver(monkeypatch: pytest.MonkeyPatch) -> driver.Driver:
    monkeypatch.setattr(driver, "iptables_binary", lambda: "iptables")
    return driver.Driver()


def test_activate_and_capabilities(plain_driver: driver.Driver) -> None:
    assert plain_driver.handle("/Plugin.Activate", {}) == {"Implements": ["NetworkDriver"]}
    caps = plain_driver.handle("/NetworkDriver.GetCapabilities", {})
    assert caps["Scope"] == "local"
    assert plain_driver.handle("/NetworkDriver.DiscoverNew", {}) == {}


def test_endpoint_mac_comes_from_kathara_or_is_derived(plain_driver: driver.Driver) -> None:
    given = plain_driver.handle(
        "/NetworkDriver.CreateEndpoint",
        {
            "NetworkID": "n",
            "EndpointID": "e1",
            "Options": {"kathara.mac_addr": "02:00:00:00:00:01"},
        },
    )
    assert given == {"Interface": {"MacAddress": MAC}}
    derived = plain_driver.handle(
        "/NetworkDriver.CreateEndpoint",
        {
            "NetworkID": "n",
            "EndpointID": "e2",
            "Options": {"kathara.link": "A", "kathara.iface": 1},
        },
    )
    assert derived["Interface"]["MacAddress"] == driver.derived_mac("A", "1", "e2")


def test_requested_mac_is_never_answered_back(plain_driver: driver.Driver) -> None:
    answer = plain_driver.handle(
        "/NetworkDriver.CreateEndpoint",
        {"NetworkID": "n", "EndpointID": "e3", "Interface": {"MacAddress": "02:aa:00:00:00:01"}},
    )
    assert answer == {"Interface": {}}
    assert plain_driver.macs["e3"] == "02:aa:00:00:00:01"


class Recorder:
    """Stands in for the driver's subprocess calls: records them and lists ``saved`` rules."""

    def __init__(self, saved: list[str]) -> None:
        self.saved = saved
        self.calls: list[tuple[tuple[str, ...], str | None]] = []

    def __call__(self, *argv: str, stdin: str | None = None) -> str:
        self.calls.append((argv, stdin))
        if argv[0].endswith("-save"):
            table = argv[argv.index("-t") + 1]
            return "".join(f"-A {rule}\n" for t, rule in self.saved_pairs() if t == table)
        return ""

    def saved_pairs(self) -> list[tuple[str, str]]:
        return [("raw" if "NOTRACK" in rule else "filter", rule) for rule in self.saved]


def _network(
    recorder: Recorder, monkeypatch: pytest.MonkeyPatch, path: str, bridge_exists: bool = False
) -> None:
    monkeypatch.setattr(driver, "run", recorder)
    monkeypatch.setattr(driver.os.path, "exists", lambda _p: path == "Delete" or bridge_exists)
    plain = driver.Driver.__new__(driver.Driver)
    plain.iptables, plain.macs, plain.lock = "iptables", {}, driver.threading.Lock()
    plain.handle(f"/NetworkDriver.{path}Network", {"NetworkID": "n" * 64})


def test_a_new_network_costs_one_ip_batch_and_one_restore(monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = Recorder(saved=[])
    _network(recorder, monkeypatch, "Create")
    programs = [argv[0] for argv, _ in recorder.calls]
    assert programs == ["ip", "iptables-restore"]
    restore = recorder.calls[-1]
    assert "--noflush" in restore[0] and restore[1] is not None
    bridge = driver.bridge_name("n" * 64)
    assert restore[1].splitlines() == [
        "*raw", f"-I PREROUTING -i {bridge} -j NOTRACK", "COMMIT",
        "*filter", f"-I FORWARD -i {bridge} -o {bridge} -j ACCEPT",
        f"-I INPUT -i {bridge} -j DROP", "COMMIT",
    ]  # fmt: skip


def test_rules_already_there_are_not_added_again(monkeypatch: pytest.MonkeyPatch) -> None:
    bridge = driver.bridge_name("n" * 64)
    recorder = Recorder(saved=[rule for _, rule in driver.Driver.rules(bridge)])
    _network(recorder, monkeypatch, "Create", bridge_exists=True)
    assert not any(argv[0].endswith("-restore") for argv, _ in recorder.calls)
    assert not any(argv[0] == "ip" for argv, _ in recorder.calls)


def test_a_network_asked_again_gets_only_its_missing_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    bridge = driver.bridge_name("n" * 64)
    rules = driver.Driver.rules(bridge)
    recorder = Recorder(saved=[rules[0][1]])
    _network(recorder, monkeypatch, "Create", bridge_exists=True)
    (script,) = [stdin for argv, stdin in recorder.calls if argv[0].endswith("-restore")]
    assert script is not None
    inserted = [line for line in script.splitlines() if line.startswith("-I ")]
    assert inserted == [f"-I {rule}" for _, rule in rules[1:]]


def test_deleting_a_network_removes_every_copy_of_its_rules_and_no_other(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bridge = driver.bridge_name("n" * 64)
    ours = [rule for _, rule in driver.Driver.rules(bridge)]
    other = f"INPUT -i {driver.bridge_name('m' * 64)} -j DROP"
    recorder = Recorder(saved=[*ours, ours[2], other])
    _network(recorder, monkeypatch, "Delete")
    (script,) = [stdin for argv, stdin in recorder.calls if argv[0].endswith("-restore")]
    assert script is not None
    deleted = [line for line in script.splitlines() if line.startswith("-D ")]
    assert sorted(deleted) == sorted(f"-D {rule}" for rule in [*ours, ours[2]])
    assert recorder.calls[-1][0] == ("ip", "link", "del", bridge)
