"""What an MCP client sees of netdojo before any lab: argument errors in plain sentences, titles,
the family enum, typed output schemas, one structured family list and readable resources."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import pytest
from mcp import Client
from pydantic import Field, ValidationError

from netdojo.scenarios import registry
from netdojo.scenarios.model import STANDARD_TOOLS
from netdojo.servers.mcp_server import evaluation_server, practice_server
from netdojo.servers.practice import PracticeSession
from netdojo.tools.argument_errors import problems
from netdojo.tools.lab_tools import ShowResult, ToolFailure
from netdojo.tools.registry import tool_specs
from netdojo.tools.spec import InvalidArguments, ToolArguments

from .labless_tools import labless_tools

pytestmark = pytest.mark.anyio
PRACTICE_TOOLS = ["list_families", "start_scenario", "brief", "reset", "grade", "end"]


class Sample(ToolArguments):
    count: int = Field(3, ge=1, le=10)
    seed: Annotated[int | None, Field(ge=0)] = None
    seconds: float = Field(5.0, gt=0.5)
    lines: list[str] = Field(default_factory=list)
    colour: Literal["red", "green"] = "red"
    summary: str = Field("", max_length=5)


def _said(**arguments: Any) -> str:
    with pytest.raises(ValidationError) as refused:
        Sample.model_validate(arguments)
    return problems(Sample, refused.value)


@pytest.mark.parametrize(
    ("arguments", "sentence"),
    [
        ({"count": 50}, "count must be from 1 to 10, not 50"),
        ({"count": 0}, "count must be from 1 to 10, not 0"),
        ({"seed": -1}, "seed must be at least 0, not -1"),
        ({"seconds": 0.1}, "seconds must be greater than 0.5, not 0.1"),
        ({"count": "many"}, "count must be an integer, not 'many'"),
        ({"count": 1.5}, "count must be a whole number, not 1.5"),
        ({"lines": "one line"}, "lines must be a list, not 'one line'"),
        ({"lines": ["ok", 7]}, "lines[1] must be a string, not 7"),
        ({"colour": "blue"}, "colour must be one of red or green, not 'blue'"),
        ({"summary": "too long"}, "summary may have at most 5 characters, not 8"),
        (
            {"shade": 1},
            "there is no argument 'shade'; the arguments are count, seed, seconds, lines, "
            "colour and summary",
        ),
    ],
)
def test_each_argument_problem_is_one_sentence_naming_argument_rule_and_value(
    arguments: dict[str, Any], sentence: str
) -> None:
    assert _said(**arguments) == sentence


def test_several_problems_are_joined_and_long_values_are_cut() -> None:
    said = _said(count=99, summary="x" * 500)
    assert said.startswith("count must be from 1 to 10, not 99; summary may have at most 5")
    assert len(_said(lines="y" * 500)) < 100
    with pytest.raises(InvalidArguments, match="count must be from 1 to 10, not 11"):
        Sample.checked({"count": 11})


PYDANTIC_WORDS = ("validation error", "pydantic", "type=", "input_value", "For further")


async def test_mcp_and_direct_calls_refuse_bad_arguments_with_the_same_sentence() -> None:
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("ping", {"source": "h1", "destination": "r1", "count": 50}, "count must be from 1 to 10"),
        ("capture", {"device": "r1", "interface": "eth0", "seconds": 1e9}, "seconds must be from"),
        ("show", {"device": "r1"}, "command is required"),
        ("configure", {"device": "r1", "lines": ["router ospf", 5]}, "lines[1] must be a string"),
        ("topology", {"verbose": True}, "there is no argument 'verbose'; it takes no arguments"),
    ]
    tools = labless_tools()
    async with Client(evaluation_server(tools)) as client:
        for tool, arguments, sentence in cases:
            result = await client.call_tool(tool, arguments)
            text = "".join(getattr(block, "text", "") for block in result.content)
            assert result.is_error and text == f"Error executing tool {tool}: " + _said_for(
                tool, arguments
            ), text
            assert sentence in text and not any(word in text for word in PYDANTIC_WORDS), text
    assert tools.trajectory.steps == [], "a call its model refuses never runs"
    with pytest.raises(ToolFailure) as direct:
        await tools.ping("h1", "r1", count=50)
    assert str(direct.value) == "count must be from 1 to 10, not 50"


def _said_for(tool: str, arguments: dict[str, Any]) -> str:
    (spec,) = tool_specs([tool])
    with pytest.raises(InvalidArguments) as refused:
        spec.checked(arguments)
    return str(refused.value)


async def test_start_scenario_offers_the_registered_families_as_an_enum() -> None:
    async with Client(practice_server(PracticeSession())) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        family = listed["start_scenario"].input_schema["properties"]["family"]
        assert family["enum"] == list(registry.families()) and family["type"] == "string"
        assert listed["start_scenario"].input_schema["required"] == ["family"]
        refused = await client.call_tool("start_scenario", {"family": "nope", "seed": -1})
        text = refused.content[0].text  # type: ignore[union-attr]
        assert refused.is_error and "family must be one of static-routing, " in text
        assert "not 'nope'; seed must be at least 0, not -1" in text
        extra = await client.call_tool("brief", {"verbose": True})
        assert extra.is_error and "it takes no arguments" in extra.content[0].text  # type: ignore[union-attr]


async def test_every_tool_has_a_title() -> None:
    async with (
        Client(practice_server(PracticeSession())) as practice,
        Client(evaluation_server(labless_tools())) as evaluation,
    ):
        served = (await practice.list_tools()).tools + (await evaluation.list_tools()).tools
    names = {*STANDARD_TOOLS, *PRACTICE_TOOLS, "kubectl", "connect", "python", "service"}
    assert {tool.name for tool in served} == names
    untitled = [tool.name for tool in served if not tool.title]
    assert not untitled
    assert len({tool.title for tool in served}) == len(names)


def _untyped(schema: Any, path: str = "") -> list[str]:
    """Places in a JSON schema that say nothing of their type."""
    if not isinstance(schema, dict) or "$ref" in schema:
        return []
    found = []
    if not {"type", "anyOf", "oneOf", "allOf", "enum", "const"} & set(schema):
        found.append(path or "(root)")
    for key in ("anyOf", "oneOf", "allOf"):
        for index, branch in enumerate(schema.get(key, [])):
            found += _untyped(branch, f"{path}.{key}[{index}]")
    for name, field in schema.get("properties", {}).items():
        found += _untyped(field, f"{path}.{name}")
    for key in ("items", "additionalProperties"):
        found += _untyped(schema.get(key), f"{path}.{key}")
    for name, definition in schema.get("$defs", {}).items():
        found += _untyped(definition, f"$defs.{name}")
    return found


async def test_every_output_field_has_a_type() -> None:
    async with (
        Client(practice_server(PracticeSession())) as practice,
        Client(evaluation_server(labless_tools())) as evaluation,
    ):
        served = (await practice.list_tools()).tools + (await evaluation.list_tools()).tools
    for tool in served:
        assert tool.output_schema and tool.output_schema["type"] == "object", tool.name
        assert _untyped(tool.output_schema) == [], tool.name
        assert _untyped(tool.input_schema) == [], tool.name
    untyped_any = {"type": "object", "properties": {"parsed": {}}}
    assert _untyped(untyped_any) == [".parsed"], "the check finds a field typed Any"


def test_show_parses_any_json_value_into_a_typed_field() -> None:
    parsed = ShowResult.model_json_schema()["properties"]["parsed"]
    assert [branch["type"] for branch in parsed["anyOf"]] == [
        "object", "array", "string", "number", "boolean", "null",
    ]  # fmt: skip
    for value in ({"a": [1, None]}, [{"ifname": "lo"}], "text", 3.5, True, None):
        shown = ShowResult(device="r1", command="c", text="", parsed=value)
        assert shown.parsed == value


async def test_list_families_is_one_structured_result() -> None:
    async with Client(practice_server(PracticeSession())) as client:
        result = await client.call_tool("list_families", {})
    assert not result.is_error and len(result.content) == 1
    families = result.structured_content["families"]  # type: ignore[index]
    assert [f["name"] for f in families] == list(registry.families())
    assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]
    assert {"name", "kind", "summary", "levels"} == set(families[0])


async def test_resources_have_readable_names_and_titles() -> None:
    for server in (practice_server(PracticeSession()), evaluation_server(labless_tools())):
        async with Client(server) as client:
            resources = (await client.list_resources()).resources
        named = {(str(r.uri), r.name, r.title) for r in resources}
        assert named == {
            ("netdojo://brief", "brief", "Task brief"),
            ("netdojo://topology", "topology", "Network topology"),
        }


async def test_a_json_manifest_reaches_kubectl_as_the_text_it_was() -> None:
    """An MCP server parses a JSON string given for a field not typed `str` alone; a manifest
    written as JSON must still reach the tool as text (here it gets past its arguments, to
    find no lab)."""
    manifest = json.dumps({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy"})
    tools = [*STANDARD_TOOLS, "kubectl"]
    async with Client(evaluation_server(labless_tools(), tools)) as client:
        result = await client.call_tool(
            "kubectl", {"command": "apply -f - --dry-run=server", "manifest": manifest}
        )
    text = " ".join(getattr(part, "text", "") for part in result.content)
    assert result.is_error and "manifest" not in text, text
