"""The MCP server on a live episode: schemas, structured results, refusals, limits, no leaks."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import jsonschema
import pytest
from mcp import Client

from netdojo.judges.episode import Episode, open_episode
from netdojo.scenarios.generate import generate
from netdojo.scenarios.model import Scenario
from netdojo.servers.mcp_server import evaluation_server
from netdojo.tools.lab_tools import LabTools, ToolLimits
from netdojo.tools.trajectory import Trajectory

pytestmark = pytest.mark.anyio
FAMILY, LEVEL, SEED = "ospf-adjacency", 1, 26  # a fault that leaves the first two hosts connected


@pytest.fixture(scope="module")
async def episode() -> AsyncIterator[Episode]:
    opened = await open_episode(generate(FAMILY, LEVEL, SEED), "test-mcp")
    try:
        yield opened
    finally:
        await opened.close()


def _fresh_tools(episode: Episode, limits: ToolLimits | None = None) -> LabTools:
    """Tools on the module's lab with a trajectory of their own."""
    return LabTools(episode.lab, episode.scenario.public, Trajectory(episode="t"), limits)


def _names(episode: Episode) -> tuple[str, list[str]]:
    devices = episode.scenario.public.devices
    router = next(d.name for d in devices if d.role == "router")
    return router, [d.name for d in devices if d.role == "host"]


def _valid_calls(episode: Episode) -> dict[str, dict[str, Any]]:
    router, hosts = _names(episode)
    return {
        "topology": {},
        "show": {"device": router, "command": "show ip ospf neighbor"},
        "configure": {"device": router, "lines": ["router ospf", " timers throttle spf 0 50 500"]},
        "execute": {"device": router, "command": "ip link set dev lo up"},
        "ping": {"source": hosts[0], "destination": hosts[1], "count": 2},
        "traceroute": {"source": hosts[0], "destination": hosts[1]},
        "capture": {"device": router, "interface": "eth0", "seconds": 2.5, "max_packets": 2},
        "submit": {"summary": "checked the network"},
    }


async def test_every_tool_has_schemas_and_returns_what_its_schema_says(episode: Episode) -> None:
    tools = _fresh_tools(episode)
    calls = _valid_calls(episode)
    async with Client(evaluation_server(tools)) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(listed) == set(calls), "evaluation mode serves the lab tools and submit only"
        for name, arguments in calls.items():  # submit comes last: it ends the work
            tool = listed[name]
            assert tool.input_schema["type"] == "object" and tool.output_schema, name
            jsonschema.validate(arguments, tool.input_schema)
            result = await client.call_tool(name, arguments)
            assert not result.is_error, (name, result.content)
            jsonschema.validate(result.structured_content, tool.output_schema)
            assert json.loads(result.content[0].text) == result.structured_content
        assert listed["show"].annotations.read_only_hint
        assert listed["configure"].annotations.destructive_hint
        assert listed["execute"].annotations.destructive_hint
    steps = tools.trajectory.steps
    assert [s.tool for s in steps] == list(calls)
    assert [s.tool for s in steps if s.changed_state] == ["configure", "execute"]
    assert all(s.ok and s.duration_s >= 0 and s.time.endswith("+00:00") for s in steps)
    assert tools.trajectory.submitted == "checked the network"


async def test_results_are_structured(episode: Episode) -> None:
    router, hosts = _names(episode)
    async with Client(evaluation_server(_fresh_tools(episode))) as client:
        shown = (
            await client.call_tool("show", {"device": router, "command": "show ip route"})
        ).structured_content
        assert "Codes:" in shown["text"] and isinstance(shown["parsed"], dict)
        addresses = (
            await client.call_tool("show", {"device": router, "command": "ip -j address"})
        ).structured_content
        assert {entry["ifname"] for entry in addresses["parsed"]} >= {"lo", "eth0"}
        ping = (
            await client.call_tool("ping", {"source": hosts[0], "destination": hosts[1]})
        ).structured_content
        assert ping["transmitted"] == 3 and len(ping["rtt_ms"]) == ping["received"]
        trace = (
            await client.call_tool("traceroute", {"source": hosts[0], "destination": hosts[1]})
        ).structured_content
        assert trace["reached"] and trace["hops"][0]["hop"] == 1
        capture = (
            await client.call_tool(
                "capture",
                {"device": router, "interface": "eth0", "filter": "proto ospf", "seconds": 3},
            )
        ).structured_content
        assert capture["packets"] and {p["protocol"] for p in capture["packets"]} <= {
            "OSPF Hello",
            "OSPF Link State Update",
            "OSPF Link State Acknowledgement",
            "OSPF Database Description",
            "OSPF Link State Request",
        }
        configured = (
            await client.call_tool(
                "configure", {"device": router, "lines": ["router ospf", " no-such-command 1"]}
            )
        ).structured_content
        assert [line["accepted"] for line in configured["lines"]] == [True, False]
        assert "Unknown command" in configured["lines"][1]["error"]


