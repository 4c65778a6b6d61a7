"""Run hidden tests (`Probe`s) on a live lab; each gives pass/fail with evidence.

Probes fail closed: a command that fails, times out, is cut short or prints what cannot be
read makes its probe fail with that as evidence, whatever the probe expected. A reachability
probe counts only on evidence from the destination: the device the plan gives the address
must have answered the probe's own packets (its ICMP and TCP counters, read around the probe
while no other probe of the judge talks to it), so a reply faked anywhere else never passes.
"""

from __future__ import annotations

import json
import re
import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio

from netdojo.errors import NetdojoError
from netdojo.labs.runtime import ExecResult, LiveLab
from netdojo.reports.records import ProbeResult
from netdojo.scenarios.model import Probe, PublicHalf
from netdojo.tools.reachability import parse_traceroute


class JudgeError(NetdojoError):
    """The judge could not grade: not the agent's doing, and never a pass."""


class ProbeUnavailable(Exception):
    """The probe could not observe what it checks; it fails, with this as its evidence."""


Observed = tuple[bool, str]  # (what the probe observed holds, evidence)
Owners = Mapping[str, str]  # address -> the device the plan gives it
_RECEIVED = re.compile(r"(\d+) (?:packets )?received")
_DESTINATION_LOCKS: weakref.WeakKeyDictionary[LiveLab, dict[str, anyio.Lock]] = (
    weakref.WeakKeyDictionary()
)


@dataclass
class ProbeContext:
    """Where probes run; ``owners`` (None only for outage sampling) makes reachability probes
    witnessed at their destination."""

    lab: LiveLab
    owners: Owners | None = None
    locks: dict[str, anyio.Lock] = field(init=False)

    def __post_init__(self) -> None:
        self.locks = _DESTINATION_LOCKS.setdefault(self.lab, {})

    def lock(self, device: str) -> anyio.Lock:
        return self.locks.setdefault(device, anyio.Lock())

    def owner(self, address: str) -> str:
        assert self.owners is not None
        owner = self.owners.get(address)
        if owner is None:
            raise ProbeUnavailable(f"no device of the plan has {address}")
        return owner


def ran(done: ExecResult, what: str) -> ExecResult:
    """``done`` when its command ran to the end; else the probe cannot tell anything."""
    if done.timed_out:
        raise ProbeUnavailable(f"{what} on {done.device} timed out after {done.duration_s:.0f}s")
    if done.truncated:
        raise ProbeUnavailable(f"{what} on {done.device}: output cut short")
    if done.exit_code is None:
        raise ProbeUnavailable(f"{what} on {done.device} did not run: {done.stderr.strip()}")
    return done


def _json(done: ExecResult, what: str) -> Any:
    ran(done, what)
    if not done.ok:
        raise ProbeUnavailable(f"{what} on {done.device} failed: {done.stderr.strip()[:200]}")
    try:
        return json.loads(done.stdout) if done.stdout.strip() else []
    except json.JSONDecodeError:
        raise ProbeUnavailable(f"{what} on {done.device} printed no JSON") from None


async def _vtysh_json(ctx: ProbeContext, device: str, command: str) -> dict[str, Any]:
    parsed = _json(await ctx.lab.vtysh(device, command), f"`{command}`")
    return parsed if isinstance(parsed, dict) else {}


def parse_counters(snmp: str) -> dict[str, int]:
    """/proc/net/snmp as ``Proto.Name`` -> value (each protocol has a names and a values line)."""
    counters: dict[str, int] = {}
    lines = snmp.splitlines()
    for names, values in zip(lines[::2], lines[1::2], strict=False):
        proto, _, header = names.partition(":")
        for name, value in zip(header.split(), values.partition(":")[2].split(), strict=False):
            counters[f"{proto}.{name}"] = int(value)
    return counters


async def _counters(lab: LiveLab, device: str) -> dict[str, int]:
    done = ran(await lab.exec(device, ["cat", "/proc/net/snmp"]), "reading counters")
    if not done.ok:
        raise ProbeUnavailable(f"cannot read counters on {device}: {done.stderr.strip()}")
    return parse_counters(done.stdout)


async def _witnessed(
    ctx: ProbeContext, target: str, probe: Callable[[], Awaitable[ExecResult]], counter: str
) -> tuple[ExecResult, str, int]:
    """Run ``probe`` while the owner of ``target`` is watched: (result, owner, how much its
    ``counter`` grew meanwhile)."""
    owner = ctx.owner(target)
    async with ctx.lock(owner):
        before = await _counters(ctx.lab, owner)
        done = await probe()
        after = await _counters(ctx.lab, owner)
    return done, owner, after.get(counter, 0) - before.get(counter, 0)


