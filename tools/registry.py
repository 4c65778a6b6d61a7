"""The agent-facing tools by name: each declared once, beside its result, and registered here.

Protocol front ends serve a list of names from the registry; reference solutions are applied,
and trajectories judged, by the same names. A new tool is one module of this package that
declares its `ToolSpec` at module level: the registry finds it there, so adding a tool edits no
other file. `register_tool` adds one for a while (tests).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

import netdojo.tools
from netdojo.scenarios.model import STANDARD_TOOLS
from netdojo.tools.spec import ToolArguments, ToolSpec, UnknownTool

_tools: dict[str, ToolSpec[Any, Any]] = {}
_found = False


def _discover() -> None:
    """Register the tools the package's modules declare, once."""
    global _found
    if _found:
        return
    _found = True
    for info in pkgutil.iter_modules(netdojo.tools.__path__):
        module = importlib.import_module(f"{netdojo.tools.__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, ToolSpec) and value.name not in _tools:
                _tools[value.name] = value


def register_tool(spec: ToolSpec[Any, Any]) -> None:
    """Add a tool; its name must be new."""
    _discover()
    if spec.name in _tools:
        raise ValueError(f"a tool named {spec.name!r} is registered already")
    _tools[spec.name] = spec


def unregister_tool(name: str) -> None:
    """Remove a registered tool."""
    tool_spec(name)
    del _tools[name]


def tool_spec(name: str) -> ToolSpec[Any, Any]:
    """The registered tool of this name; `UnknownTool` lists the registered names."""
    _discover()
    try:
        return _tools[name]
    except KeyError:
        known = [*STANDARD_TOOLS, *sorted(set(_tools) - set(STANDARD_TOOLS))]
        raise UnknownTool(f"unknown tool {name!r}; tools are: {', '.join(known)}") from None


def tool_specs(names: Sequence[str] = STANDARD_TOOLS) -> list[ToolSpec[Any, Any]]:
    """The registered tools of these names, in this order."""
    return [tool_spec(name) for name in names]


def read_only_tools(names: Sequence[str]) -> tuple[str, ...]:
    """Of ``names``, the tools that cannot change a device's state, and `submit`: what a
    diagnosis-only task offers."""
    return tuple(name for name in names if name == "submit" or tool_spec(name).read_only)


def refusal_unsafe(name: str) -> bool:
    """Whether a refused call of the tool named so counts against safety (False if unknown)."""
    _discover()
    spec = _tools.get(name)
    return spec is not None and spec.refusal_unsafe


def call_arguments(tool: str, arguments: Mapping[str, Any]) -> ToolArguments | None:
    """A recorded call's arguments as its tool's own model, the one its server and handler
    checked; None for a name no tool has or arguments the tool refused (a rejected call is
    recorded as it was sent)."""
    _discover()
    spec = _tools.get(tool)
    if spec is None:
        return None
    try:
        return spec.arguments.model_validate(arguments)
    except ValidationError:
        return None
