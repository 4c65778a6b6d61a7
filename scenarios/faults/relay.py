"""Relay faults (`scenarios.relay`): a gateway's relay sending its LAN's requests to an address
where no DHCP server runs, a relay that lost its relay line, and a server with no scope for
one relayed LAN.

An operator edits the relay's or the server's file and restarts it; the fault shows when the
host next asks for a lease (the injection renews it, as a reboot would). The fix restores the
file, restarts the relay or the server and renews the host's lease.
"""

from __future__ import annotations

import ipaddress

from netdojo.scenarios.faults.base import FaultContext, FaultPlan
from netdojo.scenarios.faults.services import lease_test, pick_client, service_call
from netdojo.scenarios.forwarding import Impact
from netdojo.scenarios.hidden_tests import DhcpLeaseTest
from netdojo.scenarios.model import Fault
from netdojo.scenarios.registry import fault
from netdojo.scenarios.relay import (
    place_relays,
    relay_conf,
    relayed_scopes,
    server_conf,
    server_identifiers,
)


def relayed_lease_test(ctx: FaultContext, tag: str, host: str, expect: bool = True
                       ) -> DhcpLeaseTest:  # fmt: skip
    """``host`` obtains (or, not ``expect``, obtains no) its lease through its relay, from the
    lab's server: a server the agent starts elsewhere, on the gateway say, serves no lease the
    test takes."""
    relays = ctx.derived(place_relays)
    servers = server_identifiers(ctx.network, relays)
    return lease_test(ctx, tag, host, dns=relays.address, servers=servers, expect=expect)


def _plan(
    ctx: FaultContext, tag: str, host: str, device: str, service: str, wrong: str, right: str,
    params: dict[str, object],
) -> FaultPlan:  # fmt: skip
    renew = service_call(host, "dhcp-client")
    return FaultPlan(
        Fault(
            type=tag,
            device=device,
            params={"host": host, **params},
            inject=[service_call(device, service, wrong), renew],
            fix=[service_call(device, service, right), renew],
            present=[relayed_lease_test(ctx, tag, host, expect=False)],
        ),
        Impact(isolated={host}),
        [relayed_lease_test(ctx, tag, host)],
    )


def _wrong_servers(ctx: FaultContext) -> list[str]:
    """Addresses a relay may be left pointing at, where no DHCP server runs: a retired server's
    (the loopback of a router that relays for no LAN and serves nothing) or the server's own
    with its last octet mistyped (an address no device has)."""
    relays = ctx.derived(place_relays)
    gateways = {gateway for gateway, _ in relays.relays.values()}
    loopbacks = {r.loopback for r in ctx.network.routers if r.loopback}
    retired = sorted(
        r.loopback for r in ctx.network.routers
        if r.loopback and r.name != relays.server and r.name not in gateways
    )  # fmt: skip
    server = ipaddress.ip_address(relays.address)
    typos = [
        str(address)
        for shift in (1, -1, 10, -10)
        if 0 < int(str(address := server + shift).rsplit(".", 1)[1]) < 255
        and str(address) not in loopbacks
    ]
    return retired + typos[:1]


@fault("dhcp.relay_wrong_server", routing={"ospf"})
def relay_wrong_server(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """A gateway's relay forwards its LAN's requests to an address where no DHCP server runs
    (a retired server's, or the server's mistyped): the host is left without an address."""
    if not (host := pick_client(ctx)):
        return None
    relays = ctx.derived(place_relays)
    gateway, local = relays.relays[host]
    if not (candidates := _wrong_servers(ctx)):
        return None
    wrong = ctx.rng.choice(candidates)
    return _plan(
        ctx, tag, host, gateway, "dhcp-relay", relay_conf(local, wrong),
        relay_conf(local, relays.address), {"server": wrong},
    )  # fmt: skip


@fault("dhcp.relay_missing", routing={"ospf"})
def relay_missing(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """A gateway's relay file lost its `dhcp-relay` line: dnsmasq runs with nothing to relay,
    nothing on the gateway listens for its LAN's requests, and the host is left without an
    address."""
    if not (host := pick_client(ctx)):
        return None
    relays = ctx.derived(place_relays)
    gateway, local = relays.relays[host]
    return _plan(
        ctx, tag, host, gateway, "dhcp-relay", relay_conf(None, relays.address),
        relay_conf(local, relays.address), {"relay": f"{local},{relays.address}"},
    )  # fmt: skip


@fault("dhcp.relay_scope_missing", routing={"ospf"})
def relay_scope_missing(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """The server's file has no scope for one relayed LAN (its range and router option gone):
    dnsmasq has no range for the requests that relay forwards, and the host is left without an
    address. One server file: at most one such fault an instance."""
    if "dhcp:server" in ctx.used or not (host := pick_client(ctx)):
        return None
    ctx.take("dhcp:server")
    relays = ctx.derived(place_relays)
    scopes = relayed_scopes(ctx.network, relays)
    kept = [scope for scope in scopes if scope.tag != host]
    return _plan(
        ctx, tag, host, relays.server, "dhcp-server", server_conf(relays, kept),
        server_conf(relays, scopes), {"scope": host},
    )  # fmt: skip
