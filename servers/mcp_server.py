"""The MCP front end: one episode's lab tools (evaluation) or a practice session.

Evaluation mode serves the lab tools and `submit`, nothing that grades or reveals. Practice
mode adds `list_families`, `start_scenario`, `brief`, `reset`, `grade` and `end`; the lab
tools then act on the current scenario. The tools over a lab come from the tool registry, by
name. Every tool has a title, and its arguments model is both its input schema and the check of
every call, whose refusal names each argument, the rule it broke and the value given.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final, TypeVar

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.types import ToolAnnotations
from pydantic import BaseModel, create_model

from netdojo import __version__
from netdojo.errors import NetdojoError
from netdojo.reports.records import Grade
from netdojo.scenarios import registry
from netdojo.scenarios.model import LAB_TOOLS, STANDARD_TOOLS, PublicHalf
from netdojo.servers.practice import (
    BriefView,
    EndResult,
    Families,
    NoArguments,
    PracticeSession,
    StartArguments,
    Started,
    start_arguments,
)
from netdojo.tools.contract import EpisodeView
from netdojo.tools.lab_tools import LabTools, ToolFailure
from netdojo.tools.registry import tool_spec, tool_specs
from netdojo.tools.spec import ToolArguments, ToolSpec, json_text_parsed
from netdojo.tools.topology import mermaid

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)
INSTRUCTIONS = (
    "Tools over a live emulated network of FRR routers and Linux hosts. Inspect it with "
    "topology, show, ping, traceroute and capture; change it with configure (FRR lines) and "
    "execute (allowlisted Linux commands)."
)
BRIEF_TITLE = "Task brief"
TOPOLOGY_TITLE = "Network topology"
LOG_LEVEL: Final = "WARNING"  # the SDK's start and stop notes would fill a person's terminal
Args = TypeVar("Args", bound=ToolArguments)
Handler = Callable[[Args, Context], Awaitable[BaseModel]]


class _ArgumentsAsGiven(FuncMetadata):
    """Hands a tool's handler the arguments as the client sent them (with JSON text for a list
    or an object parsed, as every front end does), for the handler to check with the tool's
    model: a refusal then names the argument, the rule and the value, as the tools' other
    errors do."""

    def validate_arguments(self, arguments_to_validate: dict[str, Any]) -> dict[str, Any]:
        return {"arguments": json_text_parsed(self.arg_model, arguments_to_validate)}


def _tool(
    name: str,
    title: str,
    description: str,
    model: type[Args],
    result: type[BaseModel],
    annotations: ToolAnnotations,
    handler: Handler[Args],
) -> Tool:
    """One served tool: its arguments model is its input schema and checks every call; the
    errors a client should read become tool errors."""

    async def call(arguments: dict[str, Any], ctx: Context) -> BaseModel:
        try:
            return await handler(model.checked(arguments), ctx)
        except (NetdojoError, ToolFailure) as exc:
            raise ToolError(str(exc)) from None

    # The SDK's argument base, which its metadata requires.
    parsed = create_model(f"{name}Arguments", __base__=(model, ArgModelBase))
    return Tool(
        fn=call,
        name=name,
        title=title,
        description=description,
        parameters=model.model_json_schema(),
        fn_metadata=_ArgumentsAsGiven(
            arg_model=parsed, output_model=result, output_schema=result.model_json_schema()
        ),
        is_async=True,
        context_kwarg="ctx",
        annotations=annotations,
    )


def _topology_markdown(public: PublicHalf) -> str:
    table = ["| device | role | interfaces (link, address) |", "|---|---|---|"]
    for device in public.devices:
        ports = [
            f"{i.name} ({i.link}{', ' + i.address if i.address else ''})" for i in device.interfaces
        ]
        table.append(f"| {device.name} | {device.role} | {', '.join(ports)} |")
    return "\n".join(["```mermaid", mermaid(public), "```", "", *table, ""])


def served_tools(current: Callable[[], LabTools], names: Sequence[str] = LAB_TOOLS) -> list[Tool]:
    """The registered tools of these names, for `MCPServer(tools=...)`; ``current`` gives the
    episode's tools or raises `ToolError`."""
    return [_served(tool_spec(name), current) for name in names]


def _served(spec: ToolSpec[Any, Any], current: Callable[[], LabTools]) -> Tool:
    async def run(arguments: Any, ctx: Context) -> BaseModel:
        result: BaseModel = await spec.run(current(), arguments)
        return result

    annotations = ToolAnnotations(
        read_only_hint=spec.read_only, destructive_hint=spec.destructive, open_world_hint=False
    )
    return _tool(
        spec.name, spec.title, spec.description, spec.arguments, spec.result, annotations, run
    )


def _server(name: str, tools: list[Tool]) -> MCPServer:
    return MCPServer(
        name, version=__version__, instructions=INSTRUCTIONS, tools=tools, log_level=LOG_LEVEL
    )


