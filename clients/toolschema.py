"""Tool schemas as a model sees them, and the checks on a model's arguments against them.

A model reads the schema it is sent: pydantic's generated ``title`` keys (``showArguments``,
``Device``) only invite it to copy them as argument names, so they are left out. The MCP server
drops arguments it does not know without a word, so a call is checked here first and the model
told which arguments are unknown, missing or of the wrong type, with the schema it should follow.
"""

from __future__ import annotations

import json
from typing import Any

from netdojo.tools.contract import ListedTool

SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions")
JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


def without_titles(schema: Any) -> Any:
    """``schema`` without its ``title`` keywords, at every depth (a property named ``title``
    stays)."""
    if isinstance(schema, list):
        return [without_titles(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    kept: dict[str, Any] = {}
    for key, value in schema.items():
        if key in SCHEMA_MAPS and isinstance(value, dict):
            kept[key] = {name: without_titles(sub) for name, sub in value.items()}
        elif key == "title" and isinstance(value, str):
            continue
        else:
            kept[key] = without_titles(value)
    return kept


def openai_function(tool: ListedTool) -> dict[str, Any]:
    """``tool`` as an OpenAI chat-completions function."""
    parameters = without_titles(tool.input_schema) or {"type": "object", "properties": {}}
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description or "",
            "parameters": parameters,
        },
    }


def expected(tool: ListedTool) -> str:
    """The arguments ``tool`` takes, as the model should write them."""
    schema = without_titles(tool.input_schema)
    shown = {key: schema[key] for key in ("properties", "required") if key in schema}
    return json.dumps(shown, ensure_ascii=False)


def argument_problems(tool: ListedTool, arguments: dict[str, Any]) -> list[str]:
    """What is wrong with ``arguments`` for ``tool``: unknown, missing or mistyped ones."""
    schema = tool.input_schema
    properties = schema.get("properties")
    problems: list[str] = []
    if isinstance(properties, dict) and not schema.get("additionalProperties"):
        unknown = [name for name in arguments if name not in properties]
        if unknown:
            problems.append(f"unknown argument{'s' * (len(unknown) > 1)} {_names(unknown)}")
    missing = [name for name in schema.get("required") or [] if name not in arguments]
    if missing:
        problems.append(f"missing required argument{'s' * (len(missing) > 1)} {_names(missing)}")
    for name, value in arguments.items():
        sub = properties.get(name) if isinstance(properties, dict) else None
        if isinstance(sub, dict):
            problem = value_problem(value, sub)
            if problem:
                problems.append(f"{name!r} {problem}")
    return problems


def value_problem(value: Any, schema: dict[str, Any]) -> str | None:
    """Why ``value`` does not fit ``schema`` (its type, enum or alternatives), if it does not.
    Numbers written as strings pass, as the server's own validation accepts them."""
    alternatives = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(alternatives, list):
        if any(value_problem(value, option) is None for option in alternatives if option):
            return None
        kinds = [
            str(option.get("type", "?")) for option in alternatives if isinstance(option, dict)
        ]
        return f"must be {' or '.join(kinds)}, not {_kind(value)}"
    enum = schema.get("enum")
    if isinstance(enum, list) and value not in enum:
        return f"must be one of {json.dumps(enum)}, not {json.dumps(value)}"
    declared = schema.get("type")
    kinds = declared if isinstance(declared, list) else [declared] if declared else []
    if kinds and not any(_fits(value, str(kind)) for kind in kinds):
        return f"must be {' or '.join(map(str, kinds))}, not {_kind(value)}"
    return None


def _fits(value: Any, kind: str) -> bool:
    if kind in ("integer", "number") and isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return False
        return kind == "number" or number.is_integer()
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    types = JSON_TYPES.get(kind)
    if types is None:
        return True
    if isinstance(value, bool) and kind != "boolean":
        return False
    return isinstance(value, types)


def _kind(value: Any) -> str:
    for kind in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if isinstance(value, JSON_TYPES[kind]) and not (
            isinstance(value, bool) and kind != "boolean"
        ):
            return f"{kind} {json.dumps(value)[:40]}"
    return type(value).__name__


def _names(names: list[str]) -> str:
    return ", ".join(repr(name) for name in names)
