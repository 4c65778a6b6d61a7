"""Tool schemas as the model sees them, and the argument checks against them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import Client

from netdojo.clients.session import ToolSession
from netdojo.clients.toolschema import (
    argument_problems,
    expected,
    openai_function,
    value_problem,
    without_titles,
)
from netdojo.tools.contract import ListedTool
from tests.llm_fakes import fake_lab

PING = ListedTool(
    name="ping",
    description="Send echo requests.",
    input_schema={
        "title": "pingArguments",
        "type": "object",
        "properties": {
            "source": {"title": "Source", "type": "string", "description": "a device"},
            "destination": {"title": "Destination", "type": "string"},
            "count": {"title": "Count", "type": "integer", "default": 3},
            "title": {"title": "Title", "anyOf": [{"type": "string"}, {"type": "null"}]},
            "mode": {"enum": ["fast", "slow"]},
        },
        "required": ["source", "destination"],
    },
)


def test_titles_go_at_every_depth_but_a_property_named_title_stays() -> None:
    schema = without_titles(PING.input_schema)

    assert "title" not in schema
    assert set(schema["properties"]) == {"source", "destination", "count", "title", "mode"}
    assert schema["properties"]["source"] == {"type": "string", "description": "a device"}
    assert schema["properties"]["title"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    nested = {"$defs": {"Kind": {"title": "Kind", "enum": ["a"]}}, "items": [{"title": "X"}]}
    assert without_titles(nested) == {"$defs": {"Kind": {"enum": ["a"]}}, "items": [{}]}


def test_a_tool_becomes_an_openai_function_without_titles() -> None:
    function = openai_function(PING)

    assert function["type"] == "function"
    assert function["function"]["name"] == "ping"
    assert function["function"]["description"] == "Send echo requests."
    assert function["function"]["parameters"]["required"] == ["source", "destination"]
    assert '"title": "' not in json.dumps(function)
    bare = openai_function(ListedTool(name="topology"))
    assert bare["function"]["parameters"] == {"type": "object", "properties": {}}


@pytest.mark.parametrize(
    ("arguments", "problems"),
    [
        ({"source": "h1", "destination": "h2"}, []),
        ({"source": "h1", "destination": "h2", "count": "5", "title": None}, []),
        ({"source": "h1", "destination": "h2", "count": 5.0, "mode": "fast"}, []),
        ({"pingArguments": {}}, ["unknown argument 'pingArguments'", "missing required arguments"]),
        ({"source": "h1"}, ["missing required argument 'destination'"]),
        ({"source": 1, "destination": "h2"}, ["'source' must be string, not integer 1"]),
        ({"source": "h1", "destination": "h2", "count": "x"}, ["'count' must be integer"]),
        ({"source": "h1", "destination": "h2", "count": True}, ["'count' must be integer"]),
        ({"source": "h1", "destination": "h2", "count": 2.5}, ["'count' must be integer"]),
        ({"source": "h1", "destination": "h2", "title": 3}, ["must be string or null"]),
        ({"source": "h1", "destination": "h2", "mode": "x"}, ['must be one of ["fast", "slow"]']),
    ],
)
def test_argument_problems_name_each_argument(
    arguments: dict[str, Any], problems: list[str]
) -> None:
    found = argument_problems(PING, arguments)

    assert len(found) == len(problems)
    for problem, text in zip(problems, found, strict=True):
        assert problem in text


def test_a_schema_open_to_more_arguments_takes_them() -> None:
    open_schema = ListedTool(
        name="x", input_schema={"properties": {"a": {}}, "additionalProperties": True}
    )
    assert argument_problems(open_schema, {"a": 1, "b": 2}) == []
    assert argument_problems(ListedTool(name="y"), {"b": 2}) == []
    assert value_problem({"k": 1}, {"type": ["object", "null"]}) is None


def test_expected_shows_the_properties_and_required_without_titles() -> None:
    shown = json.loads(expected(PING))
    assert set(shown) == {"properties", "required"}
    assert shown["properties"]["count"] == {"type": "integer", "default": 3}


@pytest.mark.anyio
async def test_a_tool_session_lists_the_server_tools_with_their_schemas() -> None:
    async with Client(fake_lab([])) as client:
        tools = {tool.name: tool for tool in await ToolSession(client).list_tools()}

    assert set(tools) == {"topology", "show", "ping", "submit"}
    assert tools["show"].description == "Read state."
    assert tools["ping"].input_schema["required"] == ["source", "destination"]
    assert argument_problems(tools["ping"], {"source": "h1", "destination": "h2", "count": 1}) == []
