"""Hostile arguments to every tool on a live lab: each call ends in a result or a clear
error, nothing outside the allowlists runs, and the host and the untouched devices stay as
they were. The examples are derandomized (the same on every run); the pure allowlist
properties with many more examples are in tests/unit/test_hostile_input.py."""

from __future__ import annotations

import ipaddress
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from netdojo.labs.runtime import LiveLab, deploy_lab
from netdojo.labs.samples import ospf_ring
from netdojo.scenarios.model import PublicHalf
from netdojo.tools.lab_tools import LabTools, ToolFailure, ToolLimits
from netdojo.tools.trajectory import Trajectory
from tests.hostile_inputs import (
    CHANGE_FORMS,
    MARKER,
    READ_FORMS,
    hostile_lines,
    hostile_name,
    hostile_text,
)

from .public import public_half

pytestmark = pytest.mark.anyio
DEVICES = ("r1", "r2", "h1", "h2")
CHANGED = "r1"  # execute and configure act here only
READ = ("r2", "h1")  # reads act here: they must leave it as it was
UNTOUCHED = ("r2", "h1", "h2")
CANARY = "/etc/netdojo-canary"
SECRET = f"{MARKER}-secret-7f3a"
LIMITS = ToolLimits(show_timeout_s=5, change_timeout_s=10, traceroute_timeout_s=5)
EXAMPLES = settings(
    deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)  # fmt: skip
LAB_NETWORK = ipaddress.ip_network("10.0.0.0/8")


async def _state(lab: LiveLab, device: str) -> dict[str, str]:
    """What must not change on a device nobody named."""
    commands = {
        "canary": ["cat", CANARY],
        "addresses": ["ip", "-br", "address"],
        "iptables": ["iptables", "-S"],
        "nft": ["nft", "list", "ruleset"],
        "frr.conf": ["cat", "/etc/frr/frr.conf"],
        "daemons": ["cat", "/etc/frr/daemons"],
    }
    if lab.spec.device(device).role == "router":
        commands["running"] = ["vtysh", "-c", "show running-config"]
    return {key: (await lab.exec(device, argv)).stdout for key, argv in commands.items()}


async def _traces(lab: LiveLab, device: str) -> str:
    """Files a payload would have left on the device's own file system (programs aside)."""
    argv = ["find", "/", "-xdev", "-path", "/usr", "-prune", "-o", "-name", f"*{MARKER}*", "-print"]
    found = await lab.exec(device, argv, timeout=20)
    return found.stdout


def _host_processes_naming(marker: str) -> list[str]:
    """Processes on the host (devices' included) whose command line names ``marker``."""
    named = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in text and "pytest" not in text:
            named.append(text)
    return named


class Hostile:
    """The lab, its public facts, one trajectory for every call, and what must not change."""

    def __init__(
        self, lab: LiveLab, public: PublicHalf, before: dict[str, dict[str, str]], canary: Path
    ) -> None:
        self.lab, self.public, self.before, self.host_canary = lab, public, before, canary
        self.trajectory = Trajectory(episode="hostile")

    def __repr__(self) -> str:  # hypothesis prints it beside every failing example
        return f"Hostile({self.lab.name})"


@pytest.fixture(scope="module")
async def hostile_lab(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Hostile]:
    spec = ospf_ring(2, 2, name="hostile")
    async with deploy_lab(spec) as lab:
        for device in lab.devices:
            await lab.write_file(device, CANARY, SECRET + "\n", mode=0o600)
        host_canary = tmp_path_factory.mktemp("canary") / "canary"
        host_canary.write_text(SECRET)
        before = {device: await _state(lab, device) for device in DEVICES}
        yield Hostile(lab, public_half(spec), before, host_canary)


async def _call(context: Hostile, tool: str, **arguments: Any) -> None:
    """Call one tool; it must answer with a result or a `ToolFailure` that says what is wrong
    (the allowed forms, when an allowlist refused), and reveal no device's canary."""
    tools = LabTools(context.lab, context.public, context.trajectory, LIMITS)
    recorded = len(tools.trajectory.steps)
    try:
        result = await getattr(tools, tool)(**arguments)
        shown = json.dumps(result.model_dump(mode="json"))
    except ToolFailure as failure:
        shown = str(failure)
        step = tools.trajectory.steps[-1]
        assert shown and not step.ok
        if step.refused:
            assert "Allowed forms:" in shown, shown
    assert len(tools.trajectory.steps) == recorded + 1, "every call is recorded"
    assert SECRET not in shown, f"{tool} revealed a file: {arguments}"


def _device(*allowed: str) -> st.SearchStrategy[str]:
    """One of ``allowed``, or a name that is no device of the lab."""
    names = st.one_of(st.sampled_from(allowed), hostile_name())
    return names.filter(lambda d: d in allowed or d not in DEVICES)


def _destination() -> st.SearchStrategy[str]:
    def inside(name: str) -> bool:
        try:
            address = ipaddress.ip_address(name.split("%")[0])
        except ValueError:
            return True
        return address.is_loopback or address in LAB_NETWORK

    return st.one_of(st.sampled_from(["h1", "r2", "10.1.0.10"]), hostile_name()).filter(inside)


