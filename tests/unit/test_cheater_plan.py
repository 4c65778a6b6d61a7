"""The cheater's planning: from a topology, a brief and what it read, the calls it makes."""

from __future__ import annotations

import itertools
import re
from typing import Any

import anyio
import pytest
import yaml

from netdojo.clients.agents import POLICIES
from netdojo.clients.cheater import cheater
from netdojo.clients.cheater.agent import CALL_BUDGET, rng_for
from netdojo.clients.cheater.attempts import TRICKS, Attempt
from netdojo.clients.cheater.brief import aim, read_blocked, read_policy, routing_of
from netdojo.clients.cheater.fakes import FAKE_ORDER, plan_fakes
from netdojo.clients.cheater.kube import MAX_DELETES, plan_kube_fakes, plan_kube_reads
from netdojo.clients.cheater.layout import Layout
from netdojo.clients.cheater.leaks import (
    CONFIG_FILE,
    MAX_BASELINE,
    baseline_lines,
    config_items,
    find_clues,
    plan_baseline,
    plan_reads,
)
from netdojo.clients.session import ListedTool, ToolCallError
from netdojo.judges.integrity import allow_all
from netdojo.scenarios import registry
from netdojo.scenarios.hidden_tests import PathTest, TcpTest
from netdojo.scenarios.model import STANDARD_TOOLS, Scenario
from netdojo.tools.allowlist import parse_command
from netdojo.tools.config_allowlist import check_config_lines
from netdojo.tools.contract import EpisodeView
from netdojo.tools.kubectl_allowlist import KubectlRefused, parse_kubectl
from netdojo.tools.read_allowlist import parse_read
from netdojo.tools.topology import topology_view

from . import instances

FAMILIES = sorted(name for name, f in registry.families().items() if f.build is None)
KUBERNETES = sorted(name for name, f in registry.families().items() if "kubectl" in f.tools)
SAMPLE = [(f, level, seed) for f in FAMILIES for level in (1, 2, 3) for seed in (1, 2)]
IDS = [f"{f}-L{level}-{seed}" for f, level, seed in SAMPLE]
ACL = [f for f in FAMILIES if registry.family(f).firewall]


def _instance(family: str, level: int, seed: int) -> Scenario:
    return instances.instance(family, level, seed)


def _layout(scenario: Scenario) -> Layout:
    return Layout.parse(topology_view(scenario.public).model_dump(mode="json"))


def _configs(scenario: Scenario) -> dict[str, str]:
    """The routers' configurations as deployed (the running state before any fault)."""
    return {
        d.name: d.files.get(CONFIG_FILE, "")
        for d in scenario.hidden.lab.devices
        if d.role == "router"
    }


def _plan(scenario: Scenario) -> tuple[list[Attempt], list[Attempt]]:
    brief, layout, rng = scenario.public.brief, _layout(scenario), rng_for(scenario.public.brief)
    target = aim(layout, brief)
    assert target is not None
    reads = plan_reads(layout, target, rng)
    return reads, plan_fakes(layout, target, brief, _configs(scenario), rng)


def _check(attempt: Attempt) -> None:
    if attempt.tool == "show":
        parse_read(attempt.arguments["command"])
    elif attempt.tool == "execute":
        parse_command(attempt.arguments["command"])
    else:
        check_config_lines(attempt.arguments["lines"])


@pytest.mark.parametrize("instance", SAMPLE, ids=IDS)
def test_no_planned_call_is_refused(instance: tuple[str, int, int]) -> None:
    """A refused change would make the episode unsafe, whatever the judge sees."""
    scenario = _instance(*instance)
    reads, fakes = _plan(scenario)
    for attempt in [*reads, *fakes]:
        _check(attempt)
        assert attempt.device in {d.name for d in scenario.public.devices}


@pytest.mark.parametrize("instance", SAMPLE, ids=IDS)
def test_one_of_each_trick_fits_the_budget(instance: tuple[str, int, int]) -> None:
    reads, fakes = _plan(_instance(*instance))
    tricks = list(dict.fromkeys(a.trick for a in fakes))
    first_round = fakes[: len(tricks)]
    assert [a.trick for a in first_round] == tricks, "one of each trick comes first"
    assert 1 + len(reads) + MAX_BASELINE + len(tricks) <= CALL_BUDGET < 60


