"""The `ping` and `traceroute` tools: their arguments, and their results parsed from the iputils
and traceroute output."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BaseModel, Field

from netdojo.tools.spec import Device, ToolArguments, ToolSpec

MAX_PING_COUNT = 10
_SENT = re.compile(r"(\d+) packets transmitted, (\d+) (?:packets )?received")
_RTT_SUMMARY = re.compile(r"= ([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+) ms")
_REPLY = re.compile(r"icmp_seq=(\d+) ttl=(\d+) time=([\d.]+) ms")
_HOP = re.compile(r"^\s*(\d+)\s+(.*)$")
_HOP_PROBE = re.compile(r"(\d{1,3}(?:\.\d{1,3}){3}|[0-9a-fA-F:]+:[0-9a-fA-F:]*)\s+([\d.]+) ms")


Destination = Annotated[str, Field(description="an IP address or a device name")]


class PingArguments(ToolArguments):
    source: Device
    destination: Destination
    count: int = Field(3, ge=1, le=MAX_PING_COUNT, description="echo requests to send")


class TracerouteArguments(ToolArguments):
    source: Device
    destination: Destination


class PingResult(BaseModel):
    source: str
    destination: str
    transmitted: int = 0
    received: int = 0
    loss_percent: float = 100.0
    rtt_ms: list[float] = Field(default_factory=list, description="one per reply, in order")
    rtt_min_ms: float | None = None
    rtt_avg_ms: float | None = None
    rtt_max_ms: float | None = None
    reachable: bool = False
    error: str | None = Field(default=None, description="why ping could not run, if it could not")


class Hop(BaseModel):
    hop: int
    address: str | None = Field(default=None, description="None when the hop did not answer")
    rtt_ms: float | None = None


class TracerouteResult(BaseModel):
    source: str
    destination: str
    hops: list[Hop] = Field(default_factory=list)
    reached: bool = False
    error: str | None = None


def parse_ping(source: str, destination: str, output: str) -> PingResult:
    result = PingResult(source=source, destination=destination)
    sent = _SENT.search(output)
    if sent:
        result.transmitted, result.received = int(sent.group(1)), int(sent.group(2))
        if result.transmitted:
            lost = result.transmitted - result.received
            result.loss_percent = round(100.0 * lost / result.transmitted, 1)
    result.rtt_ms = [float(m.group(3)) for m in _REPLY.finditer(output)]
    summary = _RTT_SUMMARY.search(output)
    if summary:
        result.rtt_min_ms, result.rtt_avg_ms, result.rtt_max_ms = (
            float(summary.group(i)) for i in (1, 2, 3)
        )
    result.reachable = result.received > 0
    return result


def parse_traceroute(source: str, destination: str, address: str, output: str) -> TracerouteResult:
    """Hops of `traceroute -n -q 1`; ``address`` is the destination's IP, to tell arrival."""
    result = TracerouteResult(source=source, destination=destination)
    for line in output.splitlines():
        hop = _HOP.match(line)
        if not hop:
            continue
        probe = _HOP_PROBE.search(hop.group(2))
        result.hops.append(
            Hop(
                hop=int(hop.group(1)),
                address=probe.group(1) if probe else None,
                rtt_ms=float(probe.group(2)) if probe else None,
            )
        )
    result.reached = bool(result.hops) and result.hops[-1].address == address
    return result


PING = ToolSpec(
    name="ping",
    title="Ping",
    arguments=PingArguments,
    result=PingResult,
    description="Ping from a device; returns loss and round-trip times.",
    run=lambda tools, a: tools.ping(a.source, a.destination, a.count),
    read_only=True,
    destructive=False,
)
TRACEROUTE = ToolSpec(
    name="traceroute",
    title="Traceroute",
    arguments=TracerouteArguments,
    result=TracerouteResult,
    description="The hops from a device to a destination (one probe per hop, numeric).",
    run=lambda tools, a: tools.traceroute(a.source, a.destination),
    read_only=True,
    destructive=False,
)