def evaluation_server(tools: LabTools, tool_names: Sequence[str] = STANDARD_TOOLS) -> MCPServer:
    """One episode: its tools (the lab tools and `submit`); nothing grades or reveals."""
    server = _server("netdojo", served_tools(lambda: tools, tool_names))

    @server.resource("netdojo://brief", name="brief", title=BRIEF_TITLE, mime_type="text/plain")
    def brief() -> str:
        """The task."""
        return tools.public.brief

    @server.resource(
        "netdojo://topology", name="topology", title=TOPOLOGY_TITLE, mime_type="text/markdown"
    )
    def topology() -> str:
        """The topology as a Mermaid diagram and a table of devices."""
        return _topology_markdown(tools.public)

    return server


def episode_server(view: EpisodeView) -> MCPServer:
    """The evaluation server of an episode that runs in this process, built from its view's
    handle with the tools the view names."""
    if view.handle is None:
        raise ValueError(f"episode {view.episode_id!r} has no tools in this process")
    return evaluation_server(view.handle, view.tool_names or STANDARD_TOOLS)


def evaluation_tools(
    tool_names: Sequence[str] = STANDARD_TOOLS,
) -> tuple[str, list[dict[str, Any]]]:
    """The instructions and tools an evaluated agent is served, as OpenAI-style definitions."""
    tools = [
        {
            "type": "function",
            "function": {
                "name": spec.name,
                "description": spec.description,
                "parameters": spec.input_schema(),
            },
        }
        for spec in tool_specs(tool_names)
    ]
    return INSTRUCTIONS, tools


def practice_tool_names() -> list[str]:
    """Every tool over a lab that some family offers, the standard ones first; a call is
    refused when the running scenario's family does not offer it."""
    offered = (name for f in registry.families().values() for name in f.tools)
    return [name for name in dict.fromkeys([*LAB_TOOLS, *offered]) if name != "submit"]


def practice_server(session: PracticeSession) -> MCPServer:
    """Practice: pick a scenario, work on it with the lab tools, grade it, start another."""

    def offering(name: str) -> Callable[[], LabTools]:
        """The running episode's tools, when its family offers tool ``name``."""

        def current() -> LabTools:
            session.touch()
            if session.episode is None:
                raise ToolError("no scenario is running; call start_scenario first")
            offered = registry.family(session.episode.scenario.family).tools
            if name not in offered:
                others = ", ".join(t for t in offered if t != "submit")
                raise ToolError(f"this scenario does not offer {name}; it offers {others}")
            return session.episode.tools

        return current

    async def list_families(_: NoArguments, ctx: Context) -> Families:
        return session.families()

    async def start_scenario(given: StartArguments, ctx: Context) -> Started:
        return await session.start(given.family, given.level, given.seed, _progress(ctx))

    async def brief(_: NoArguments, ctx: Context) -> BriefView:
        return await session.brief()

    async def reset(_: NoArguments, ctx: Context) -> Started:
        return await session.reset(_progress(ctx))

    async def grade(_: NoArguments, ctx: Context) -> Grade:
        return await session.grade()

    async def end(_: NoArguments, ctx: Context) -> EndResult:
        return await session.end()

    starting = start_arguments(list(registry.families()))
    practice = [
        _tool("list_families", "List scenario families", "The scenario families: kind "
              "(reactive repair or constructive build), summary, levels.",
              NoArguments, Families, READ_ONLY, list_families),
        _tool("start_scenario", "Start a scenario", "Deploy a fresh lab for a scenario "
              "(replacing any running one) and return its brief.",
              starting, Started, DESTRUCTIVE, start_scenario),
        _tool("brief", "Read the brief", "The current scenario's brief and constraints.",
              NoArguments, BriefView, READ_ONLY, brief),
        _tool("reset", "Restart the scenario", "Start the current scenario again on a fresh lab.",
              NoArguments, Started, DESTRUCTIVE, reset),
        _tool("grade", "Grade the work", "Run the scenario's hidden tests on the live network; "
              "each with pass/fail evidence.", NoArguments, Grade, READ_ONLY, grade),
        _tool("end", "End the scenario", "Tear down the current scenario's lab.",
              NoArguments, EndResult, DESTRUCTIVE, end),
    ]  # fmt: skip
    lab_tools = [_served(tool_spec(name), offering(name)) for name in practice_tool_names()]
    server = _server("netdojo-practice", [*lab_tools, *practice])

    @server.resource("netdojo://brief", name="brief", title=BRIEF_TITLE, mime_type="text/plain")
    def brief_text() -> str:
        """The current task."""
        if session.episode is None:
            raise ResourceNotFoundError("no scenario is running")
        return session.episode.scenario.public.brief

    @server.resource(
        "netdojo://topology", name="topology", title=TOPOLOGY_TITLE, mime_type="text/markdown"
    )
    def topology() -> str:
        """The current topology as a Mermaid diagram and a table of devices."""
        if session.episode is None:
            raise ResourceNotFoundError("no scenario is running")
        return _topology_markdown(session.episode.scenario.public)

    return server


def _progress(ctx: Context) -> Callable[[float, str], Awaitable[None]]:
    async def report(elapsed: float, message: str) -> None:
        await ctx.report_progress(elapsed, None, message=message)

    return report