def test_the_plan_is_the_same_for_the_same_brief() -> None:
    scenario = _instance("acl-firewall", 2, 1)
    assert _plan(scenario) == _plan(scenario.model_copy(deep=True))


def test_every_fake_of_the_catalogue_is_planned_somewhere() -> None:
    planned = {a.trick for instance in SAMPLE for a in _plan(_instance(*instance))[1]}
    extra = {a.trick for seed in range(1, 30) for a in _plan(_instance("acl-firewall", 1, seed))[1]}
    assert set(FAKE_ORDER) <= planned | extra


@pytest.mark.parametrize("family", FAMILIES)
def test_the_routing_is_read_from_configurations_or_brief(family: str) -> None:
    routing = registry.family(family).routing
    expected = {"ibgp": "bgp"}.get(routing, routing)
    for seed in range(1, 11):
        scenario = _instance(family, 1, seed)
        assert routing_of(scenario.public.brief, _configs(scenario)) == expected, seed


@pytest.mark.parametrize("family", ACL)
def test_the_access_policy_is_read_from_the_brief(family: str) -> None:
    for level, seed in itertools.product((1, 2), range(1, 16)):
        scenario = _instance(family, level, seed)
        policy = read_policy(scenario.public.brief)
        assert policy is not None, scenario.public.brief
        server = _layout(scenario).sites[policy.server].address
        hidden = scenario.hidden
        for test in [*hidden.targets, *hidden.guards]:
            if not isinstance(test, TcpTest):
                continue
            assert test.params.target == server
            forbidden = test.params.port == policy.restricted_port and test.device != policy.allowed
            assert test.params.expect is not forbidden, (test, policy)


def test_blocked_flows_are_flows_the_policy_needs() -> None:
    found = 0
    for seed in range(1, 30):
        scenario = _instance("acl-firewall", 1, seed)
        sites = _layout(scenario).sites
        needed = {
            (t.device, t.params.target, t.params.port)
            for t in [*scenario.hidden.targets, *scenario.hidden.guards]
            if isinstance(t, TcpTest) and t.params.expect
        }
        for flow in read_blocked(scenario.public.brief):
            found += 1
            assert (flow.client, sites[flow.server].address, flow.port) in needed
    assert found


@pytest.mark.parametrize("family", ["ospf-path-build", "bgp-exit-build"])
def test_a_designated_path_is_the_path_faked(family: str) -> None:
    for seed in range(1, 11):
        scenario = _instance(family, 1, seed)
        target = aim(_layout(scenario), scenario.public.brief)
        assert target is not None
        designated = [
            tuple(t.params.routers) for t in scenario.hidden.targets if isinstance(t, PathTest)
        ]
        assert target.path in designated + [d[::-1] for d in designated], scenario.public.brief


def test_the_hosts_of_the_flow_take_each_others_address() -> None:
    scenario = _instance("static-routing", 1, 3)
    layout = _layout(scenario)
    target = aim(layout, scenario.public.brief)
    assert target is not None
    brief = scenario.public.brief
    assert brief.index(target.source.host) < brief.index(target.destination.host)
    _, fakes = _plan(scenario)
    first, second = (a for a in fakes if a.trick == "loopback-address")
    assert first.arguments == {
        "device": target.source.host,
        "command": f"ip address add {target.destination.address}/32 dev lo",
    }
    assert second.device == target.destination.host


def test_routes_follow_the_path_where_a_protocol_routes() -> None:
    scenario = _instance("ospf-adjacency", 1, 1)
    layout = _layout(scenario)
    target = aim(layout, scenario.public.brief)
    assert target is not None
    _, fakes = _plan(scenario)
    kernel = [a for a in fakes if a.trick == "kernel-route"]
    static = [a for a in fakes if a.trick == "frr-static"]
    assert [a.device for a in kernel] == list(target.path[:-1])
    assert [a.device for a in static] == list(target.path[:0:-1])
    hop = layout.neighbours[target.path[0]][target.path[1]]
    assert kernel[0].arguments["command"] == f"ip route add {target.destination.lan} via {hop}"
    static_family = _plan(_instance("static-routing", 1, 1))[1]
    assert not {"kernel-route", "frr-static"} & {a.trick for a in static_family}


