"""Nothing an agent can read names the instance or shows its answer.

A rotating third of the families is staged as for an episode, with a seed drawn afresh; then
everything the read allowlist admits is read on every router, on every host a fault is on and
on a sample of the other hosts and pods, with the topology the agent is handed. No text may
hold the scenario id or the seed, and no line of the reference solution may be shown on a
device unless its running configuration or service files already show it.
"""

from __future__ import annotations

import random
import secrets

import anyio
import pytest

from netdojo.judges.episode import Episode, open_episode
from netdojo.scenarios.generate import generate
from netdojo.scenarios.model import Scenario
from netdojo.scenarios.services import SERVER_CONF

from .rotation import rotating_families

pytestmark = pytest.mark.anyio
SHARE = 1 / 3
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


HOSTS_READ = 2
"""Hosts and pods read per instance beside every router and every faulty host: they run no FRR
and share one image, so a sample of them (a new one each run) covers what they can show."""


async def _texts(episode: Episode) -> dict[str, list[str]]:
    """Device -> every text a read gave (failed reads give their error, which counts too)."""
    texts: dict[str, list[str]] = {}

    async def read(device: str, commands: tuple[str, ...]) -> None:
        for command in commands:
            shown = await episode.tools.show(device, command)
            texts.setdefault(device, []).append(shown.text + (shown.note or ""))

    devices = episode.scenario.hidden.lab.devices
    routers = [spec.name for spec in devices if spec.role == "router"]
    others = [spec.name for spec in devices if spec.role != "router"]
    faulty = {fault.device for fault in episode.scenario.hidden.faults}
    hosts = [name for name in others if name in faulty]
    rest = [name for name in others if name not in faulty]
    hosts += random.sample(rest, min(HOSTS_READ, len(rest)))
    async with anyio.create_task_group() as group:
        for name in routers:
            group.start_soon(read, name, READS + FRR_READS)
        for name in hosts:
            group.start_soon(read, name, READS)
    return texts


async def _running_state(episode: Episode, router: str) -> str:
    """What ``router`` runs now, as the judge reads it: FRR's running configuration and its
    service files."""
    files = ["cat", *SERVER_CONF.values()]
    config = await episode.lab.vtysh(router, "show running-config")
    served = await episode.lab.exec(router, files)
    return config.stdout + served.stdout


def _leaks(scenario: Scenario, texts: dict[str, list[str]], running: dict[str, str]) -> list[str]:
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


@pytest.mark.timeout(1200)
async def test_no_read_names_the_instance_or_shows_its_answer() -> None:
    leaks: dict[str, list[str]] = {}
    limit = anyio.Semaphore(2)

    async def one(family: str) -> None:
        async with limit:
            scenario = generate(family, 1, 10**9 + secrets.randbelow(10**9))
            episode = await open_episode(scenario, secrets.token_hex(8))
            try:
                texts = await _texts(episode)
                topology = (await episode.tools.topology()).model_dump_json()
                texts.setdefault("topology", []).append(topology)
                running = {
                    spec.name: await _running_state(episode, spec.name)
                    for spec in scenario.hidden.lab.devices
                    if spec.role == "router"
                }
                leaks[family] = _leaks(scenario, texts, running)
            finally:
                await episode.close()

    families = rotating_families(SHARE, "leaks")
    async with anyio.create_task_group() as group:
        for family in families:
            group.start_soon(one, family)
    assert sorted(leaks) == families
    assert {f: found for f, found in leaks.items() if found} == {}
