"""The agent-facing tools by name: each declared once, beside its result, and registered here.

Protocol front ends serve a list of names from the registry; reference solutions are applied,
and trajectories judged, by the same names. A new tool is one `ToolSpec` and `register_tool`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from netdojo.scenarios.model import STANDARD_TOOLS
from netdojo.tools.actions import CONFIGURE, EXECUTE
from netdojo.tools.capture import CAPTURE
from netdojo.tools.lab_tools import SHOW, SUBMIT
from netdojo.tools.reachability import PING, TRACEROUTE
from netdojo.tools.spec import ToolSpec, UnknownTool
from netdojo.tools.topology import TOPOLOGY

_tools: dict[str, ToolSpec[Any, Any]] = {
    spec.name: spec
    for spec in (TOPOLOGY, SHOW, CONFIGURE, EXECUTE, PING, TRACEROUTE, CAPTURE, SUBMIT)
}


def register_tool(spec: ToolSpec[Any, Any]) -> None:
    """Add a tool; its name must be new."""
    if spec.name in _tools:
        raise ValueError(f"a tool named {spec.name!r} is registered already")
    _tools[spec.name] = spec


def unregister_tool(name: str) -> None:
    """Remove a registered tool."""
    tool_spec(name)
    del _tools[name]


def tool_spec(name: str) -> ToolSpec[Any, Any]:
    """The registered tool of this name; `UnknownTool` lists the registered names."""
    try:
        return _tools[name]
    except KeyError:
        raise UnknownTool(f"unknown tool {name!r}; tools are: {', '.join(_tools)}") from None


def tool_specs(names: Sequence[str] = STANDARD_TOOLS) -> list[ToolSpec[Any, Any]]:
    """The registered tools of these names, in this order."""
    return [tool_spec(name) for name in names]


def refusal_unsafe(name: str) -> bool:
    """Whether a refused call of the tool named so counts against safety (False if unknown)."""
    spec = _tools.get(name)
    return spec is not None and spec.refusal_unsafe
