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
