"""Nothing an agent can read names the instance or shows its answer: everything the read
allowlist admits, read on a staged lab as an agent first finds it.

Every device a fault or the reference solution is on is read in full, and so is a sample of
the other routers and of the other hosts and pods (the devices of a role share one image and
differ in their state, which only a fault or its fix makes tell anything), with the topology
the agent is handed. No text
may hold the scenario id or the seed, and no line of the reference solution may be shown on a
device unless its running configuration or service files already show it.
"""

from __future__ import annotations

import random

import anyio

from netdojo.labs.runtime import LiveLab
from netdojo.scenarios.model import Scenario
from netdojo.scenarios.services import SERVER_CONF
from netdojo.tools.lab_tools import LabTools
from netdojo.tools.trajectory import Trajectory

READS = (
    "cat /etc/frr/frr.conf",
    "cat /etc/frr/daemons",
    "tail -n 500 /var/log/frr/frr.log",
    "sysctl -a",
    "ip -d address show",
    "ip route show table all",
    "ip rule show",
    "ip neigh show",
    "ss -tuanpe",
    "iptables -S",
    "iptables -t nat -S",
    "nft list ruleset",
    *(f"cat {path}" for path in SERVER_CONF.values()),
)
FRR_READS = (
    "show running-config",
    "show version",
    "show logging",
    "show ip route",
    "show interface",
    "show ip ospf neighbor",
    "show bgp summary",
)
OTHERS_READ = 1
"""Devices of each role read beside those a fault or the solution is on, a new sample each run:
a device none of them is on shows the state every other one of its role shows."""
READS_AT_ONCE = 8


async def _texts(tools: LabTools, scenario: Scenario) -> dict[str, list[str]]:
    """Device -> every text a read gave (failed reads give their error, which counts too)."""
    texts: dict[str, list[str]] = {}
    limiter = anyio.CapacityLimiter(READS_AT_ONCE)

    async def read(device: str, command: str) -> None:
        async with limiter:
            shown = await tools.show(device, command)
        texts.setdefault(device, []).append(shown.text + (shown.note or ""))

    touched = {fault.device for fault in scenario.hidden.faults} | {
        str(call.arguments["device"])
        for call in scenario.hidden.solution
        if "device" in call.arguments
    }
    async with anyio.create_task_group() as group:
        for routers in (True, False):
            names = [s.name for s in scenario.hidden.lab.devices if (s.role == "router") == routers]
            rest = [name for name in names if name not in touched]
            chosen = [name for name in names if name in touched]
            chosen += random.sample(rest, min(OTHERS_READ, len(rest)))
            for name in chosen:
                for command in READS + FRR_READS if routers else READS:
                    group.start_soon(read, name, command)
    texts["topology"] = [(await tools.topology()).model_dump_json()]
    return texts


async def _running_state(lab: LiveLab, router: str) -> str:
    """What ``router`` runs now, as the judge reads it: FRR's running configuration and its
    service files."""
    config = await lab.vtysh(router, "show running-config")
    served = await lab.exec(router, ["cat", *SERVER_CONF.values()])
    return config.stdout + served.stdout


def _shown_answers(
    scenario: Scenario, texts: dict[str, list[str]], running: dict[str, str]
) -> list[str]:
    found = []
    for device, outputs in texts.items():
        for text in outputs:
            if scenario.id in text:
                found.append(f"{device}: the scenario id")
            if f"{scenario.seed}" in text:
                found.append(f"{device}: the seed")
    for call in scenario.hidden.solution:
        if call.tool == "configure":
            lines = call.arguments["lines"]
        elif call.tool == "service" and "config" in call.arguments:
            lines = str(call.arguments["config"]).splitlines()
        else:
            continue
        device = call.arguments["device"]
        shown = {line.strip() for line in running.get(device, "").splitlines()}
        for line in lines:
            line = line.strip()
            if line in shown or len(line) < 4:
                continue
            for text in texts.get(device, []):
                if line in {t.strip() for t in text.splitlines()}:
                    found.append(f"{device}: solution line {line!r} not in the running state")
    return found


async def leaks(lab: LiveLab, scenario: Scenario) -> list[str]:
    """What the reads of a staged ``lab`` give away of ``scenario``: empty when nothing."""
    tools = LabTools(lab, scenario.public, Trajectory(episode="leak-check", brief=""))
    texts = await _texts(tools, scenario)
    running: dict[str, str] = {}

    async def read_running(router: str) -> None:
        running[router] = await _running_state(lab, router)

    configured = {
        str(call.arguments["device"])
        for call in scenario.hidden.solution
        if call.tool in ("configure", "service")
    }
    async with anyio.create_task_group() as group:
        for spec in scenario.hidden.lab.devices:
            if spec.role == "router" and spec.name in configured:
                group.start_soon(read_running, spec.name)
    return _shown_answers(scenario, texts, running)
