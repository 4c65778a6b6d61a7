"""Tool latency benchmark: a `show` call through MCP against a bare docker-py exec of its command.

On one OSPF ring (``ospf_ring(routers, hosts=2)``), for each command, interleaving the three ways
call by call so they share the machine's state:

floor       docker-py ``container.exec_run(argv)`` of the command's own argv in the router
in-process  ``Client(server).call_tool("show", …)`` on the evaluation server, no transport
http        the same call over streamable HTTP on 127.0.0.1 with a bearer token (uvicorn)

It prints the median of each and the ratios in-process/floor and http/floor; the target is
http/floor ≤ 1.5. For an FRR command with a JSON form the tool asks one vtysh for the text and
the JSON form; the floor runs the text form alone, so the ratio includes that. Results go to
``benchmarks/out/tool_latency-<time>.json``. The lab is removed in a ``finally`` block.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from rich.console import Console
from rich.table import Table

from _output import save
from netdojo import __version__
from netdojo.labs.runtime import deploy_lab
from netdojo.labs.samples import ospf_converged, ospf_ring
from netdojo.scenarios.model import DeviceFacts, InterfaceFacts, PublicHalf
from netdojo.servers.endpoints import EndpointHost
from netdojo.servers.mcp_server import evaluation_server
from netdojo.servers.serving import free_port, serve_uvicorn
from netdojo.tools.lab_tools import LabTools
from netdojo.tools.read_allowlist import parse_read
from netdojo.tools.trajectory import Trajectory

COMMANDS = ("show ip route", "show running-config", "ip -br address")
TARGET_HTTP_RATIO = 1.5
console = Console(width=120)


def _public(spec: Any) -> PublicHalf:
    devices = [
        DeviceFacts(
            name=d.name,
            role=d.role,
            interfaces=[
                InterfaceFacts(name=f"eth{i}", link=link) for i, link in spec.interfaces(d.name)
            ],
        )
        for d in spec.devices
    ]
    links = [(link.name, [device for device, _ in link.endpoints]) for link in spec.links]
    return PublicHalf(brief="benchmark", devices=devices, links=links)


async def _timed(call: Any) -> float:
    started = time.perf_counter()
    await call
    return (time.perf_counter() - started) * 1000


async def run(routers: int, calls: int) -> dict[str, Any]:
    spec = ospf_ring(routers, 2, name="latency")
    results: dict[str, Any] = {}
    async with deploy_lab(spec, converged=ospf_converged) as lab:
        tools = LabTools(lab, _public(spec), Trajectory(episode="bench"))
        server = evaluation_server(tools)
        container = lab._container("r1")
        port = free_port()
        host = EndpointHost("127.0.0.1", port)
        async with serve_uvicorn(host.app, "127.0.0.1", port):
            endpoint = await host.add("bench", server)
            auth = {"Authorization": f"Bearer {endpoint.token}"}
            async with (
                Client(server) as local,
                httpx2.AsyncClient(headers=auth) as http,
                Client(streamable_http_client(endpoint.url, http_client=http)) as remote,
            ):
                for command in COMMANDS:
                    argv = parse_read(command).argv
                    arguments = {"device": "r1", "command": command}
                    samples: dict[str, list[float]] = {"floor": [], "in-process": [], "http": []}
                    for _ in range(calls):
                        samples["floor"].append(
                            await _timed(anyio.to_thread.run_sync(container.exec_run, argv))
                        )
                        samples["in-process"].append(
                            await _timed(local.call_tool("show", arguments))
                        )
                        samples["http"].append(await _timed(remote.call_tool("show", arguments)))
                    results[command] = {
                        way: {"median_ms": round(statistics.median(v), 2), "samples_ms": v}
                        for way, v in samples.items()
                    }
    return results


def report(results: dict[str, Any]) -> None:
    table = Table(
        "command", "floor ms", "in-process ms", "http ms", "in-process/floor", "http/floor",
        title=f"show latency (median); target http/floor ≤ {TARGET_HTTP_RATIO}",
    )  # fmt: skip
    for command, ways in results.items():
        floor = ways["floor"]["median_ms"]
        local, remote = ways["in-process"]["median_ms"], ways["http"]["median_ms"]
        ratio = remote / floor
        mark = "[green]" if ratio <= TARGET_HTTP_RATIO else "[red]"
        table.add_row(
            command, f"{floor:.1f}", f"{local:.1f}", f"{remote:.1f}",
            f"{local / floor:.2f}", f"{mark}{ratio:.2f}",
        )  # fmt: skip
    console.print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--routers", type=int, default=3)
    parser.add_argument("--calls", type=int, default=30, help="calls per command and way")
    args = parser.parse_args()
    results = anyio.run(run, args.routers, args.calls)
    report(results)
    meta = {"netdojo": __version__, "routers": args.routers, "calls": args.calls}
    path = save("tool_latency", {"meta": meta, "results": results})
    console.print(f"results: {path}")


if __name__ == "__main__":
    main()