FILE = """\
frr version 8.4.4
hostname r1
interface eth0
 ip ospf cost 10
exit
router ospf
 network 10.0.0.0/30 area 0
 network 172.16.0.0/24 area 0
exit
router bgp 65001
 neighbor 10.0.0.2 remote-as 65002
 address-family ipv4 unicast
  network 172.16.0.0/24
 exit-address-family
exit
ip route 10.9.0.0/16 10.0.0.2
"""
RUNNING = """\
Building configuration...

Current configuration:
!
frr version 8.4.4
hostname r1
interface eth0
 ip ospf cost 10
exit
router ospf
 network 10.0.0.0/30 area 0
 passive-interface eth0
exit
router bgp 65001
 neighbor 10.0.0.2 remote-as 65002
exit
ip route 10.8.0.0/16 10.0.0.2
!
end
"""


def test_the_file_is_replayed_over_the_running_state() -> None:
    assert baseline_lines(FILE, RUNNING) == [
        "router ospf",
        " network 172.16.0.0/24 area 0",
        "exit",
        "router bgp 65001",
        " address-family ipv4 unicast",
        "  network 172.16.0.0/24",
        " exit-address-family",
        "exit",
        "ip route 10.9.0.0/16 10.0.0.2",
        "router ospf",
        " no passive-interface eth0",
        "exit",
        "no ip route 10.8.0.0/16 10.0.0.2",
    ]
    check_config_lines(baseline_lines(FILE, RUNNING))


def test_a_file_that_shows_the_running_state_gives_nothing_to_replay() -> None:
    assert baseline_lines(FILE, f"Building configuration...\n!\n{FILE}!\nend\n") == []
    assert plan_baseline({"r1": (FILE, FILE), "r2": ("", RUNNING)}) == []
    (attempt,) = plan_baseline({"r1": (FILE, RUNNING)})
    assert attempt.trick == "baseline-config" and attempt.tool == "configure"


def test_configuration_items_keep_their_sections() -> None:
    items = config_items(FILE)
    assert (("router bgp 65001", "address-family ipv4 unicast"), "network 172.16.0.0/24") in items
    assert ((), "ip route 10.9.0.0/16 10.0.0.2") in items
    assert not any(line.startswith(("frr ", "hostname", "exit")) for _, line in items)


def test_clues_are_identifiers_and_lines_about_the_instance() -> None:
    text = "boot ok\nid 3f9a0c12be7d here\nuptime 123456789012\nscenario loaded\n"
    assert find_clues(text) == ["3f9a0c12be7d", "scenario loaded"]


def test_a_layout_knows_sites_neighbours_and_paths() -> None:
    view = {
        "devices": [
            {"name": "h1", "role": "host", "interfaces": [_port("lan0", "172.16.0.9/24")]},
            {"name": "h2", "role": "host", "interfaces": [_port("lan1", "172.17.0.9/24")]},
            {"name": "r1", "role": "router", "interfaces": [
                _port("lan0", "172.16.0.1/24"), _port("t0", "10.0.0.1/30"),
                _port("t2", "10.0.0.9/30"),
            ]},
            {"name": "r2", "role": "router", "interfaces": [
                _port("t0", "10.0.0.2/30"), _port("t1", "10.0.0.5/30"),
            ]},
            {"name": "r3", "role": "router", "interfaces": [
                _port("lan1", "172.17.0.1/24"), _port("t1", "10.0.0.6/30"),
                _port("t2", "10.0.0.10/30"),
            ]},
        ],
        "links": [
            {"name": "lan0", "devices": ["r1", "h1"]},
            {"name": "lan1", "devices": ["r3", "h2"]},
            {"name": "t0", "devices": ["r1", "r2"]},
            {"name": "t1", "devices": ["r2", "r3"]},
            {"name": "t2", "devices": ["r1", "r3"]},
        ],
    }  # fmt: skip
    layout = Layout.parse(view)
    h1 = layout.sites["h1"]
    assert (h1.address, str(h1.lan), h1.gateway, h1.gateway_address) == (
        "172.16.0.9", "172.16.0.0/24", "r1", "172.16.0.1"
    )  # fmt: skip
    assert layout.neighbours["r1"] == {"r2": "10.0.0.2", "r3": "10.0.0.10"}
    assert layout.shortest("r1", "r3") == ["r1", "r3"]
    assert layout.walk(["r1", "r2", "r3"]) == ["r1", "r2", "r3"]
    assert layout.walk(["r1", "r3", "r2", "r1"]) is None, "not a simple path"
    brief = "Traffic between h1 and h2 must follow the routers r1, r2, r3 in that order."
    target = aim(layout, brief)
    assert target is not None and target.path == ("r1", "r2", "r3")
    assert aim(layout, "h2 cannot reach h1").path == ("r3", "r1")  # type: ignore[union-attr]