async def _ping(ctx: ProbeContext, probe: Probe) -> Observed:
    target = probe.params["target"]
    argv = ["ping", "-c", "2", "-i", "0.2", "-W", "1", "-q", target]

    async def ping() -> ExecResult:
        return await ctx.lab.exec(probe.device, argv)

    if ctx.owners is None:
        done = ran(await ping(), "ping")
        return done.ok, f"ping {target} from {probe.device}: {_loss(done)}"
    done, owner, answered = await _witnessed(ctx, target, ping, "Icmp.OutEchoReps")
    ran(done, "ping")
    received = int(m.group(1)) if (m := _RECEIVED.search(done.stdout)) else 0
    reached = done.ok and 0 < received <= answered
    evidence = f"ping {target} from {probe.device}: {_loss(done)}; {owner} sent {answered} replies"
    if done.ok and received > answered:
        evidence += f"; {received - answered} replies did not come from {owner}"
    return reached, evidence


def _loss(done: ExecResult) -> str:
    summary = next((line for line in done.stdout.splitlines() if "packet loss" in line), "")
    return summary or done.stderr.strip() or "no reply"


async def _tcp(ctx: ProbeContext, probe: Probe) -> Observed:
    target, port = probe.params["target"], str(probe.params["port"])

    async def connect() -> ExecResult:
        return await ctx.lab.exec(probe.device, ["nc", "-z", "-w", "2", target, port])

    if ctx.owners is None:
        done = ran(await connect(), "nc")
        return done.ok, f"{probe.device} -> {target}:{port} {'open' if done.ok else 'closed'}"
    done, owner, accepted = await _witnessed(ctx, target, connect, "Tcp.PassiveOpens")
    ran(done, "nc")
    reached = done.ok and accepted > 0
    if reached:
        state = f"open, accepted by {owner}"
    elif done.ok:
        state = f"connected, but {owner} accepted no connection"
    else:
        state = f"closed or filtered after {done.duration_s:.1f}s"
    return reached, f"{probe.device} -> {target}:{port} {state}"


async def _route(ctx: ProbeContext, probe: Probe) -> Observed:
    prefix = probe.params["prefix"]
    entries = (await _vtysh_json(ctx, probe.device, f"show ip route {prefix} json")).get(prefix, [])
    selected = next((e for e in entries if e.get("selected")), None)
    if selected is None:
        return False, f"{probe.device}: no selected route to {prefix}"
    hops = selected.get("nexthops", [])
    described = ", ".join(h.get("ip") or h.get("interfaceName") or "blackhole" for h in hops)
    evidence = f"{probe.device}: {prefix} via {described} ({selected.get('protocol')})"
    holds = True
    if "via" in probe.params:
        matches = [h.get("ip") == probe.params["via"] for h in hops]
        holds = all(matches) if probe.params.get("sole") else any(matches)
    if probe.params.get("blackhole"):
        holds = holds and any(h.get("blackhole") for h in hops)
    return holds, evidence


async def _bgp_route(ctx: ProbeContext, probe: Probe) -> Observed:
    prefix, peer = probe.params["prefix"], probe.params["not_from"]
    routed, evidence = await _route(ctx, probe.model_copy(update={"params": {"prefix": prefix}}))
    shown = await _vtysh_json(ctx, probe.device, f"show bgp ipv4 unicast {prefix} json")
    peers = [str(p.get("peer", {}).get("peerId", "")) for p in shown.get("paths", [])]
    evidence += f"; BGP paths from {', '.join(peers) or 'no peer'}"
    return routed and peer not in peers, evidence


async def _ospf_full(ctx: ProbeContext, probe: Probe) -> Observed:
    neighbor = probe.params["neighbor"]
    shown = await _vtysh_json(ctx, probe.device, "show ip ospf neighbor json")
    entries = shown.get("neighbors", {}).get(neighbor, [])
    states = [str(e.get("nbrState", "")) for e in entries]
    full = any(s.startswith("Full") for s in states)
    return full, f"{probe.device}: neighbour {neighbor} state {', '.join(states) or 'absent'}"


async def _config(ctx: ProbeContext, probe: Probe) -> Observed:
    pattern = probe.params["pattern"].strip()
    done = ran(await ctx.lab.vtysh(probe.device, "show running-config"), "show running-config")
    if not done.ok or "end" not in done.stdout.split():
        raise ProbeUnavailable(f"{probe.device}: no complete running-config")
    lines = [line.strip() for line in done.stdout.splitlines()]
    if probe.params.get("match") == "prefix":
        found = any(line.startswith(pattern) for line in lines)
    else:
        found = pattern in lines
    return found, f"{probe.device}: running-config {'has' if found else 'lacks'} '{pattern}'"