@settings(EXAMPLES, max_examples=40)
@given(device=_device(*READ), command=hostile_text(READ_FORMS))
@example(device="r2", command="show ip route")
@example(device="r2", command="nft list 'ruleset; flush ruleset'")
@example(device="r2", command="show running-config ; write memory")
async def test_show_under_hostile_commands(hostile_lab: Hostile, device: str, command: str) -> None:
    await _call(hostile_lab, "show", device=device, command=command)


@settings(EXAMPLES, max_examples=40)
@given(device=_device(CHANGED), command=hostile_text(CHANGE_FORMS))
@example(device=CHANGED, command="ip link set lo up")
@example(device=CHANGED, command=f"nft add 'table ip t; include \"{CANARY}\"'")
@example(device=CHANGED, command=f"iptables -A INPUT -m nosuch --modp=/bin/touch /tmp/{MARKER}")
async def test_execute_under_hostile_commands(
    hostile_lab: Hostile, device: str, command: str
) -> None:
    await _call(hostile_lab, "execute", device=device, command=command)


@settings(EXAMPLES, max_examples=30)
@given(device=_device(CHANGED), lines=hostile_lines())
@example(device=CHANGED, lines=["interface lo", " description hostile input"])
@example(device=CHANGED, lines=["exit", "write memory"])
@example(device=CHANGED, lines=["exit", f"output file /tmp/{MARKER}"])
@example(device=CHANGED, lines=["!" + " " * 4094 + "exit", "!" + " " * 4094 + "wr mem"])
@example(device=CHANGED, lines=["exit", f"copy {CANARY} running-config"])
async def test_configure_under_hostile_lines(
    hostile_lab: Hostile, device: str, lines: list[str]
) -> None:
    await _call(hostile_lab, "configure", device=device, lines=lines)


@settings(EXAMPLES, max_examples=30)
@given(
    source=_device(*READ),
    destination=_destination(),
    count=st.one_of(st.integers(1, 2), st.integers(-(2**40), 2**40)),
)
@example(source="h1", destination="r1", count=1)
async def test_ping_under_hostile_names(
    hostile_lab: Hostile, source: str, destination: str, count: int
) -> None:
    await _call(hostile_lab, "ping", source=source, destination=destination, count=count)


@settings(EXAMPLES, max_examples=20)
@given(source=_device(*READ), destination=_destination())
@example(source="h1", destination="10.1.0.1")
async def test_traceroute_under_hostile_names(
    hostile_lab: Hostile, source: str, destination: str
) -> None:
    await _call(hostile_lab, "traceroute", source=source, destination=destination)


@settings(EXAMPLES, max_examples=15)
@given(
    device=_device(*READ),
    interface=hostile_name(),
    expression=hostile_text(["icmp", "proto ospf", "host 10.0.0.1", ""]),
    max_packets=st.one_of(st.just(2), st.integers(-5, 10**6)),
)
@example(device="r2", interface="eth0", expression="icmp", max_packets=2)
async def test_capture_under_hostile_filters(
    hostile_lab: Hostile, device: str, interface: str, expression: str, max_packets: int
) -> None:
    arguments = {"interface": interface, "filter": expression, "max_packets": max_packets}
    await _call(hostile_lab, "capture", device=device, seconds=0.5, **arguments)


@settings(EXAMPLES, max_examples=20)
@given(summary=st.one_of(hostile_text(["fixed the network"]), *map(st.just, ["", "x" * 100_000])))
async def test_topology_and_submit_under_hostile_summaries(
    hostile_lab: Hostile, summary: str
) -> None:
    await _call(hostile_lab, "topology")
    await _call(hostile_lab, "submit", summary=summary)


async def test_nothing_ran_outside_the_allowlists(hostile_lab: Hostile) -> None:
    """Run last: after every hostile call, no payload left a trace or a process, the devices
    only read are as they were, and r1 kept its files (no `write`, no `output file`)."""
    lab, before = hostile_lab.lab, hostile_lab.before
    traces = {device: await _traces(lab, device) for device in lab.devices}
    problems = [f"{device}: left {found}" for device, found in traces.items() if found]
    problems += [f"host: still running {p}" for p in _host_processes_naming(MARKER)]
    if hostile_lab.host_canary.read_text() != SECRET:
        problems.append("host: the canary file changed")
    for device in UNTOUCHED:
        now = await _state(lab, device)
        problems += [f"{device}: {key} changed" for key in now if now[key] != before[device][key]]
    after = await _state(lab, CHANGED)
    for key in ("canary", "frr.conf", "daemons"):
        if after[key] != before[CHANGED][key]:
            problems.append(f"{CHANGED}: {key} changed")
    assert not problems
    steps = hostile_lab.trajectory.steps
    for tool in ("show", "execute", "configure", "ping", "traceroute", "capture"):
        ran = [s for s in steps if s.tool == tool]
        assert any(s.ok for s in ran) and not all(s.ok for s in ran), f"{tool}: both sides"
        assert tool in ("ping", "traceroute") or any(s.refused for s in ran), tool
    Trajectory.model_validate_json(hostile_lab.trajectory.model_dump_json())