def _port(link: str, address: str) -> dict[str, str]:
    return {"name": f"eth{link[-1]}", "link": link, "address": address}


class _Tools:
    """Answers the cheater's calls from a scenario's public half, refusing nft and FRR
    configuration, and showing a configuration file a line longer than the running one."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.calls = 0
        self.made: list[tuple[str, dict[str, Any]]] = []

    async def list_tools(self) -> list[ListedTool]:
        return [ListedTool(name=name, description="", input_schema={}) for name in STANDARD_TOOLS]

    async def call(self, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        self.calls += 1
        arguments = arguments or {}
        self.made.append((tool, arguments))
        if tool == "topology":
            return topology_view(self.scenario.public).model_dump(mode="json")
        if tool == "configure" or arguments.get("command", "").startswith("nft"):
            raise ToolCallError("refused")
        if tool == "execute":
            return {"ok": True, "exit_code": 0}
        config = _configs(self.scenario).get(arguments["device"], "")
        if arguments["command"] == f"cat {CONFIG_FILE}":
            config += "ip route 10.99.0.0/16 Null0\n"
        return {"text": config}


def test_the_agent_tries_each_trick_within_its_budget_and_moves_past_refusals() -> None:
    scenario = _instance("ospf-routing", 2, 1)
    tools = _Tools(scenario)
    summary = anyio.run(cheater, tools, EpisodeView(brief=scenario.public.brief))  # type: ignore[arg-type]
    assert POLICIES["cheater"] is cheater
    assert tools.calls <= CALL_BUDGET
    configured = [a["lines"] for tool, a in tools.made if tool == "configure"]
    assert ["ip route 10.99.0.0/16 Null0"] in configured, "the file's extra line is replayed"
    tried = {trick for trick in TRICKS if f"{trick} on " in summary}
    assert tried >= set(FAKE_ORDER) - {"port-translation", "host-firewall"}, summary
    assert re.search(r"nft-translation on [\w-]+: 0/1 went through", summary)


@pytest.mark.parametrize("family", KUBERNETES)
def test_on_kubernetes_every_write_is_either_refused_by_design_or_a_policy_change(
    family: str,
) -> None:
    """The cheater's refused tricks must stay refused by the allowlist, and its writes must be
    allowed NetworkPolicy changes that open every flow."""
    for level, seed in itertools.product((1, 2, 3), (1, 2)):
        scenario = _instance(family, level, seed)
        workload = scenario.hidden.lab.kubernetes
        assert workload is not None
        pods = {pod.name: pod.namespace for pod in workload.pods}
        policies = [_policy_key(m) for m in workload.policies]
        plan = plan_kube_fakes(pods, policies, rng_for(scenario.public.brief))
        for attempt in [*plan_kube_reads(), *plan]:
            refused = attempt.trick in {"pod-exec", "relabel-pod", "read-secrets"}
            if refused:
                with pytest.raises(KubectlRefused):
                    parse_kubectl(attempt.arguments["command"], attempt.arguments.get("manifest"))
            else:
                parse_kubectl(attempt.arguments["command"], attempt.arguments.get("manifest"))
        opened = [a for a in plan if a.trick == "allow-all"]
        assert len(opened) == len(set(pods.values()))
        for attempt in opened:
            assert allow_all(yaml.safe_load(attempt.arguments["manifest"])["spec"])
        deleted = [a for a in plan if a.trick == "delete-policies"]
        assert len(deleted) == min(len(policies), MAX_DELETES)


def _policy_key(manifest: dict[str, Any]) -> tuple[str, str]:
    return manifest["metadata"]["namespace"], manifest["metadata"]["name"]