async def _ip_json(ctx: ProbeContext, device: str, argv: list[str]) -> list[Any]:
    """`ip -j …` output; an interface that does not exist reads as nothing."""
    done = ran(await ctx.lab.exec(device, argv), " ".join(argv[:4]))
    if not done.ok and "does not exist" in done.stderr:
        return []
    parsed = _json(done, " ".join(argv[:4]))
    return parsed if isinstance(parsed, list) else []


async def _link_up(ctx: ProbeContext, probe: Probe) -> Observed:
    iface = probe.params["interface"]
    links = await _ip_json(ctx, probe.device, ["ip", "-j", "link", "show", "dev", iface])
    up = bool(links) and "UP" in links[0].get("flags", [])
    return up, f"{probe.device} {iface} is {'up' if up else 'down'}"


async def _default_route(ctx: ProbeContext, probe: Probe) -> Observed:
    routes = await _ip_json(ctx, probe.device, ["ip", "-j", "route", "show", "default"])
    gateway = routes[0].get("gateway") if routes else None
    return gateway == probe.params["gateway"], f"{probe.device}: default via {gateway}"


async def _address(ctx: ProbeContext, probe: Probe) -> Observed:
    iface = probe.params["interface"]
    argv = ["ip", "-j", "-4", "address", "show", "dev", iface]
    info = await _ip_json(ctx, probe.device, argv)
    addresses = [f"{a['local']}/{a['prefixlen']}" for i in info for a in i.get("addr_info", [])]
    holds = probe.params["address"] in addresses
    return holds, f"{probe.device} {iface}: {', '.join(addresses) or 'no address'}"


async def _bgp_session(ctx: ProbeContext, probe: Probe) -> Observed:
    peer = probe.params["peer"]
    shown = await _vtysh_json(ctx, probe.device, "show bgp summary json")
    state = shown.get("ipv4Unicast", {}).get("peers", {}).get(peer, {}).get("state", "absent")
    return state == "Established", f"{probe.device}: BGP session with {peer} is {state}"


async def _path(ctx: ProbeContext, probe: Probe) -> Observed:
    target, owners = probe.params["target"], probe.params["owners"]
    argv = ["traceroute", "-n", "-q", "1", "-w", "1", "-m", "30", target]
    done = ran(await ctx.lab.exec(probe.device, argv, timeout=45), "traceroute")
    trace = parse_traceroute(probe.device, target, target, done.stdout)
    hops = trace.hops[:-1] if trace.reached else trace.hops
    crossed = [owners.get(h.address or "", h.address or "*") for h in hops]
    unknown = [h.address or "*" for h in hops if (h.address or "") not in owners]
    holds = trace.reached and not unknown and crossed == probe.params["routers"]
    arrival = "arrives" if trace.reached else "does not arrive"
    evidence = f"{probe.device} -> {target} crosses {' '.join(crossed) or 'nothing'}, {arrival}"
    if unknown:
        evidence += f"; hops the plan does not know: {', '.join(unknown)}"
    return holds, evidence


CHECKS: dict[str, Callable[[ProbeContext, Probe], Awaitable[Observed]]] = {
    "ping": _ping,
    "route": _route,
    "ospf_full": _ospf_full,
    "config": _config,
    "link_up": _link_up,
    "default_route": _default_route,
    "address": _address,
    "bgp_session": _bgp_session,
    "tcp": _tcp,
    "path": _path,
    "bgp_route": _bgp_route,
}


async def run_probe(ctx: ProbeContext, probe: Probe) -> ProbeResult:
    try:
        observed, evidence = await CHECKS[probe.kind](ctx, probe)
    except ProbeUnavailable as exc:
        return ProbeResult(
            id=probe.id, description=probe.description, passed=False, evidence=f"not run: {exc}"
        )
    passed = observed == probe.params.get("expect", True)
    return ProbeResult(id=probe.id, description=probe.description, passed=passed, evidence=evidence)


async def run_probes(
    lab: LiveLab, probes: list[Probe], owners: Owners | None, concurrency: int = 4
) -> list[ProbeResult]:
    """Run probes a few at a time; results in the order of ``probes``. ``owners`` maps each
    planned address to its device; None (outage sampling only) skips the witness."""
    ctx = ProbeContext(lab, owners)
    results: list[ProbeResult | None] = [None] * len(probes)
    limiter = anyio.Semaphore(concurrency)

    async def one(index: int, probe: Probe) -> None:
        async with limiter:
            results[index] = await run_probe(ctx, probe)

    async with anyio.create_task_group() as group:
        for index, probe in enumerate(probes):
            group.start_soon(one, index, probe)
    return [r for r in results if r is not None]


def owners_of(public: PublicHalf) -> dict[str, str]:
    """Each address of the plan and the device it belongs to."""
    return {
        iface.address.split("/")[0]: device.name
        for device in public.devices
        for iface in device.interfaces
        if iface.address
    }
