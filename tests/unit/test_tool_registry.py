"""The tool registry: every tool declared once and served, applied and judged by its name."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Annotated, Any

import pytest
from mcp import Client
from pydantic import BaseModel, Field, ValidationError

from netdojo.judges.grading import Grade
from netdojo.judges.monitor import MonitorReport
from netdojo.judges.verdict import safety_of
from netdojo.scenarios import registry
from netdojo.scenarios.generate import generate
from netdojo.scenarios.model import (
    STANDARD_TOOLS,
    ToolCall,
)
from netdojo.servers.mcp_server import evaluation_server, evaluation_tools
from netdojo.tools.actions import apply
from netdojo.tools.lab_tools import LabTools, ToolFailure
from netdojo.tools.registry import (
    call_arguments,
    register_tool,
    tool_spec,
    tool_specs,
    unregister_tool,
)
from netdojo.tools.spec import Device, ToolArguments, ToolSpec, UnknownTool
from netdojo.tools.trajectory import Trajectory

from .labless_tools import NO_LAB, labless_tools


class EchoArguments(ToolArguments):
    device: Device
    times: Annotated[int, Field(ge=1, le=3, description="how often to repeat the name")] = 1


class EchoResult(BaseModel):
    echoed: str
    devices: int


async def _echo(tools: LabTools, arguments: EchoArguments) -> EchoResult:
    return EchoResult(echoed=arguments.device * arguments.times, devices=len(tools.public.devices))


ECHO = ToolSpec(
    name="echo",
    title="Echo a device",
    arguments=EchoArguments,
    result=EchoResult,
    description="Repeat a device name.",
    run=_echo,
    read_only=True,
    destructive=False,
)


@pytest.fixture
def echo() -> Iterator[ToolSpec[EchoArguments, EchoResult]]:
    register_tool(ECHO)
    try:
        yield ECHO
    finally:
        unregister_tool(ECHO.name)


@pytest.mark.anyio
async def test_a_registered_tool_is_served_with_its_model_as_schema(
    echo: ToolSpec[EchoArguments, EchoResult],
) -> None:
    server = evaluation_server(labless_tools(), [*STANDARD_TOOLS, echo.name])
    async with Client(server) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert list(listed) == [*STANDARD_TOOLS, "echo"]
        served = listed["echo"]
        assert served.input_schema == echo.input_schema()
        assert served.description == "Repeat a device name." and served.title == "Echo a device"
        assert served.annotations is not None and served.annotations.read_only_hint
        result = await client.call_tool("echo", {"device": "r1", "times": 2})
        assert not result.is_error, result.content
        assert result.structured_content == {"echoed": "r1r1", "devices": 2}
        bad: list[tuple[dict[str, Any], str]] = [
            ({"device": "r1", "times": 9}, "times must be from 1 to 3, not 9"),
            ({"device": "r1", "colour": "red"}, "no argument 'colour'; the arguments are device"),
            ({}, "device is required"),
        ]
        for arguments, reason in bad:
            refused = await client.call_tool("echo", arguments)
            text = "".join(getattr(block, "text", "") for block in refused.content)
            assert refused.is_error and reason in text, text
            assert "pydantic" not in text and "validation error" not in text, text


def test_a_name_is_registered_once_until_it_is_removed() -> None:
    register_tool(ECHO)
    try:
        assert tool_spec("echo") is ECHO
        with pytest.raises(ValueError, match="registered already"):
            register_tool(ECHO)
    finally:
        unregister_tool("echo")
    with pytest.raises(UnknownTool, match="unknown tool 'echo'"):
        tool_spec("echo")


def test_served_schemas_carry_no_titles_and_refuse_unknown_arguments() -> None:
    for spec in tool_specs():
        schema = spec.input_schema()
        assert "title" not in json.dumps(schema), spec.name
        assert schema["type"] == "object" and schema["additionalProperties"] is False
    capture = tool_spec("capture").input_schema()["properties"]
    assert capture["seconds"]["minimum"] == 0.5 and capture["max_packets"]["maximum"] == 200


def test_the_export_lists_the_registered_tools_without_a_server() -> None:
    instructions, tools = evaluation_tools()
    assert "configure" in instructions
    assert [t["function"]["name"] for t in tools] == list(STANDARD_TOOLS)
    assert tools[1]["function"]["parameters"] == tool_spec("show").input_schema()


@pytest.mark.anyio
async def test_apply_refuses_a_tool_it_cannot_apply() -> None:
    with pytest.raises(UnknownTool, match="unknown tool 'reboot'; tools are: topology, show"):
        await apply(NO_LAB, ToolCall.model_construct(tool="reboot", arguments={}))
    show = ToolCall.model_construct(tool="show", arguments={"device": "r1", "command": "x"})
    with pytest.raises(UnknownTool, match="show tool does not change a lab"):
        await apply(NO_LAB, show)
    with pytest.raises(ValidationError, match="lines"):
        await apply(NO_LAB, ToolCall(tool="configure", arguments={"device": "r1"}))


@pytest.mark.anyio
async def test_a_direct_call_is_checked_by_the_same_model_and_recorded() -> None:
    tools = labless_tools()
    with pytest.raises(ToolFailure, match=r"^count must be from 1 to 10, not 1099511627776$"):
        await tools.ping("h1", "r1", count=2**40)
    with pytest.raises(
        ToolFailure, match=re.escape("seconds must be from 0.5 to 30.0, not 1000000000.0")
    ):
        await tools.capture("r1", "eth0", seconds=1e9)
    steps = tools.trajectory.steps
    assert [(s.tool, s.ok) for s in steps] == [("ping", False), ("capture", False)]
    assert steps[0].arguments["count"] == 2**40


def test_refusals_count_for_the_tools_that_declare_them_unsafe() -> None:
    """A refused execute is an attempt at what the tool forbids; a refused configure line is
    a malformed request, and reads are never unsafe."""
    trajectory = Trajectory(episode="e")
    for tool in ("show", "capture", "configure", "execute"):
        trajectory.record(tool, {"device": "r1"}, time.monotonic(), ok=False, summary="refused",
                          refused=True)  # fmt: skip
    grade = Grade(solved=True, targets_passed=1.0, targets=[], guards=[], adherence=[])
    safety = safety_of(grade, MonitorReport(flows=1, samples=1), trajectory, {"r1"})
    assert safety.refused_changes == 1 and not safety.safe


class FleetArguments(ToolArguments):
    site: str

    def acts_on(self) -> str | None:
        return f"gw-{self.site}"


async def _fleet(tools: LabTools, arguments: FleetArguments) -> EchoResult:
    return EchoResult(echoed=arguments.site, devices=0)


FLEET = ToolSpec(
    name="fleet",
    title="Act on a site's gateway",
    arguments=FleetArguments,
    result=EchoResult,
    description="Act on the gateway of a site.",
    run=_fleet,
    read_only=False,
    destructive=False,
)


def test_the_scope_of_a_change_is_read_through_its_tools_model() -> None:
    """A change counts as out of scope by the device its tool's model says it acts on: a
    ``device`` argument by default, or what the tool declares; a recorded call no tool
    accepts acts on no device in scope."""
    register_tool(FLEET)
    try:
        assert isinstance(call_arguments("configure", {"device": "r1", "lines": ["x"]}),
                          ToolArguments)  # fmt: skip
        assert call_arguments("configure", {"device": "r1", "colour": "red"}) is None
        assert call_arguments("teleport", {"device": "r1"}) is None
        trajectory = Trajectory(episode="e")
        calls: list[tuple[str, dict[str, Any]]] = [
            ("configure", {"device": "r1", "lines": ["x"]}),
            ("configure", {"device": "r9", "lines": ["x"]}),
            ("fleet", {"site": "a"}),
            ("fleet", {"site": "b"}),
            ("execute", {"device": "r1", "command": "ip link", "extra": 1}),
        ]
        for tool, arguments in calls:
            trajectory.record(tool, arguments, time.monotonic(), ok=True, summary="",
                              changed_state=True)  # fmt: skip
        grade = Grade(solved=True, targets_passed=1.0, targets=[], guards=[], adherence=[])
        safety = safety_of(grade, MonitorReport(flows=1, samples=1), trajectory, {"r1", "gw-a"})
        assert safety.out_of_scope_changes == 3
    finally:
        unregister_tool(FLEET.name)


def test_every_recorded_call_of_the_catalogue_is_a_valid_call_of_a_tool_that_acts() -> None:
    """Injections, fixes and reference solutions name registered tools that can act on a lab,
    with arguments their tool's own model accepts."""
    checked = 0
    for family in registry.families():
        for level in registry.families()[family].levels:
            for seed in (1, 2):
                hidden = generate(family, level, seed).hidden
                calls = [c for f in hidden.faults for c in (*f.inject, *f.fix)] + hidden.solution
                for call in calls:
                    spec = tool_spec(call.tool)
                    assert spec.act is not None, call
                    spec.arguments.model_validate(call.arguments)
                    checked += 1
    assert checked > 100
