"""The MCP front end: one episode's lab tools (evaluation) or a practice session.

Evaluation mode serves the lab tools and `submit`, nothing that grades or reveals. Practice
mode adds `list_families`, `start_scenario`, `brief`, `reset`, `grade` and `end`; the lab
tools then act on the current scenario. The tools over a lab come from the tool registry, by
name, each with its arguments model as its input schema.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any, TypeVar

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field, create_model

from netdojo import __version__
from netdojo.errors import NetdojoError
from netdojo.reports.records import Grade
from netdojo.scenarios.model import LAB_TOOLS, STANDARD_TOOLS, PublicHalf
from netdojo.servers.practice import BriefView, EndResult, FamilyInfo, PracticeSession, Started
from netdojo.tools.contract import EpisodeView
from netdojo.tools.lab_tools import LabTools, ToolFailure
from netdojo.tools.registry import tool_spec, tool_specs
from netdojo.tools.spec import ToolSpec
from netdojo.tools.topology import mermaid

T = TypeVar("T")
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)
INSTRUCTIONS = (
    "Tools over a live emulated network of FRR routers and Linux hosts. Inspect it with "
    "topology, show, ping, traceroute and capture; change it with configure (FRR lines) and "
    "execute (allowlisted Linux commands)."
)


async def _run(call: Awaitable[T]) -> T:
    """Run a tool; the errors a client should read become tool errors."""
    try:
        return await call
    except (NetdojoError, ToolFailure) as exc:
        raise ToolError(str(exc)) from None


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
    """One tool whose input schema and argument check are its arguments model.

    `MCPServer.add_tool` would derive both from a function signature; a `Tool` built here
    validates with the model itself (over the SDK's argument base, which hands the handler
    the fields one level deep).
    """

    async def call(**arguments: Any) -> BaseModel:
        return await _run(spec.run(current(), spec.arguments.model_validate(arguments)))

    checked = create_model(f"{spec.name}Arguments", __base__=(spec.arguments, ArgModelBase))
    return Tool(
        fn=call,
        name=spec.name,
        description=spec.description,
        parameters=spec.input_schema(),
        fn_metadata=FuncMetadata(arg_model=checked, output_model=spec.result),
        is_async=True,
        annotations=ToolAnnotations(
            read_only_hint=spec.read_only, destructive_hint=spec.destructive, open_world_hint=False
        ),
    )


def evaluation_server(tools: LabTools, tool_names: Sequence[str] = STANDARD_TOOLS) -> MCPServer:
    """One episode: its tools (the lab tools and `submit`); nothing grades or reveals."""
    server = MCPServer(
        "netdojo",
        version=__version__,
        instructions=INSTRUCTIONS,
        tools=served_tools(lambda: tools, tool_names),
    )

    @server.resource("netdojo://brief", mime_type="text/plain")
    def brief() -> str:
        """The task."""
        return tools.public.brief

    @server.resource("netdojo://topology", mime_type="text/markdown")
    def topology_resource() -> str:
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


def practice_server(session: PracticeSession) -> MCPServer:
    """Practice: pick a scenario, work on it with the lab tools, grade it, start another."""

    def current() -> LabTools:
        session.touch()
        if session.episode is None:
            raise ToolError("no scenario is running; call start_scenario first")
        return session.episode.tools

    server = MCPServer(
        "netdojo-practice",
        version=__version__,
        instructions=INSTRUCTIONS,
        tools=served_tools(current),
    )

    @server.tool(annotations=READ_ONLY)
    async def list_families() -> list[FamilyInfo]:
        """The scenario families: kind (reactive repair or constructive build), summary, levels."""
        return session.families()

    @server.tool(annotations=DESTRUCTIVE)
    async def start_scenario(
        family: Annotated[str, Field(description="a family from list_families")],
        level: Annotated[int, Field(ge=1, le=3, description="difficulty and size, 1-3")] = 1,
        seed: Annotated[int | None, Field(ge=0, description="omit for a random instance")] = None,
        ctx: Context | None = None,
    ) -> Started:
        """Deploy a fresh lab for a scenario (replacing any running one) and return its brief."""
        return await _run(session.start(family, level, seed, _progress(ctx)))

    @server.tool(annotations=READ_ONLY)
    async def brief() -> BriefView:
        """The current scenario's brief and constraints."""
        return await _run(session.brief())

    @server.tool(annotations=DESTRUCTIVE)
    async def reset(ctx: Context | None = None) -> Started:
        """Start the current scenario again on a fresh lab."""
        return await _run(session.reset(_progress(ctx)))

    @server.tool(annotations=READ_ONLY)
    async def grade() -> Grade:
        """Run the scenario's hidden tests on the live network; each with pass/fail evidence."""
        return await _run(session.grade())

    @server.tool(annotations=DESTRUCTIVE)
    async def end() -> EndResult:
        """Tear down the current scenario's lab."""
        return await _run(session.end())

    @server.resource("netdojo://brief", mime_type="text/plain")
    def brief_resource() -> str:
        """The current task."""
        if session.episode is None:
            raise ResourceNotFoundError("no scenario is running")
        return session.episode.scenario.public.brief

    @server.resource("netdojo://topology", mime_type="text/markdown")
    def topology_resource() -> str:
        """The current topology as a Mermaid diagram and a table of devices."""
        if session.episode is None:
            raise ResourceNotFoundError("no scenario is running")
        return _topology_markdown(session.episode.scenario.public)

    return server


def _progress(ctx: Context | None) -> Callable[[float, str], Awaitable[None]]:
    async def report(elapsed: float, message: str) -> None:
        if ctx is not None:
            await ctx.report_progress(elapsed, None, message=message)

    return report
