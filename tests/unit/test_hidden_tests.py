"""Hidden tests: each kind's model refuses a wrong parameter, a generated scenario reads back
to the same JSON, and every kind has its checker in the judge."""

from __future__ import annotations

import inspect
import json
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from netdojo.judges.checks import checker, checkers
from netdojo.scenarios.generate import generate
from netdojo.scenarios.hidden_tests import (
    TEST_MODELS,
    HiddenTest,
    PingParams,
    PingTest,
    RouteParams,
    RouteTest,
    kind_of,
)
from netdojo.scenarios.model import Scenario
from netdojo.scenarios.registry import families

ADAPTER: TypeAdapter[HiddenTest] = TypeAdapter(HiddenTest)

VALID: dict[str, dict[str, Any]] = {
    "ping": {"target": "10.0.0.1", "expect": True},
    "route": {"prefix": "10.1.0.0/24", "expect": False, "via": "10.0.0.2", "sole": True},
    "ospf_full": {"neighbor": "10.255.0.3", "expect": True},
    "ospf6_full": {"neighbor": "10.255.0.4", "expect": False},
    "config": {"pattern": "router ospf", "match": "prefix", "expect": False},
    "link_up": {"interface": "eth1", "expect": False},
    "default_route": {"gateway": None, "expect": True},
    "address": {"interface": "eth0", "address": "10.0.0.1/30", "expect": True},
    "bgp_session": {"peer": "10.0.0.2", "expect": True},
    "tcp": {"target": "192.168.1.10", "port": 8080, "expect": False},
    "udp": {"target": "10.244.0.12", "port": 53, "expect": True},
    "bgp_route": {"prefix": "192.168.2.0/24", "not_from": "10.0.0.6", "expect": True},
    "path": {
        "target": "192.168.2.10",
        "routers": ["r1", "r2"],
        "owners": {"10.0.0.1": "r1", "10.0.0.2": "r2"},
        "expect": True,
    },
    "policy_matrix": {"allowed": ["shop/web>shop/cart:7070/TCP"], "expect": True},
    "policy": {"namespace": "shop", "name": "db-from-cart", "expect": True},
    "plan_answer": {
        "answers": [["sb-2", "sb-1"], 3, None],
        "ordered": [True, False, False],
        "expect": True,
    },
    "plan_model": {"digest": "0f" * 32, "entities": 412, "relations": 430, "expect": True},
    "plan_valid": {"plan_schema": {"port": "EK_PORT"}, "expect": True},
    "transfer": {
        "target": "192.168.2.10",
        "server": "h2",
        "kilobytes": 512,
        "within_s": 6,
        "expect": True,
    },
    "throughput": {
        "target": "192.168.2.10",
        "server": "h2",
        "seconds": 3,
        "min_mbps": 40.0,
        "expect": True,
    },
    "latency": {
        "target": "192.168.2.10",
        "count": 100,
        "max_rtt_ms": 40.0,
        "max_loss_percent": 2.0,
        "expect": False,
    },
    "ip_rule": {"priority": 1000, "expect": True},
    "isis_adjacency": {
        "neighbor": "r2",
        "system_id": "0102.5500.0023",
        "interface": "eth1",
        "expect": False,
    },
    "forward": {"target": "100.64.0.1", "port": 8080, "server": "srv", "expect": True},
    "seen_source": {
        "target": "100.64.9.10",
        "port": 9090,
        "server": "ext",
        "source": "100.64.0.1",
        "expect": True,
    },
    "netfilter": {"command": "iptables-save", "words": ["-j", "MASQUERADE"], "expect": False},
    "dhcp_lease": {
        "subnet": "10.1.1.0/24",
        "router": "10.1.1.1",
        "dns": "10.255.0.7",
        "expect": True,
    },
    "dns_answer": {
        "name": "h1.site.lan",
        "address": "10.1.1.57",
        "server": "10.255.0.7",
        "expect": True,
    },
}

