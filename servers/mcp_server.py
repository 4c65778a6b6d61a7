"""The MCP front end: one episode's lab tools (evaluation) or a practice session.

Evaluation mode serves the lab tools and `submit`, nothing that grades or reveals. Practice
mode adds `list_families`, `start_scenario`, `brief`, `reset`, `grade` and `end`; the lab
tools then act on the current scenario.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, TypeVar

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from netdojo import __version__
from netdojo.labs.errors import NetdojoError
from netdojo.reports.records import Grade
from netdojo.scenarios.model import PublicHalf
from netdojo.servers.practice import BriefView, EndResult, FamilyInfo, PracticeSession, Started
from netdojo.tools.actions import ConfigureResult, ExecuteResult
from netdojo.tools.allowlist import ALLOWED_FORMS
from netdojo.tools.capture import CaptureResult
from netdojo.tools.lab_tools import LabTools, ShowResult, SubmitResult, ToolFailure
from netdojo.tools.reachability import PingResult, TracerouteResult
from netdojo.tools.read_allowlist import READ_FORMS
from netdojo.tools.topology import TopologyView, mermaid

T = TypeVar("T")
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)
INSTRUCTIONS = (
    "Tools over a live emulated network of FRR routers and Linux hosts. Inspect it with "
    "topology, show, ping, traceroute and capture; change it with configure (FRR lines) and "
    "execute (allowlisted Linux commands)."
)

Device = Annotated[str, Field(description="a device name from topology()")]


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


def add_lab_tools(server: MCPServer, current: Callable[[], LabTools]) -> None:
    """Register the lab tools; ``current`` gives the episode's tools or raises `ToolError`."""

    @server.tool(annotations=READ_ONLY)
    async def topology() -> TopologyView:
        """The network: devices with roles and interfaces (addresses where given), links, and a
        Mermaid diagram."""
        return await _run(current().topology())

    @server.tool(annotations=READ_ONLY, description=_show_description())
    async def show(
        device: Device,
        command: Annotated[str, Field(description="a read-only command, e.g. `show ip route`")],
    ) -> ShowResult:
        return await _run(current().show(device, command))

    @server.tool(annotations=DESTRUCTIVE)
    async def configure(
        device: Device,
        lines: Annotated[
            list[str],
            Field(
                description="FRR configuration lines as typed in `configure terminal`, e.g. "
                "['router ospf', ' network 10.0.0.0/30 area 0']"
            ),
        ],
    ) -> ConfigureResult:
        """Apply FRR configuration lines through vtysh in one go; each line is reported as
        accepted or with FRR's error."""
        return await _run(current().configure(device, lines))

    @server.tool(annotations=DESTRUCTIVE, description=_execute_description())
    async def execute(
        device: Device,
        command: Annotated[str, Field(description="one command, e.g. `ip link set eth0 up`")],
    ) -> ExecuteResult:
        return await _run(current().execute(device, command))

    @server.tool(annotations=READ_ONLY)
    async def ping(
        source: Device,
        destination: Annotated[str, Field(description="an IP address or a device name")],
        count: Annotated[int, Field(ge=1, le=10, description="echo requests to send")] = 3,
    ) -> PingResult:
        """Ping from a device; returns loss and round-trip times."""
        return await _run(current().ping(source, destination, count))

    @server.tool(annotations=READ_ONLY)
    async def traceroute(
        source: Device,
        destination: Annotated[str, Field(description="an IP address or a device name")],
    ) -> TracerouteResult:
        """The hops from a device to a destination (one probe per hop, numeric)."""
        return await _run(current().traceroute(source, destination))

    @server.tool(annotations=READ_ONLY)
    async def capture(
        device: Device,
        interface: Annotated[str, Field(description="eth<N>, lo or any")],
        filter: Annotated[str, Field(description="a pcap filter, e.g. `icmp or proto ospf`")] = "",
        seconds: Annotated[float, Field(ge=0.5, le=30, description="how long to listen")] = 5.0,
        max_packets: Annotated[int, Field(ge=1, le=200, description="stop after this many")] = 50,
    ) -> CaptureResult:
        """Capture packets on a device interface; returns decoded packet summaries."""
        return await _run(current().capture(device, interface, filter, seconds, max_packets))


def _show_description() -> str:
    forms = "\n".join(f"- {form}" for form in READ_FORMS)
    return (
        "Read a device's state. The result has the text and, when the command has a JSON form, "
        f"the parsed JSON. Allowed forms:\n{forms}"
    )


def _execute_description() -> str:
    forms = "\n".join(f"- {form}" for form in ALLOWED_FORMS)
    return (
        "Run one state-changing command in a device, as an argument vector (no shell). "
        f"Allowed forms:\n{forms}"
    )


def evaluation_server(tools: LabTools) -> MCPServer:
    """One episode: the lab tools and `submit`; nothing grades or reveals."""
    server = MCPServer("netdojo", version=__version__, instructions=INSTRUCTIONS)
    add_lab_tools(server, lambda: tools)

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
    async def submit(
        summary: Annotated[str, Field(description="what you found and changed", max_length=20000)],
    ) -> SubmitResult:
        """Declare the task done; the network is then judged and no further calls are taken."""
        return await _run(tools.submit(summary))

    @server.resource("netdojo://brief", mime_type="text/plain")
    def brief() -> str:
        """The task."""
        return tools.public.brief

    @server.resource("netdojo://topology", mime_type="text/markdown")
    def topology_resource() -> str:
        """The topology as a Mermaid diagram and a table of devices."""
        return _topology_markdown(tools.public)

    return server


def practice_server(session: PracticeSession) -> MCPServer:
    """Practice: pick a scenario, work on it with the lab tools, grade it, start another."""
    server = MCPServer("netdojo-practice", version=__version__, instructions=INSTRUCTIONS)

    def current() -> LabTools:
        session.touch()
        if session.episode is None:
            raise ToolError("no scenario is running; call start_scenario first")
        return session.episode.tools

    add_lab_tools(server, current)

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
