"""The `connect` tool: open a TCP connection, or send a UDP datagram, from a device to a port,
and say whether it got through and what the listener answered. On a Kubernetes application it
is the counterpart of `ping`: NetworkPolicy decides per port and protocol, which ICMP cannot
show."""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from netdojo.tools.lab_tools import LabTools
from netdojo.tools.spec import Device, ToolArguments, ToolSpec

TCP_WAIT_S = 2
UDP_WAIT_S = 1
MAX_ANSWER = 200


SERVICE_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
"""A Service's name in any of the forms a pod's resolver knows (``cart``, ``cart.shop``,
``cart.shop.svc.cluster.local``)."""


class ConnectArguments(ToolArguments):
    source: Device
    destination: str = Field(
        description="an IP address, a device name, or on a Kubernetes application a Service's "
        "name (cart, cart.shop, cart.shop.svc.cluster.local), resolved in the source pod"
    )
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


async def _address(tools: LabTools, destination: str) -> str:
    """What the probe connects to: a Service's name as given on a Kubernetes application (the
    source pod resolves it), otherwise an address (`LabTools.address_of`)."""
    if tools.lab.spec.kubernetes is not None and SERVICE_NAME.match(destination):
        try:
            ipaddress.ip_address(destination)
        except ValueError:
            if not tools.is_device(destination):
                return destination
    return await tools.address_of(destination)


async def _run(tools: LabTools, arguments: ConnectArguments) -> ConnectResult:
    async def run() -> ConnectResult:
        tools.known_device(arguments.source)
        address = await _address(tools, arguments.destination)
        argv = probe_argv(address, arguments.port, arguments.protocol)
        done = await tools.lab.exec(arguments.source, argv, timeout=TCP_WAIT_S + 3)
        answer = next((line for line in done.stdout.splitlines() if line.strip()), "")
        connected = bool(answer) if arguments.protocol == "UDP" else done.ok
        error = None
        if done.exit_code is None or done.timed_out:
            error = (done.stderr or "the probe did not finish").strip()[:MAX_ANSWER]
        elif not connected and done.stderr.strip():
            error = done.stderr.strip()[:MAX_ANSWER]
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
