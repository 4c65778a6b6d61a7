"""The lab's DHCP and DNS servers, read through `show` and repaired with the `service` tool.

The conventions come from the public topology: a host's gateway serves it one address, the
host's own, handing out the gateway's LAN address and the one resolver the lab runs; the zone
names every host `<host>.<zone>` at its address. A misspelt option name is put right by the
nearest one dnsmasq knows.
"""

from __future__ import annotations

import difflib
import ipaddress

from netdojo.clients.heuristic.actor import Actor
from netdojo.clients.heuristic.model import Snapshot
from netdojo.clients.heuristic.observe import show
from netdojo.clients.session import ToolSession

DHCP_CONF = "/etc/dnsmasq-dhcp.conf"
DNS_CONF = "/etc/dnsmasq-dns.conf"
OPTIONS = (
    "port", "interface", "bind-dynamic", "bind-interfaces", "dhcp-authoritative", "dhcp-range",
    "dhcp-option", "dhcp-leasefile", "dhcp-host", "pid-file", "log-facility", "no-resolv",
    "no-hosts", "listen-address", "local", "host-record", "domain",
)  # fmt: skip


async def read_file(session: ToolSession, device: str, path: str) -> list[str] | None:
    """The lines of a dnsmasq file on ``device``, or None when it has none at ``path``."""
    text = (await show(session, device, f"cat {path}")).get("text", "")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines if lines and all("=" in x or x in OPTIONS for x in lines) else None


def _spelt(line: str) -> str:
    key, _, value = line.partition("=")
    if key in OPTIONS:
        return line
    near = difflib.get_close_matches(key, OPTIONS, n=1, cutoff=0.6)
    return f"{near[0]}={value}" if near and value else line


async def run_service(actor: Actor, device: str, service: str, lines: list[str] | None) -> bool:
    """Restart ``service`` on ``device``, with ``lines`` as its new file when given."""
    config = None if lines is None else "\n".join(lines) + "\n"
    why = f"{service} {'rewritten and ' if lines else ''}restarted"
    return await actor.service(device, service, config, why)


def _scope(lines: list[str], host: ipaddress.IPv4Interface, gateway: str, dns: str | None
           ) -> list[str]:  # fmt: skip
    fixed = []
    for line in map(_spelt, lines):
        key, _, value = line.partition("=")
        if key == "dhcp-range":
            rest = value.split(",")[2:]
            line = f"dhcp-range={host.ip},{host.ip}," + ",".join(rest)
        elif key == "dhcp-host" and str(host.ip) in value.split(","):
            continue
        elif value.startswith("option:router,"):
            line = f"dhcp-option=option:router,{gateway}"
        elif value.startswith("option:dns-server,") and dns:
            line = f"dhcp-option=option:dns-server,{dns}"
        fixed.append(line)
    return fixed


def _zone(lines: list[str], addresses: dict[str, str]) -> list[str]:
    fixed = []
    for line in map(_spelt, lines):
        key, _, value = line.partition("=")
        name = value.split(",")[0]
        host = name.split(".")[0]
        if key == "host-record" and host in addresses:
            line = f"host-record={name},{addresses[host]}"
        fixed.append(line)
    return fixed


async def fix_services(session: ToolSession, snap: Snapshot, actor: Actor) -> bool:
    """Repair the DNS zone and every host's DHCP scope; True when something changed."""
    topo = snap.topo
    addresses = {
        h: str(port.address.ip) for h in topo.hosts for port in topo.ports[h] if port.address
    }
    changed, dns = False, None
    for router in topo.routers:
        zone = await read_file(session, router, DNS_CONF)
        if zone is None:
            continue
        dns = next((x.split("=", 1)[1] for x in zone if x.startswith("listen-address=")), None)
        fixed = _zone(zone, addresses)
        if fixed != zone:
            changed |= await run_service(actor, router, "dns-server", fixed)
    for host in topo.hosts:
        (port,) = topo.ports[host][:1] or [None]
        if port is None or port.address is None:
            continue
        peers = [p for d in topo.links[port.link] if d != host for p in topo.ports[d]
                 if p.link == port.link]  # fmt: skip
        if not peers or peers[0].address is None:
            continue
        gateway = peers[0]
        scope = await read_file(session, gateway.device, DHCP_CONF)
        if scope is None:
            continue
        fixed = _scope(scope, port.address, str(gateway.address.ip), dns)
        if fixed != scope:
            await run_service(actor, gateway.device, "dhcp-server", fixed)
            await run_service(actor, host, "dhcp-client", None)
            changed = True
    return changed