WRONG: dict[str, list[dict[str, Any]]] = {
    "ping": [{"target": "10.0.0.300"}, {"target": "h2"}, {"target": "10.0.0.1", "port": 80}],
    "route": [
        {"prefix": "10.1.0.1/24"},  # host bits set
        {"prefix": "10.1.0.0/24", "via": "r2"},
        {"prefix": "10.1.0.0/24", "sole": "yes"},
    ],
    "ospf_full": [{"neighbor": "r2"}, {"peer": "10.255.0.3"}],
    "ospf6_full": [{"neighbor": "2001:db8::1"}, {"neighbor": "r2"}, {}],
    "config": [{"pattern": ""}, {"pattern": "router ospf", "match": "regex"}],
    "link_up": [{"interface": ""}, {"interface": "eth1", "expect": "no"}],
    "default_route": [{}, {"gateway": "r1"}],
    "address": [
        {"interface": "eth0", "address": "10.0.0.1"},  # no prefix length
        {"interface": "eth0"},
    ],
    "bgp_session": [{"peer": 65001}, {"peer": "10.0.0.2", "asn": 65001}],
    "tcp": [
        {"target": "192.168.1.10", "port": "8080"},
        {"target": "192.168.1.10", "port": 0},
        {"target": "192.168.1.10"},
    ],
    "udp": [{"target": "dns", "port": 53}, {"target": "10.244.0.12", "port": 70000}],
    "bgp_route": [{"prefix": "192.168.2.0/24"}, {"prefix": "192.168.2.0/24", "not_from": "r3"}],
    "path": [
        {"target": "192.168.2.10", "routers": [], "owners": {}},
        {"target": "192.168.2.10", "routers": ["r1"], "owners": {"r1": "r1"}},
        {"target": "192.168.2.10", "routers": "r1 r2", "owners": {}},
    ],
    "policy_matrix": [{}, {"allowed": "shop/web>shop/cart:7070/TCP"}],
    "policy": [{"namespace": "", "name": "db"}, {"namespace": "shop"}],
    "plan_answer": [{"answers": [1], "ordered": "yes"}, {"answers": 3, "ordered": [True]}],
    "plan_model": [{"digest": "ab", "entities": 1, "relations": 0}, {"digest": "0f" * 32}],
    "plan_valid": [{"plan_schema": "EK_PORT"}, {}],
    "transfer": [
        {"target": "192.168.2.10", "server": "", "kilobytes": 512, "within_s": 6},
        {"target": "192.168.2.10", "server": "h2", "kilobytes": 0, "within_s": 6},
    ],
    "throughput": [
        {"target": "192.168.2.10", "server": "h2", "seconds": 3, "min_mbps": 0.0},
        {"target": "h2", "server": "h2", "seconds": 3, "min_mbps": 40.0},
    ],
    "latency": [
        {"target": "192.168.2.10", "count": 2, "max_rtt_ms": 40.0, "max_loss_percent": 2.0},
        {"target": "192.168.2.10", "count": 100, "max_rtt_ms": 40.0, "max_loss_percent": 200},
    ],
    "ip_rule": [{"priority": 0}, {"priority": "1000"}],
    "isis_adjacency": [
        {"neighbor": "r2", "system_id": "10.255.0.23", "interface": "eth1"},
        {"neighbor": "", "system_id": "0102.5500.0023", "interface": "eth1"},
        {"neighbor": "r2", "system_id": "0102.5500.0023"},
    ],
    "forward": [{"target": "edge", "port": 80, "server": "srv"}, {"target": "10.0.0.1", "port": 0}],
    "seen_source": [
        {"target": "100.64.9.10", "port": 9090, "server": "ext", "source": "edge"},
        {"target": "100.64.9.10", "port": 9090, "server": "ext"},
    ],
    "netfilter": [{"command": "iptables", "words": ["x"]}, {"command": "nft list ruleset"}],
    "dhcp_lease": [{"router": "10.1.1.1"}, {"subnet": ["10.1.1.0/24"]}],
    "dns_answer": [{"name": "h1.site.lan"}, {"name": "h1", "address": "10.1.1.57", "ttl": 5}],
}

