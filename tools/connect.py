"""The `connect` tool: open a TCP connection, or send a UDP datagram, from a device to a port,
and say whether it got through and what the listener answered. On a Kubernetes application it
is the counterpart of `ping`: NetworkPolicy decides per port and protocol, which ICMP cannot
show."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from netdojo.tools.lab_tools import LabTools
from netdojo.tools.reachability import Destination
from netdojo.tools.spec import Device, ToolArguments, ToolSpec

TCP_WAIT_S = 2
UDP_WAIT_S = 1
MAX_ANSWER = 200


class ConnectArguments(ToolArguments):
    source: Device
    destination: Destination
    port: Annotated[int, Field(ge=1, le=65535)]
    protocol: Literal["TCP", "UDP"] = "TCP"


class ConnectResult(BaseModel):
    source: str
    destination: str
    port: int
    protocol: str
    connected: bool = Field(
        description="TCP: the connection was accepted; UDP: an answer came back"
    )
    answer: str = Field("", description="the first line the listener sent back")
    error: str | None = Field(default=None, description="why the probe could not run")


def probe_argv(address: str, port: int, protocol: str) -> list[str]:
    if protocol == "UDP":
        return ["sh", "-c", f"echo probe | nc -u -w {UDP_WAIT_S} {address} {port}"]
    return ["sh", "-c", f"nc -w {TCP_WAIT_S} {address} {port} </dev/null"]


async def _run(tools: LabTools, arguments: ConnectArguments) -> ConnectResult:
    async def run() -> ConnectResult:
        tools.known_device(arguments.source)
        address = await tools.address_of(arguments.destination)
        argv = probe_argv(address, arguments.port, arguments.protocol)
        done = await tools.lab.exec(arguments.source, argv, timeout=TCP_WAIT_S + 3)
        answer = next((line for line in done.stdout.splitlines() if line.strip()), "")
        connected = bool(answer) if arguments.protocol == "UDP" else done.ok
        error = None
        if done.exit_code is None or done.timed_out:
            error = (done.stderr or "the probe did not finish").strip()[:MAX_ANSWER]
        return ConnectResult(
            source=arguments.source,
            destination=arguments.destination,
            port=arguments.port,
            protocol=arguments.protocol,
            connected=connected and error is None,
            answer=answer.strip()[:MAX_ANSWER],
            error=error,
        )

    return await tools.recorded(CONNECT, arguments, run)


CONNECT = ToolSpec(
    name="connect",
    title="Connect to a port",
    arguments=ConnectArguments,
    result=ConnectResult,
    description=(
        "Open a TCP connection (or send a UDP datagram) from a device to a port of an address "
        "or device; says whether it got through and what the listener answered (a pod answers "
        "with its name)."
    ),
    run=_run,
    read_only=True,
    destructive=False,
)
