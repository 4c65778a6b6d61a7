"""DHCP through relays, read through `show` and repaired with the `service` tool.

The conventions come from what the lab shows: the routers with a relay file relay their LANs'
requests, and the one router with a DHCP server file and no relay serves every LAN from its
loopback. A host's gateway relays from its own address on the host's LAN to that loopback; the
server holds a scope for every host LAN (the host's own address, as a lease always is) with
the LAN's gateway as its router option, written as the server's other scopes are.
"""

from __future__ import annotations

import ipaddress

from netdojo.clients.heuristic.actor import Actor
from netdojo.clients.heuristic.fixes_services import DHCP_CONF, read_file, run_service
from netdojo.clients.heuristic.model import Iface, Snapshot, Topology
from netdojo.clients.session import ToolSession

RELAY_CONF = "/etc/dnsmasq-relay.conf"
RELAY_KEY = "dhcp-relay"
RANGE_KEY = "dhcp-range"
DEFAULT_RANGE_TAIL = ("255.255.255.0", "10m")


def relay_lines(lines: list[str], local: str, server: str) -> list[str]:
    """A relay file relaying from ``local`` to ``server``: its relay line put right, or put
    back after `port=0` when it is gone."""
    wanted = f"{RELAY_KEY}={local},{server}"
    fixed: list[str] = []
    for line in lines:
        line = wanted if line.startswith(f"{RELAY_KEY}=") else line
        if line != wanted or wanted not in fixed:
            fixed.append(line)
    if wanted not in fixed:
        at = fixed.index("port=0") + 1 if "port=0" in fixed else 0
        fixed.insert(at, wanted)
    return fixed


def _range_of(line: str) -> tuple[str, ipaddress.IPv4Address, ipaddress.IPv4Address] | None:
    """A `dhcp-range` line's tag and first and last address."""
    key, _, value = line.partition("=")
    if key != RANGE_KEY:
        return None
    words = value.split(",")
    tag = next((w.split(":", 1)[1] for w in words if w.startswith("set:")), "")
    addresses = []
    for word in words:
        try:
            addresses.append(ipaddress.IPv4Address(word))
        except ValueError:
            continue
    if len(addresses) < 2:
        return None
    return tag, addresses[0], addresses[1]


def _tag_of(line: str) -> str | None:
    """The tag a scope's line belongs to (`set:T` of a range, `tag:T` of an option)."""
    _, _, value = line.partition("=")
    for word in value.split(","):
        if word.startswith(("set:", "tag:")):
            return word.split(":", 1)[1]
    return None


def scope_added(lines: list[str], host: str, address: Iface, gateway: str) -> list[str]:
    """The server's file with a scope for ``host`` (its own address, its gateway as router),
    written as the file's other scopes are, when no range covers the host's address."""
    ranges = [r for line in lines if (r := _range_of(line))]
    if any(first <= address.ip <= last for _, first, last in ranges):
        return lines
    tail = list(DEFAULT_RANGE_TAIL)
    sample = next((x for x in lines if _range_of(x)), None)
    if sample is not None:
        words = sample.partition("=")[2].split(",")
        tail = words[-2:] if len(words) >= 4 else tail
    new = [f"{RANGE_KEY}=set:{host},{address.ip},{address.ip},{','.join(tail)}"]
    if any(x.startswith("dhcp-option=tag:") and "option:router," in x for x in lines):
        new.append(f"dhcp-option=tag:{host},option:router,{gateway}")
    scoped = [i for i, x in enumerate(lines) if _tag_of(x) is not None]
    later = [i for i in scoped if (_tag_of(lines[i]) or "") > host]
    if later:
        at = later[0]
    elif scoped:
        at = scoped[-1] + 1
    else:
        at = next((i for i, x in enumerate(lines) if x.startswith("dhcp-option=")), len(lines))
    return lines[:at] + new + lines[at:]


def _lan(topo: Topology, host: str) -> tuple[Iface, str, Iface] | None:
    """A host's planned address, its gateway and the gateway's address on the LAN."""
    (port,) = topo.ports[host][:1] or [None]
    if port is None or port.address is None:
        return None
    gateway = topo.gateway_port(port.link)
    if gateway is None or gateway.address is None:
        return None
    return port.address, gateway.device, gateway.address


async def fix_relays(session: ToolSession, snap: Snapshot, actor: Actor) -> bool:
    """Repair every host's relay and the server's scopes; True when something changed."""
    topo = snap.topo
    relays = {r: lines for r in topo.routers if (lines := await read_file(session, r, RELAY_CONF))}
    if not relays:
        return False
    servers = {
        r: lines
        for r in topo.routers
        if r not in relays and (lines := await read_file(session, r, DHCP_CONF))
    }
    loopbacks = {r: lo for r in servers if (lo := snap.loopback(r))}
    if len(loopbacks) != 1:
        return False
    ((server, loopback),) = loopbacks.items()
    renew: list[str] = []
    scope = servers[server]
    for host in topo.hosts:
        if (lan := _lan(topo, host)) is None:
            continue
        address, gateway, local = lan
        if gateway in relays:
            fixed = relay_lines(relays[gateway], str(local.ip), str(loopback.ip))
            if fixed != relays[gateway]:
                await run_service(actor, gateway, "dhcp-relay", fixed)
                relays[gateway] = fixed
                renew.append(host)
        widened = scope_added(scope, host, address, str(local.ip))
        if widened != scope:
            scope = widened
            renew.append(host)
    if scope != servers[server]:
        await run_service(actor, server, "dhcp-server", scope)
    for host in dict.fromkeys(renew):
        await run_service(actor, host, "dhcp-client", None)
    return bool(renew)