KINDS = [kind_of(model) for model in TEST_MODELS]


def _test(kind: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"id": "t", "description": "a test", "kind": kind, "device": "r1", "params": params}


def test_every_kind_is_exercised() -> None:
    assert sorted(KINDS) == sorted(VALID) == sorted(WRONG)
    assert len(set(KINDS)) == len(KINDS)


@pytest.mark.parametrize("kind", KINDS)
def test_a_valid_test_reads_to_its_kind_and_writes_back_the_same(kind: str) -> None:
    written = json.dumps(_test(kind, VALID[kind]), separators=(",", ":"))
    test = ADAPTER.validate_json(written)
    assert kind_of(type(test)) == kind
    assert ADAPTER.dump_json(test).decode() == written


@pytest.mark.parametrize(("kind", "params"), [(k, p) for k, ps in WRONG.items() for p in ps])
def test_a_wrong_parameter_is_refused(kind: str, params: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        ADAPTER.validate_python(_test(kind, params))
    with pytest.raises(ValidationError):
        ADAPTER.validate_json(json.dumps(_test(kind, params)))


def test_an_unknown_kind_or_a_stray_field_is_refused() -> None:
    with pytest.raises(ValidationError):
        ADAPTER.validate_python(_test("dns", {"name": "example.org"}))
    with pytest.raises(ValidationError):
        ADAPTER.validate_python({**_test("ping", VALID["ping"]), "timeout": 3})
    with pytest.raises(ValidationError):
        PingTest(id="t", description="d", device="r1", params=RouteParams(prefix="10.1.0.0/24"))


def test_an_optional_parameter_is_written_only_when_set() -> None:
    bare = RouteTest(id="t", description="d", device="r1", params=RouteParams(prefix="10.1.0.0/24"))
    assert bare.model_dump()["params"] == {"prefix": "10.1.0.0/24", "expect": True}
    ping = PingTest(id="t", description="d", device="h1", params=PingParams(target="10.0.0.1"))
    assert list(ping.model_dump()) == ["id", "description", "kind", "device", "params"]


def test_route_parameters_keep_the_order_they_were_given_in() -> None:
    first = RouteParams(prefix="10.1.0.0/24", via="10.0.0.2", sole=True, expect=True)
    second = RouteParams(prefix="10.1.0.0/24", expect=True, via="10.0.0.2", sole=True)
    assert list(first.model_dump()) == ["prefix", "via", "sole", "expect"]
    assert list(second.model_dump()) == ["prefix", "expect", "via", "sole"]
    for params in (first, second):
        assert RouteParams.model_validate_json(params.model_dump_json()) == params
        again = RouteParams.model_validate_json(params.model_dump_json()).model_dump_json()
        assert again == params.model_dump_json()


@pytest.mark.parametrize("family", sorted(families()))
def test_a_generated_scenario_reads_back_to_the_same_json(family: str) -> None:
    for level in families()[family].levels:
        original = generate(family, level, 1).model_dump_json()
        assert Scenario.model_validate_json(original).model_dump_json() == original
        dumped = json.loads(original)
        assert Scenario.model_validate(dumped).model_dump_json() == original


def test_every_kind_has_one_checker_taking_its_model() -> None:
    assert set(checkers()) == set(KINDS)
    for model in TEST_MODELS:
        check = checkers()[kind_of(model)]
        hints = inspect.get_annotations(check, eval_str=True)
        assert hints["test"] is model, (model, check)


def test_a_kind_cannot_be_given_a_second_checker() -> None:
    async def again(ctx: Any, test: PingTest) -> tuple[bool, str]:
        return True, ""

    with pytest.raises(ValueError, match="already have a checker"):
        checker(PingTest)(again)
    assert checkers()["ping"] is not again
