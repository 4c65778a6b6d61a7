"""The `capture` tool: the tcpdump command run in a device, and the pcap decoded with scapy."""

from __future__ import annotations

import io
import logging
import re
from functools import cache
from typing import Annotated, Any

from pydantic import BaseModel, Field

from netdojo.tools.allowlist import CommandRefused, split_words
from netdojo.tools.spec import Device, ToolArguments, ToolSpec

MIN_SECONDS = 0.5
MAX_SECONDS = 30.0
MAX_PACKETS = 200
_INTERFACE = re.compile(r"eth\d{1,3}|lo|any")


class CaptureArguments(ToolArguments):
    device: Device
    interface: Annotated[str, Field(description="eth<N>, lo or any")]
    filter: str = Field("", description="a pcap filter, e.g. `icmp or proto ospf`")
    seconds: float = Field(5.0, ge=MIN_SECONDS, le=MAX_SECONDS, description="how long to listen")
    max_packets: int = Field(50, ge=1, le=MAX_PACKETS, description="stop after this many")


class PacketSummary(BaseModel):
    time_s: float = Field(description="seconds since the first packet")
    length: int
    src: str | None = None
    dst: str | None = None
    protocol: str
    summary: str


class CaptureResult(BaseModel):
    device: str
    interface: str
    filter: str
    seconds: float
    packets: list[PacketSummary] = Field(default_factory=list)
    truncated: bool = Field(default=False, description="max_packets was reached")
    error: str | None = None


class CaptureRefused(CommandRefused):
    forms = (
        "capture on eth<N>, lo or any",
        "a tcpdump filter expression (pcap-filter syntax), no options",
        f"seconds {MIN_SECONDS:g}..{MAX_SECONDS:g}, max_packets 1..{MAX_PACKETS}",
    )


def tcpdump_argv(interface: str, filter_expression: str, max_packets: int, path: str) -> list[str]:
    """The tcpdump argv; the filter is split into words after `--`, never into options."""
    if not _INTERFACE.fullmatch(interface):
        raise CaptureRefused(f"interface {interface!r} is not a device interface")
    words = split_words(filter_expression, CaptureRefused, "filter")
    if any(w.startswith("-") for w in words):
        raise CaptureRefused("the filter may not contain tcpdump options")
    return [
        "tcpdump", "-i", interface, "-n", "-U", "-Z", "root", "-s", "256",
        "-c", str(max_packets), "-w", path, "--", *words,
    ]  # fmt: skip


def decode_pcap(data: bytes) -> list[PacketSummary]:
    """One summary per packet, oldest first; an empty or cut-off file gives what it holds."""
    from scapy.error import Scapy_Exception
    from scapy.layers.inet import IP
    from scapy.layers.inet6 import IPv6
    from scapy.layers.l2 import ARP
    from scapy.utils import PcapReader

    _load_routing_layers()

    if not data:
        return []
    read: list[Any] = []
    try:
        with PcapReader(io.BytesIO(data)) as reader:  # type: ignore[arg-type]  # takes files too
            read.extend(reader)
    except (Scapy_Exception, EOFError, ValueError):
        pass  # a cut-off capture: keep the packets read so far
    first = float(read[0].time) if read else 0.0
    return [_summary(packet, first, IP, IPv6, ARP) for packet in read]


def _summary(packet: Any, first: float, ip: Any, ipv6: Any, arp: Any) -> PacketSummary:
    src = dst = None
    for layer in (ip, ipv6):
        if layer in packet:
            src, dst = packet[layer].src, packet[layer].dst
            break
    if src is None and arp in packet:
        src, dst = packet[arp].psrc, packet[arp].pdst
    return PacketSummary(
        time_s=round(float(packet.time) - first, 6),
        length=len(packet),
        src=src,
        dst=dst,
        protocol=_protocol(packet),
        summary=packet.summary(),
    )


def _protocol(packet: Any) -> str:
    names = [p.name for p in packet.iterpayloads() if type(p).__name__ not in ("Raw", "Padding")]
    return str(names[-1]) if names else "Raw"


CAPTURE = ToolSpec(
    name="capture",
    title="Capture packets",
    arguments=CaptureArguments,
    result=CaptureResult,
    description="Capture packets on a device interface; returns decoded packet summaries.",
    run=lambda tools, a: tools.capture(a.device, a.interface, a.filter, a.seconds, a.max_packets),
    read_only=True,
    destructive=False,
)


@cache
def _load_routing_layers() -> None:
    """Teach scapy OSPF and BGP, so their packets are named in summaries."""
    from scapy.main import load_contrib

    logging.getLogger("scapy").setLevel(logging.ERROR)
    load_contrib("ospf")
    load_contrib("bgp")
