"""A snapshot of every device's forwarding state: one exec per device, all at once.

What a snapshot holds is what an agent could change to make a probe pass without repairing
the network: interface addresses, link state and MAC addresses, routes that no routing
protocol installed (with their source), policy-routing rules, proxy and permanent neighbour
entries, the forwarding sysctls, every netfilter table and nft ruleset, and the FRR running
configuration. Each is a set of items (one line of text each) so that two snapshots compare
as sets. Routes a routing protocol installs and routes the kernel derives from addresses
move on their own and are left out; they follow from what is kept.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

import anyio
from pydantic import BaseModel, Field

from netdojo.judges.checks import JudgeError
from netdojo.labs.k8s.workload import CONTROL_PLANE
from netdojo.labs.runtime import LiveLab

Aspect = Literal[
    "address", "link", "route", "rule", "neighbour", "sysctl", "netfilter", "frr", "policy"
]
DYNAMIC_PROTOCOLS = {"kernel", "ospf", "bgp", "rip", "isis"}
SNAPSHOT_TIMEOUT_S = 30.0
SNAPSHOT_MAX_OUTPUT = 1024 * 1024
_MARK = "@@netdojo-snapshot:"
_STATUS = "@@netdojo-status:"
_SECTIONS = (
    ("address", "ip -j address show"),
    ("route", "ip -j route show table all"),
    ("route6", "ip -j -6 route show table all"),
    ("rule", "ip -j rule show"),
    ("proxy", "ip -j neigh show proxy"),
    ("permanent", "ip -j neigh show nud permanent"),
    (
        "sysctl",
        "grep -H . /proc/sys/net/ipv4/ip_forward /proc/sys/net/ipv4/conf/*/proxy_arp "
        "/proc/sys/net/ipv4/conf/*/forwarding /proc/sys/net/ipv4/conf/*/route_localnet "
        "/proc/sys/net/ipv4/conf/*/accept_local",
    ),
    ("iptables", "iptables-save"),
    ("nft", "nft list ruleset"),
)
_FRR_SECTION = ("frr", "vtysh -c 'show running-config'")
_COUNTERS = re.compile(r"\s*\[\d+:\d+\]|\s*counter packets \d+ bytes \d+")
_FRR_NOISE = ("Building configuration", "Current configuration", "frr version", "end", "!")


class SnapshotError(JudgeError):
    """A device's state could not be read; the judge cannot vouch for the episode."""


class DeviceState(BaseModel):
    device: str
    items: dict[Aspect, list[str]] = Field(default_factory=dict)
    addresses: list[str] = Field(
        default_factory=list, description="its IPv4 addresses and global IPv6 addresses"
    )
    macs: list[str] = Field(default_factory=list)

    def of(self, aspect: Aspect) -> set[str]:
        return set(self.items.get(aspect, []))


LabState = dict[str, DeviceState]


def _script(router: bool) -> str:
    sections = [*_SECTIONS, _FRR_SECTION] if router else list(_SECTIONS)
    return "; ".join(
        f"echo '{_MARK}{name}'; {command} 2>&1; echo \"{_STATUS}$?\"" for name, command in sections
    )


def _split(device: str, output: str) -> dict[str, str]:
    """Each section's output; a section whose command failed is an error."""
    parts: dict[str, list[str]] = {}
    current: list[str] = []
    for line in output.splitlines():
        if line.startswith(_MARK):
            current = parts.setdefault(line[len(_MARK) :], [])
        elif line.startswith(_STATUS):
            if line != f"{_STATUS}0":
                name = next((n for n, lines in parts.items() if lines is current), "?")
                raise SnapshotError(f"{device}: `{name}` failed: {' '.join(current)[:200]}")
        else:
            current.append(line)
    return {name: "\n".join(lines) for name, lines in parts.items()}


def _load(device: str, name: str, text: str) -> list[Any]:
    try:
        parsed = json.loads(text) if text.strip() else []
    except json.JSONDecodeError:
        raise SnapshotError(f"{device}: `{name}` printed no JSON: {text[:200]}") from None
    return parsed if isinstance(parsed, list) else []


def _kept(info: dict[str, Any]) -> bool:
    """Whether an address is one an agent could fake with: IPv4 but the loopback's 127/8, and
    global IPv6 (link-local and ::1 come and go with the interfaces themselves)."""
    if info.get("family") == "inet":
        return not str(info.get("local", "")).startswith("127.")
    return info.get("family") == "inet6" and info.get("scope") == "global"


def _interfaces(state: DeviceState, entries: list[Any]) -> None:
    addresses, links = [], []
    for iface in entries:
        name = iface.get("ifname", "?")
        admin = "up" if "UP" in iface.get("flags", []) else "down"
        links.append(f"{name} {admin} mtu {iface.get('mtu')}")
        if iface.get("address") and name != "lo":
            state.macs.append(iface["address"])
            links.append(f"{name} mac {iface['address']}")
        for info in iface.get("addr_info", []):
            if not _kept(info):
                continue
            state.addresses.append(info["local"])
            addresses.append(f"{name} {info['local']}/{info['prefixlen']}")
    state.items["address"], state.items["link"] = sorted(addresses), sorted(links)


