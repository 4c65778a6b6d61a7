"""`netdojo demo`: a small OSPF lab deployed, converged, pinged across and torn down."""

from __future__ import annotations

import re
import time

import anyio
from rich.console import Console
from rich.table import Table

from netdojo.labs.runtime import LiveLab, deploy_lab
from netdojo.labs.samples import host_address, ospf_converged, ospf_ring

PING_COUNT = 5


async def _demo(console: Console) -> list[tuple[str, str]]:
    spec = ospf_ring(routers=3, hosts=2, name="demo")
    target = host_address(spec, "h2")
    measured: list[tuple[str, str]] = []
    started = time.monotonic()
    status = console.status(f"deploying {len(spec.devices)} devices (3 FRR routers, 2 hosts)")
    status.start()
    try:
        async with deploy_lab(spec, converged=ospf_converged, converge_deadline_s=60) as lab:
            status.stop()
            measured += await _exercise(console, lab, target)
            status.update("tearing down")
            status.start()
    finally:
        status.stop()
    measured.append(("undeploy", f"{lab.timings.undeploy_s:.2f} s"))
    measured.append(("total", f"{time.monotonic() - started:.2f} s"))
    return measured


async def _exercise(console: Console, lab: LiveLab, target: str) -> list[tuple[str, str]]:
    console.print(f"lab [bold]{lab.name}[/] deployed in {lab.timings.deploy_s:.2f}s")
    console.print(f"startup commands finished after {lab.timings.startup_s:.2f}s")
    console.print(f"OSPF converged {lab.timings.converge_s:.2f}s later")
    await _show_neighbours(console, lab)
    ping = await lab.exec("h1", ["ping", "-c", str(PING_COUNT), "-i", "0.2", "-W", "1", target])
    loss = re.search(r"(\d+(?:\.\d+)?)% packet loss", ping.stdout)
    rtt = re.search(r"= [\d.]+/([\d.]+)/", ping.stdout)
    loss_text = loss.group(1) if loss else "?"
    rtt_text = rtt.group(1) if rtt else "?"
    console.print(f"ping h1 -> h2 ({target}): {loss_text}% loss, avg rtt {rtt_text} ms")
    trace = await lab.exec("h1", ["traceroute", "-n", "-q", "1", "-w", "1", target], timeout=20)
    hops = re.findall(r"^\s*\d+\s+(\S+)", trace.stdout, flags=re.MULTILINE)
    console.print(f"path h1 -> h2: {' -> '.join(hops)}")
    return [
        ("deploy", f"{lab.timings.deploy_s:.2f} s"),
        ("startup done", f"{lab.timings.startup_s:.2f} s"),
        ("OSPF converged", f"{lab.timings.converge_s:.2f} s"),
        ("ping loss", f"{loss_text} %"),
        ("ping avg rtt", f"{rtt_text} ms"),
    ]


async def _show_neighbours(console: Console, lab: LiveLab) -> None:
    table = Table("router", "OSPF neighbours (state)", title="adjacencies")
    for dev in lab.spec.devices:
        if dev.role == "router":
            shown = await lab.vtysh(dev.name, "show ip ospf neighbor")
            rows = [line.split() for line in shown.stdout.splitlines()[2:] if line.strip()]
            table.add_row(dev.name, ", ".join(f"{r[0]} ({r[2]})" for r in rows if len(r) > 2))
    console.print(table)


def run_demo(console: Console) -> None:
    measured = anyio.run(_demo, console)
    table = Table("measure", "value", title="what the demo measured")
    for key, value in measured:
        table.add_row(key, value)
    console.print(table)
