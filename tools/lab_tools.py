"""The agent-facing tools over one live lab, bound to a scenario's public half.

Every call is checked (device names, allowlists, bounds), runs with a timeout and an output
cap, and is appended to the episode's trajectory. Failures an agent should read raise
`ToolFailure` with a message that says what was wrong and what is valid. The arguments of a call
are checked by its tool's model, whoever calls it.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypeVar

import anyio
from pydantic import BaseModel, Field

from netdojo.labs.errors import LabError
from netdojo.labs.runtime import DEFAULT_MAX_OUTPUT, ExecResult, LiveLab
from netdojo.scenarios.capacity.lab import ANSWER_PATH, PLANNER
from netdojo.scenarios.model import PublicHalf
from netdojo.scenarios.taxonomy import Diagnosis
from netdojo.tools import actions
from netdojo.tools.allowlist import CommandRefused, parse_command
from netdojo.tools.capture import CAPTURE, MAX_SECONDS, CaptureResult, decode_pcap, tcpdump_argv
from netdojo.tools.config_allowlist import check_config_lines
from netdojo.tools.reachability import (
    PING,
    TRACEROUTE,
    PingResult,
    TracerouteResult,
    parse_ping,
    parse_traceroute,
)
from netdojo.tools.read_allowlist import READ_FORMS, parse_read, split_trailing_json
from netdojo.tools.spec import Device, InvalidArguments, JsonData, ToolArguments, ToolSpec
from netdojo.tools.topology import TOPOLOGY, TopologyView, topology_view
from netdojo.tools.trajectory import Trajectory, storable

GRACE_S = 10.0  # beyond a command's own timeout, for the docker API round trips
SUBMITTED = "the work was submitted; no further tool calls are accepted"

Result = TypeVar("Result", bound=BaseModel)


class ToolFailure(Exception):
    """A call the agent should correct: the message says what was wrong and what is valid."""


class ShowArguments(ToolArguments):
    device: Device
    command: Annotated[str, Field(description="a read-only command, e.g. `show ip route`")]


class SubmitArguments(ToolArguments):
    summary: Annotated[str, Field(description="what you found and changed", max_length=20000)]
    answer: JsonData = Field(
        default=None,
        description="the answer, when the task asks for one (a planning task's: one JSON "
        "array, an element per step); left out otherwise",
    )
    diagnosis: Diagnosis | None = Field(
        default=None,
        description="the root cause, when you can name it: the devices (or device:interface) "
        "at fault and the fault classes; no location and the class 'none' when nothing is "
        "wrong",
    )


class ShowResult(BaseModel):
    device: str
    command: str
    text: str
    parsed: JsonData = Field(
        default=None, description="the parsed JSON form, when the command has one"
    )
    truncated: bool = False
    note: str | None = None


class SubmitResult(BaseModel):
    accepted: bool
    message: str


class ToolLimits(BaseModel):
    """Per-call timeouts (inside the device) and the output cap of the tools."""

    show_timeout_s: float = 15.0
    change_timeout_s: float = actions.CONFIG_TIMEOUT_S
    traceroute_timeout_s: float = 20.0
    output_cap: int = DEFAULT_MAX_OUTPUT
    max_calls: int | None = Field(default=None, description="tool calls allowed, submit aside")


def _note(done: ExecResult, limits: ToolLimits) -> str | None:
    if done.timed_out:
        return f"the command timed out after {limits.show_timeout_s:g}s; partial output shown"
    if done.truncated:
        return f"output cut at {limits.output_cap} bytes; narrow the command to see the rest"
    return None


def _check_arguments(spec: ToolSpec[Any, Any], arguments: dict[str, Any]) -> None:
    """Check a call's arguments against its tool's model; a `ToolFailure` names each problem."""
    try:
        spec.checked(arguments)
    except InvalidArguments as exc:
        raise ToolFailure(str(exc)) from None


class LabTools:
    """The tools of one episode: one live lab, its public facts and its trajectory."""

    def __init__(
        self,
        lab: LiveLab,
        public: PublicHalf,
        trajectory: Trajectory,
        limits: ToolLimits | None = None,
    ) -> None:
        self.lab = lab
        self.limits = limits or ToolLimits()
        self.public = public
        self.trajectory = trajectory
        self.submitted = False
        self.calls = 0
        self._devices = {d.name: d for d in public.devices}

    # helpers ---------------------------------------------------------------------------
    def is_device(self, name: str) -> bool:
        return name in self._devices

    def known_device(self, name: str) -> str:
        """``name`` if the topology has it; else a `ToolFailure` listing the devices."""
        if name not in self._devices:
            valid = ", ".join(sorted(self._devices))
            raise ToolFailure(f"unknown device {name!r}; devices are: {valid}")
        return name

    async def _recorded(
        self,
        spec: ToolSpec[Any, Result],
        arguments: dict[str, Any],
        run: Callable[[], Awaitable[Result]],
        summarize: Callable[[Result], str],
        changes_state: Callable[[Result], bool] | None = None,
        deadline_s: float | None = None,
    ) -> Result:
        tool = spec.name
        deadline_s = deadline_s or self.limits.show_timeout_s + GRACE_S
        started = time.monotonic()
        try:
            if self.submitted:
                raise ToolFailure(SUBMITTED)
            budget = self.limits.max_calls
            if budget is not None and tool != "submit" and self.calls >= budget:
                raise ToolFailure(f"the budget of {budget} tool calls is spent; call submit")
            self.calls += 1
            _check_arguments(spec, arguments)
            with anyio.fail_after(deadline_s):
                result = await run()
        except TimeoutError:
            error = f"{tool} did not finish within {deadline_s:g}s"
            self.trajectory.record(tool, arguments, started, ok=False, summary=error, error=error)
            raise ToolFailure(error) from None
        except (ToolFailure, CommandRefused, LabError) as exc:
            refused = isinstance(exc, CommandRefused)
            summary = f"refused: {exc.reason}" if isinstance(exc, CommandRefused) else str(exc)
            self.trajectory.record(
                tool, arguments, started, ok=False, summary=summary, error=str(exc), refused=refused
            )
            raise ToolFailure(str(exc)) from None
        self.trajectory.record(
            tool,
            arguments,
            started,
            ok=True,
            summary=summarize(result),
            result=result.model_dump(mode="json"),
            changed_state=bool(changes_state and changes_state(result)),
        )
        return result

    async def recorded(
        self,
        spec: ToolSpec[Any, Result],
        arguments: BaseModel,
        run: Callable[[], Awaitable[Result]],
        changes_state: Callable[[Result], bool] | None = None,
    ) -> Result:
        """A call of a tool declared in a module of its own: budgeted, bounded in time and
        recorded under the tool's name, as the calls of the tools below are."""
        return await self._recorded(
            spec,
            arguments.model_dump(mode="json"),
            run,
            lambda result: result.model_dump_json()[:200],
            changes_state,
        )

    async def address_of(self, destination: str) -> str:
        """An IP literal as given, or the first address of the named device."""
        try:
            return str(ipaddress.ip_address(destination))
        except ValueError:
            pass
        if destination not in self._devices:
            valid = ", ".join(sorted(self._devices))
            raise ToolFailure(
                f"destination {destination!r} is neither an IP address nor a device; "
                f"devices are: {valid}"
            )
        for iface in self._devices[destination].interfaces:
            if iface.address:
                return iface.address.split("/")[0]
        done = await self.lab.exec(destination, ["ip", "-j", "-4", "address", "show"])
        for link in json.loads(done.stdout or "[]"):
            for info in link.get("addr_info", []):
                if info.get("scope") == "global":
                    return str(info["local"])
        raise ToolFailure(f"device {destination!r} has no IPv4 address to reach")

    async def _read(self, device: str, argv: list[str]) -> ExecResult:
        return await self.lab.exec(
            device, argv, timeout=self.limits.show_timeout_s, max_output=self.limits.output_cap
        )

    # tools -----------------------------------------------------------------------------
    async def topology(self) -> TopologyView:
        async def run() -> TopologyView:
            return topology_view(self.public)

        return await self._recorded(
            TOPOLOGY,
            {},
            run,
            lambda r: f"{len(r.devices)} devices, {len(r.links)} links",
        )

    async def show(self, device: str, command: str) -> ShowResult:
        async def run() -> ShowResult:
            read = parse_read(command)
            self.known_device(device)
            done = await self._read(device, read.argv)
            if read.json_form == "trailing" and done.truncated:
                done = await self._read(device, read.argv[:3])  # the text form alone
            text, parsed = done.stdout, None
            if read.json_form == "trailing" and done.ok and not done.truncated:
                text, parsed = split_trailing_json(done.stdout)
            elif read.json_form == "whole" and done.ok and not done.truncated:
                with contextlib.suppress(json.JSONDecodeError):
                    parsed = json.loads(done.stdout)
            return ShowResult(
                device=device,
                command=command,
                text=text + (done.stderr if not done.ok else ""),
                parsed=parsed,
                truncated=done.truncated,
                note=_note(done, self.limits),
            )

        return await self._recorded(
            SHOW,
            {"device": device, "command": command},
            run,
            lambda r: f"{len(r.text)} chars" + (" (cut)" if r.truncated else ""),
        )

    async def configure(self, device: str, lines: list[str]) -> actions.ConfigureResult:
        async def run() -> actions.ConfigureResult:
            check_config_lines(lines)
            self.known_device(device)
            if not lines:
                raise ToolFailure("give at least one configuration line")
            return await actions.configure(
                self.lab, device, lines, timeout=self.limits.change_timeout_s
            )

        return await self._recorded(
            actions.CONFIGURE,
            {"device": device, "lines": lines},
            run,
            lambda r: f"{sum(x.accepted for x in r.lines)}/{len(r.lines)} lines accepted",
            changes_state=lambda r: any(x.accepted for x in r.lines),
            deadline_s=self.limits.change_timeout_s + GRACE_S,
        )

    async def execute(self, device: str, command: str) -> actions.ExecuteResult:
        async def run() -> actions.ExecuteResult:
            parse_command(command)
            self.known_device(device)
            return await actions.execute(
                self.lab,
                device,
                command,
                timeout=self.limits.change_timeout_s,
                max_output=self.limits.output_cap,
            )

        return await self._recorded(
            actions.EXECUTE,
            {"device": device, "command": command},
            run,
            lambda r: f"exit {r.exit_code}" + (" (timed out)" if r.timed_out else ""),
            changes_state=lambda r: True,
            deadline_s=self.limits.change_timeout_s + GRACE_S,
        )

    async def ping(self, source: str, destination: str, count: int = 3) -> PingResult:
        async def run() -> PingResult:
            self.known_device(source)
            address = await self.address_of(destination)
            argv = ["ping", "-n", "-c", str(count), "-i", "0.2", "-W", "1", address]
            if ":" in address:  # IPv6: said outright, IPv4 runs as it always did
                argv.insert(1, "-6")
            done = await self.lab.exec(source, argv, timeout=count * 0.2 + 3)
            result = parse_ping(source, destination, done.stdout)
            if not done.ok and not result.transmitted:
                result.error = (done.stderr or done.stdout).strip()[:500]
            return result

        return await self._recorded(
            PING,
            {"source": source, "destination": destination, "count": count},
            run,
            lambda r: r.error or f"{r.received}/{r.transmitted} replies",
        )

    async def traceroute(self, source: str, destination: str) -> TracerouteResult:
        async def run() -> TracerouteResult:
            self.known_device(source)
            address = await self.address_of(destination)
            argv = ["traceroute", "-n", "-q", "1", "-w", "1", "-m", "16", address]
            if ":" in address:
                argv.insert(1, "-6")
            done = await self.lab.exec(source, argv, timeout=self.limits.traceroute_timeout_s)
            result = parse_traceroute(source, destination, address, done.stdout)
            if not done.ok and not result.hops:
                result.error = (done.stderr or done.stdout).strip()[:500]
            return result

        return await self._recorded(
            TRACEROUTE,
            {"source": source, "destination": destination},
            run,
            lambda r: r.error or f"{len(r.hops)} hops, reached={r.reached}",
            deadline_s=self.limits.traceroute_timeout_s + GRACE_S,
        )

    async def capture(
        self,
        device: str,
        interface: str,
        filter: str = "",
        seconds: float = 5.0,
        max_packets: int = 50,
    ) -> CaptureResult:
        async def run() -> CaptureResult:
            self.known_device(device)
            path = f"/tmp/netdojo-capture-{secrets.token_hex(4)}.pcap"
            argv = tcpdump_argv(interface, filter, max_packets, path)
            done = await self.lab.exec(device, argv, timeout=seconds)
            result = CaptureResult(
                device=device, interface=interface, filter=filter, seconds=seconds
            )
            try:
                data = await self.lab.read_bytes(device, path)
            except LabError:
                result.error = (done.stderr or "tcpdump wrote no capture").strip()[-500:]
                return result
            finally:
                await self.lab.exec(device, ["rm", "-f", path])
            result.packets = decode_pcap(data)
            result.truncated = len(result.packets) >= max_packets
            return result

        return await self._recorded(
            CAPTURE,
            {
                "device": device,
                "interface": interface,
                "filter": filter,
                "seconds": seconds,
                "max_packets": max_packets,
            },
            run,
            lambda r: r.error or f"{len(r.packets)} packets",
            deadline_s=MAX_SECONDS + GRACE_S,
        )

    async def submit(
        self, summary: str, answer: Any = None, diagnosis: Diagnosis | None = None
    ) -> SubmitResult:
        """Declare the work done; an ``answer`` is kept where the judge reads a planning
        task's answer (`netdojo.scenarios.capacity.lab.ANSWER_PATH`), a ``diagnosis`` in the
        trajectory, where the judge scores it."""

        async def run() -> SubmitResult:
            if answer is not None:
                if PLANNER not in self._devices:
                    raise ToolFailure("this task takes no answer; say what you did in summary")
                await self.lab.write_file(PLANNER, ANSWER_PATH, json.dumps(answer))
            return SubmitResult(accepted=True, message="submitted; the work will be judged")

        arguments: dict[str, Any] = {"summary": summary}
        if answer is not None:
            arguments["answer"] = answer
        if diagnosis is not None:
            arguments["diagnosis"] = diagnosis.model_dump(mode="json")
        result = await self._recorded(SUBMIT, arguments, run, lambda r: "submitted")
        self.submitted = True
        self.trajectory.submitted = storable(summary)
        if diagnosis is not None:
            self.trajectory.diagnosis = storable(diagnosis.model_dump(mode="json"))
        return result


SHOW = ToolSpec(
    name="show",
    title="Show device state",
    arguments=ShowArguments,
    result=ShowResult,
    description="Read a device's state. The result has the text and, when the command has a JSON "
    "form, the parsed JSON. Allowed forms:\n" + "\n".join(f"- {form}" for form in READ_FORMS),
    run=lambda tools, a: tools.show(a.device, a.command),
    read_only=True,
    destructive=False,
)
SUBMIT = ToolSpec(
    name="submit",
    title="Submit the work",
    arguments=SubmitArguments,
    result=SubmitResult,
    description="Declare the task done; the network is then judged and no further calls are taken.",
    run=lambda tools, a: tools.submit(a.summary, a.answer, a.diagnosis),
    read_only=False,
    destructive=False,
)