@pytest.mark.parametrize(
    ("tool", "command", "reason"),
    [
        ("show", "cat /etc/shadow", "only these files can be read"),
        ("show", "show running-config | include password", "output filters"),
        ("show", "ip route add 10.9.9.0/24 dev lo", "is not a read"),
        ("show", "ss -K", "not allowed"),
        ("execute", "sh -c reboot", "'sh' is not an allowed program"),
        ("execute", "ip netns exec x id", "netns is not allowed"),
        ("execute", "sysctl -w net.ipv4.ip_forward=0", "'sysctl' is not an allowed program"),
    ],
)
async def test_commands_outside_the_allowlists_are_refused_with_the_allowed_forms(
    episode: Episode, tool: str, command: str, reason: str
) -> None:
    router, _ = _names(episode)
    tools = _fresh_tools(episode)
    async with Client(evaluation_server(tools)) as client:
        result = await client.call_tool(tool, {"device": router, "command": command})
    assert result.is_error
    text = result.content[0].text
    assert reason in text and "Allowed forms:" in text
    assert tools.trajectory.steps[-1].refused and not tools.trajectory.steps[-1].changed_state


async def test_shell_syntax_reaches_the_program_as_plain_arguments(episode: Episode) -> None:
    router, _ = _names(episode)
    async with Client(evaluation_server(_fresh_tools(episode))) as client:
        result = await client.call_tool(
            "execute", {"device": router, "command": "ip link set dev lo up; touch /tmp/pwned"}
        )
        done = result.structured_content
        assert done["exit_code"] != 0 and "garbage" in done["stderr"]
        listing = await episode.lab.exec(router, ["ls", "/tmp"])
        assert "pwned" not in listing.stdout


async def test_unknown_device_lists_the_valid_ones(episode: Episode) -> None:
    async with Client(evaluation_server(_fresh_tools(episode))) as client:
        result = await client.call_tool("show", {"device": "ghost", "command": "show version"})
    assert result.is_error
    assert all(d.name in result.content[0].text for d in episode.scenario.public.devices)


async def test_output_is_capped_with_a_note(episode: Episode) -> None:
    router, _ = _names(episode)
    tools = _fresh_tools(episode, ToolLimits(output_cap=300))
    async with Client(evaluation_server(tools)) as client:
        result = await client.call_tool(
            "show", {"device": router, "command": "show running-config"}
        )
    shown = result.structured_content
    assert shown["truncated"] and len(shown["text"]) <= 300
    assert "output cut at 300 bytes" in shown["note"]


async def test_a_slow_command_times_out_with_a_note(episode: Episode) -> None:
    router, _ = _names(episode)
    tools = _fresh_tools(episode, ToolLimits(show_timeout_s=0.01))
    async with Client(evaluation_server(tools)) as client:
        result = await client.call_tool("show", {"device": router, "command": "show ip route"})
    assert "timed out after 0.01s" in result.structured_content["note"]


def _hidden_strings(scenario: Scenario) -> set[str]:
    """Text that would give the answer away: fault types, test ids and texts, solution lines."""
    hidden = scenario.hidden
    tests = hidden.targets + hidden.guards + hidden.adherence
    tests += [t for fault in hidden.faults for t in fault.present]
    strings = {fault.type for fault in hidden.faults}
    strings |= {t.id for t in tests} | {t.description for t in tests}
    for call in hidden.solution:
        if call.tool == "execute":
            strings.add(call.arguments["command"])
        else:
            strings |= {line.strip() for line in call.arguments["lines"] if len(line.strip()) > 12}
    return strings


async def test_nothing_served_reveals_the_hidden_half(episode: Episode) -> None:
    router, _ = _names(episode)
    async with Client(evaluation_server(_fresh_tools(episode))) as client:
        exposed = [t.model_dump_json() for t in (await client.list_tools()).tools]
        resources = (await client.list_resources()).resources
        exposed += [r.model_dump_json() for r in resources]
        for resource in resources:
            exposed += [c.text for c in (await client.read_resource(resource.uri)).contents]
        exposed += [p.model_dump_json() for p in (await client.list_prompts()).prompts]
        for tool, arguments in [
            ("show", {"device": "nope", "command": "show version"}),
            ("show", {"device": router, "command": "rm -rf /"}),
            ("execute", {"device": router, "command": "vtysh"}),
            ("ping", {"source": router, "destination": "not-a-device"}),
            ("capture", {"device": router, "interface": "eth0", "filter": "-z /bin/sh"}),
            ("no_such_tool", {}),
        ]:
            result = await client.call_tool(tool, arguments)
            assert result.is_error
            exposed.append(result.content[0].text)
    text = "\n".join(exposed)
    leaked = [s for s in _hidden_strings(episode.scenario) if s in text]
    assert not leaked, leaked
    assert "hidden" not in text.lower() and "solution" not in text.lower()