def route_item(route: dict[str, Any]) -> str:
    """One route as an item: table, type, destination, next hops, device and source."""
    hops = route.get("nexthops") or [route]
    via = ",".join(f"{h.get('gateway', '-')}%{h.get('dev', '-')}" for h in hops)
    return (
        f"{route.get('table', 'main')} {route.get('type', 'unicast')} {route.get('dst')} "
        f"via {via} proto {route.get('protocol', 'boot')}"
    )


def _routes(entries: list[Any]) -> list[str]:
    return sorted(
        route_item(r) for r in entries if r.get("protocol", "boot") not in DYNAMIC_PROTOCOLS
    )


def _netfilter(iptables: str, nft: str) -> list[str]:
    items, table = [], "?"
    for raw in iptables.splitlines():
        line = _COUNTERS.sub("", raw).strip()
        if not line or line.startswith("#") or line == "COMMIT":
            continue
        if line.startswith("*"):
            table = line[1:]
            continue
        items.append(f"iptables {table} {line}")
    context: list[str] = []
    for raw in nft.splitlines():
        line = _COUNTERS.sub("", raw).strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("{"):
            context.append(line[:-1].strip())
        elif line == "}":
            context = context[:-1]
        else:
            items.append(f"nft {' / '.join(context)} :: {line}")
    return sorted(items)


def frr_items(config: str) -> list[str]:
    """Running-configuration lines, each with the section it sits in."""
    items, section = [], ""
    for raw in config.splitlines():
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped or stripped.startswith(_FRR_NOISE):
            continue
        if line == stripped:
            section = "" if stripped in ("exit", "exit-address-family") else stripped
            if stripped not in ("exit", "exit-address-family"):
                items.append(stripped)
            continue
        if stripped not in ("exit", "exit-address-family"):
            items.append(f"{section} :: {stripped}")
    return sorted(items)


def parse_state(device: str, output: str, router: bool) -> DeviceState:
    parts = _split(device, output)
    expected = [name for name, _ in _SECTIONS] + (["frr"] if router else [])
    missing = [name for name in expected if name not in parts]
    if missing:
        raise SnapshotError(f"{device}: no output for {', '.join(missing)}")
    state = DeviceState(device=device)
    _interfaces(state, _load(device, "ip address", parts["address"]))
    routes = _load(device, "ip route", parts["route"])
    routes += _load(device, "ip -6 route", parts["route6"])
    state.items["route"] = _routes(routes)
    state.items["rule"] = sorted(
        json.dumps(r, sort_keys=True) for r in _load(device, "ip rule", parts["rule"])
    )
    neighbours = _load(device, "ip neigh", parts["proxy"]) + _load(
        device, "ip neigh", parts["permanent"]
    )
    state.items["neighbour"] = sorted(json.dumps(n, sort_keys=True) for n in neighbours)
    state.items["sysctl"] = sorted(
        line.removeprefix("/proc/sys/") for line in parts["sysctl"].splitlines() if ":" in line
    )
    state.items["netfilter"] = _netfilter(parts["iptables"], parts["nft"])
    if router:
        if "end" not in parts["frr"].split():
            raise SnapshotError(f"{device}: incomplete FRR running-config: {parts['frr'][:200]}")
        state.items["frr"] = frr_items(parts["frr"])
    return state


async def snapshot_device(lab: LiveLab, device: str, router: bool) -> DeviceState:
    done = await lab.exec_entered(
        device,
        ["sh", "-c", _script(router)],
        timeout=SNAPSHOT_TIMEOUT_S,
        max_output=SNAPSHOT_MAX_OUTPUT,
    )
    if done.timed_out or done.truncated or done.exit_code is None:
        why = "timed out" if done.timed_out else "cut short" if done.truncated else "failed"
        raise SnapshotError(f"{device}: snapshot {why}: {done.stderr.strip()[:200]}")
    try:
        return parse_state(device, done.stdout, router)
    except SnapshotError as exc:
        raise SnapshotError(
            f"{exc} (exit {done.exit_code}, {len(done.stdout)} bytes out, "
            f"stderr {done.stderr.strip()[:200]!r})"
        ) from None


def policy_item(manifest: dict[str, Any]) -> str:
    """A NetworkPolicy as an item: ``namespace/name`` and its spec as canonical JSON."""
    meta = manifest["metadata"]
    spec = json.dumps(manifest.get("spec") or {}, sort_keys=True, separators=(",", ":"))
    return f"{meta['namespace']}/{meta['name']} {spec}"


async def snapshot_lab(lab: LiveLab) -> LabState:
    """Every device's state, read concurrently; `SnapshotError` names a device that failed.
    A lab with a Kubernetes cluster adds the cluster (`CONTROL_PLANE`) with its NetworkPolicies."""
    states: LabState = {}
    errors: list[str] = []

    async def one(device: str, router: bool) -> None:
        try:
            states[device] = await snapshot_device(lab, device, router)
        except SnapshotError as exc:
            errors.append(str(exc))

    async def policies() -> None:
        assert lab.cluster is not None
        inputs = await lab.cluster.policy_inputs()
        items = [policy_item(m) for m in inputs if m["kind"] == "NetworkPolicy"]
        states[CONTROL_PLANE] = DeviceState(device=CONTROL_PLANE, items={"policy": sorted(items)})

    async with anyio.create_task_group() as group:
        for spec in lab.spec.devices:
            group.start_soon(one, spec.name, spec.role == "router")
        if lab.cluster is not None:
            group.start_soon(policies)
    if errors:
        raise SnapshotError("; ".join(sorted(errors)))
    return {name: states[name] for name in sorted(states)}
