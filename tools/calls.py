"""A tool called by name over an episode's tools, answered as the MCP server answers it.

A front end that is not an MCP server (the step environment of `netdojo.judges.environment`)
calls tools through here: a name the episode does not offer, arguments its tool's model
refuses and a call the tool refuses become the tool-level error texts an MCP client reads, and
a result becomes the same structured content. The texts follow the MCP SDK's wording.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from netdojo.errors import NetdojoError
from netdojo.tools.contract import ListedTool
from netdojo.tools.lab_tools import LabTools, ToolFailure
from netdojo.tools.registry import tool_spec, tool_specs
from netdojo.tools.spec import json_text_parsed

logger = logging.getLogger(__name__)


class CallResult(BaseModel):
    """A call's answer: its structured result, or the error text an MCP client is shown."""

    result: dict[str, Any] | None = None
    error: str | None = None

    @property
    def is_error(self) -> bool:
        return self.error is not None


def refusal(tool: str, message: str) -> str:
    """A call of ``tool`` refused with ``message``, worded as an MCP server words it."""
    return f"Error executing tool {tool}: {message}"


def unknown(tool: str) -> str:
    """A call of a tool the episode does not offer, worded as an MCP server words it."""
    return f"Unknown tool: {tool}"


def listed_tools(names: Sequence[str]) -> list[ListedTool]:
    """The tools of these names as an MCP server lists them: name, description, input schema."""
    return [
        ListedTool(name=spec.name, description=spec.description, input_schema=spec.input_schema())
        for spec in tool_specs(names)
    ]


async def call_tool(
    tools: LabTools, offered: Sequence[str], name: str, arguments: Mapping[str, Any]
) -> CallResult:
    """Call tool ``name`` of those ``offered``; every failure is an error text, as over MCP
    (an unexpected one without its detail, which is logged)."""
    if name not in offered:
        return CallResult(error=unknown(name))
    spec = tool_spec(name)
    try:
        checked = spec.checked(json_text_parsed(spec.arguments, arguments))
        result: BaseModel = await spec.run(tools, checked)
    except (NetdojoError, ToolFailure) as exc:
        return CallResult(error=refusal(name, str(exc)))
    except Exception:
        logger.exception("tool %r raised an unexpected exception", name)
        return CallResult(error=f"Error executing tool {name}")
    return CallResult(result=result.model_dump(mode="json", by_alias=True))
