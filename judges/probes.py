"""Run hidden tests (`Probe`s) on a live lab; each gives pass/fail with evidence."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from pydantic import BaseModel

from netdojo.labs.runtime import LiveLab
from netdojo.scenarios.model import Probe
from netdojo.tools.reachability import parse_traceroute


class ProbeResult(BaseModel):
    id: str
    description: str
    passed: bool
    evidence: str


Observed = tuple[bool, str]  # (what the probe observed holds, evidence)


async def _ping(lab: LiveLab, probe: Probe) -> Observed:
    target = probe.params["target"]
    done = await lab.exec(probe.device, ["ping", "-c", "2", "-i", "0.2", "-W", "1", "-q", target])
    summary = next((line for line in done.stdout.splitlines() if "packet loss" in line), "")
    return done.ok, f"ping {target} from {probe.device}: {summary or done.stderr.strip()}"


def _vtysh_json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return {}


async def _route(lab: LiveLab, probe: Probe) -> Observed:
    prefix = probe.params["prefix"]
    done = await lab.vtysh(probe.device, f"show ip route {prefix} json")
    entries = _vtysh_json(done.stdout).get(prefix, [])
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


async def _bgp_route(lab: LiveLab, probe: Probe) -> Observed:
    prefix, peer = probe.params["prefix"], probe.params["not_from"]
    routed, evidence = await _route(lab, probe.model_copy(update={"params": {"prefix": prefix}}))
    done = await lab.vtysh(probe.device, f"show bgp ipv4 unicast {prefix} json")
    paths = _vtysh_json(done.stdout).get("paths", [])
    peers = [str(p.get("peer", {}).get("peerId", "")) for p in paths]
    learnt = peer in peers
    evidence += f"; BGP paths from {', '.join(peers) or 'no peer'}"
    return routed and not learnt, evidence


async def _ospf_full(lab: LiveLab, probe: Probe) -> Observed:
    neighbor = probe.params["neighbor"]
    done = await lab.vtysh(probe.device, "show ip ospf neighbor json")
    entries = _vtysh_json(done.stdout).get("neighbors", {}).get(neighbor, [])
    states = [str(e.get("nbrState", "")) for e in entries]
    full = any(s.startswith("Full") for s in states)
    return full, f"{probe.device}: neighbour {neighbor} state {', '.join(states) or 'absent'}"


async def _config(lab: LiveLab, probe: Probe) -> Observed:
    pattern = probe.params["pattern"].strip()
    done = await lab.vtysh(probe.device, "show running-config")
    lines = [line.strip() for line in done.stdout.splitlines()]
    if probe.params.get("match") == "prefix":
        found = any(line.startswith(pattern) for line in lines)
    else:
        found = pattern in lines
    return (
        found,
        f"{probe.device}: running-config {'has' if found else 'lacks'} '{pattern.strip()}'",
    )


async def _link_up(lab: LiveLab, probe: Probe) -> Observed:
    iface = probe.params["interface"]
    done = await lab.exec(probe.device, ["ip", "-j", "link", "show", "dev", iface])
    links = json.loads(done.stdout) if done.ok else []
    up = bool(links) and "UP" in links[0].get("flags", [])
    return up, f"{probe.device} {iface} is {'up' if up else 'down'}"


async def _default_route(lab: LiveLab, probe: Probe) -> Observed:
    done = await lab.exec(probe.device, ["ip", "-j", "route", "show", "default"])
    routes = json.loads(done.stdout) if done.ok and done.stdout.strip() else []
    gateway = routes[0].get("gateway") if routes else None
    return gateway == probe.params["gateway"], f"{probe.device}: default via {gateway}"


async def _address(lab: LiveLab, probe: Probe) -> Observed:
    iface = probe.params["interface"]
    done = await lab.exec(probe.device, ["ip", "-j", "-4", "address", "show", "dev", iface])
    info = json.loads(done.stdout) if done.ok and done.stdout.strip() else []
    addresses = [f"{a['local']}/{a['prefixlen']}" for i in info for a in i.get("addr_info", [])]
    holds = probe.params["address"] in addresses
    return holds, f"{probe.device} {iface}: {', '.join(addresses) or 'no address'}"


async def _bgp_session(lab: LiveLab, probe: Probe) -> Observed:
    peer = probe.params["peer"]
    done = await lab.vtysh(probe.device, "show bgp summary json")
    peers = _vtysh_json(done.stdout).get("ipv4Unicast", {}).get("peers", {})
    state = peers.get(peer, {}).get("state", "absent")
    return state == "Established", f"{probe.device}: BGP session with {peer} is {state}"


async def _tcp(lab: LiveLab, probe: Probe) -> Observed:
    target, port = probe.params["target"], str(probe.params["port"])
    done = await lab.exec(probe.device, ["nc", "-z", "-w", "2", target, port])
    state = "open" if done.ok else f"closed or filtered after {done.duration_s:.1f}s"
    return done.ok, f"{probe.device} -> {target}:{port} {state}"


async def _path(lab: LiveLab, probe: Probe) -> Observed:
    target, owners = probe.params["target"], probe.params["owners"]
    argv = ["traceroute", "-n", "-q", "1", "-w", "1", "-m", "30", target]
    done = await lab.exec(probe.device, argv, timeout=45)
    trace = parse_traceroute(probe.device, target, target, done.stdout)
    crossed = [owners.get(h.address or "", h.address or "*") for h in trace.hops]
    if trace.reached:
        crossed = crossed[:-1]
    holds = trace.reached and crossed == probe.params["routers"]
    arrival = "arrives" if trace.reached else "does not arrive"
    return holds, f"{probe.device} -> {target} crosses {' '.join(crossed) or 'nothing'}, {arrival}"


CHECKS: dict[str, Callable[[LiveLab, Probe], Awaitable[Observed]]] = {
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


async def run_probe(lab: LiveLab, probe: Probe) -> ProbeResult:
    observed, evidence = await CHECKS[probe.kind](lab, probe)
    passed = observed == probe.params.get("expect", True)
    return ProbeResult(id=probe.id, description=probe.description, passed=passed, evidence=evidence)


async def run_probes(lab: LiveLab, probes: list[Probe], concurrency: int = 4) -> list[ProbeResult]:
    """Run probes a few at a time; results in the order of ``probes``."""
    results: list[ProbeResult | None] = [None] * len(probes)
    limiter = anyio.Semaphore(concurrency)

    async def one(index: int, probe: Probe) -> None:
        async with limiter:
            results[index] = await run_probe(lab, probe)

    async with anyio.create_task_group() as group:
        for index, probe in enumerate(probes):
            group.start_soon(one, index, probe)
    return [r for r in results if r is not None]
