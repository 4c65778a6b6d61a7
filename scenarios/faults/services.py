"""Service faults (`scenarios.services`): a DHCP server's scope outside its subnet, a wrong
gateway or resolver handed out, a DNS record pointing to the wrong host, a zone with a line
dnsmasq refuses (so the DNS server does not start).

An operator edits a server's file and restarts it; a DHCP fault shows when the host next asks
for a lease (the injection renews it, as a reboot would). The fix restores the file, restarts
the server and, for DHCP, renews the host's lease.
"""

from __future__ import annotations

import dataclasses

from netdojo.scenarios.faults.base import FaultContext, FaultPlan
from netdojo.scenarios.forwarding import Impact
from netdojo.scenarios.hidden_tests import (
    DhcpLeaseParams,
    DhcpLeaseTest,
    DnsAnswerParams,
    DnsAnswerTest,
    HiddenTest,
)
from netdojo.scenarios.model import Fault, ToolCall
from netdojo.scenarios.registry import fault
from netdojo.scenarios.services import (
    DhcpScope,
    Services,
    dhcp_conf,
    dhcp_scope,
    dns_conf,
    other_subnet,
    place_services,
    zone_records,
)
from netdojo.scenarios.symptoms import Observation


def service_call(device: str, service: str, config: str | None = None) -> ToolCall:
    arguments: dict[str, object] = {"device": device, "service": service}
    if config is not None:
        arguments["config"] = config
    return ToolCall(tool="service", arguments=arguments)


def lease_test(ctx: FaultContext, tag: str, host: str, **params: object) -> DhcpLeaseTest:
    gateway = ctx.network.node(host).gateway
    dns = ctx.derived(place_services).dns_address
    fields: dict[str, object] = {"subnet": ctx.network.lans[host], "router": gateway, "dns": dns}
    fields.update(params)
    expect = fields.get("expect", True)
    return DhcpLeaseTest(
        id=f"{tag}:lease:{host}",
        description=f"{host} {'obtains' if expect else 'obtains no'} the lease its LAN's "
        "DHCP server should give",
        device=host,
        params=DhcpLeaseParams.model_validate(fields),
    )


def answer_test(
    tag: str, client: str, name: str, address: str, server: str | None, expect: bool = True
) -> DnsAnswerTest:
    via = f"@{server}" if server else "its own resolver"
    return DnsAnswerTest(
        id=f"{tag}:dns:{client}:{name}:{'direct' if server else 'own'}",
        description=f"{client} resolves {name} to {address} ({via})",
        device=client,
        params=DnsAnswerParams(name=name, address=address, server=server, expect=expect),
    )


def pick_client(ctx: FaultContext) -> str | None:
    hosts = sorted(ctx.network.lans)
    ctx.rng.shuffle(hosts)
    return next((h for h in hosts if ctx.take(f"host:{h}", f"dhcp:{h}")), None)


def _dhcp_plan(
    ctx: FaultContext, tag: str, host: str, wrong: DhcpScope | str, present: HiddenTest,
    impact: Impact, flows: frozenset[Observation], params: dict[str, object],
) -> FaultPlan:  # fmt: skip
    services = ctx.derived(place_services)
    router, _ = services.dhcp[host]
    right = dhcp_scope(ctx.network, services, host)
    renew = service_call(host, "dhcp-client")
    wrong = dhcp_conf(wrong) if isinstance(wrong, DhcpScope) else wrong
    return FaultPlan(
        Fault(
            type=tag,
            device=router,
            params={"host": host, **params},
            inject=[service_call(router, "dhcp-server", wrong), renew],
            fix=[service_call(router, "dhcp-server", dhcp_conf(right)), renew],
            present=[present],
        ),
        impact,
        [lease_test(ctx, tag, host)],
        flows,
    )


@fault("dhcp.scope_outside")
def scope_outside(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """The scope's range lies in another subnet than the LAN port's: the server answers no
    request there, and the host is left without an address."""
    if not (host := pick_client(ctx)):
        return None
    right = dhcp_scope(ctx.network, ctx.derived(place_services), host)
    shift = ctx.rng.choice((1, 2, -1, 16))
    first = other_subnet(right.first, shift)
    wrong = dataclasses.replace(right, first=first, last=first)
    present = lease_test(ctx, tag, host, expect=False)
    params: dict[str, object] = {"range": first}
    return _dhcp_plan(
        ctx, tag, host, dhcp_conf(wrong), present, Impact(isolated={host}), frozenset(), params
    )


@fault("dhcp.scope_exhausted")
def scope_exhausted(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """The scope's only address is bound (`dhcp-host`) to another device's MAC: the pool has
    nothing left for the host, which is left without an address."""
    if not (host := pick_client(ctx)):
        return None
    right = dhcp_scope(ctx.network, ctx.derived(place_services), host)
    mac = "02:" + ":".join(f"{ctx.rng.randint(0, 255):02x}" for _ in range(5))
    wrong = dataclasses.replace(right, reserved=mac)
    present = lease_test(ctx, tag, host, expect=False)
    params: dict[str, object] = {"reserved_for": mac}
    return _dhcp_plan(
        ctx, tag, host, dhcp_conf(wrong), present, Impact(isolated={host}), frozenset(), params
    )


MISSPELT = {
    "dhcp-range": ("dhcp-rnage", "dhcp_range", "dhcprange"),
    "host-record": ("host-recrod", "host_record", "hostrecord"),
}


def _misspelt(ctx: FaultContext, text: str, line: str) -> str:
    """``text`` with the option name of ``line`` misspelt, as dnsmasq refuses it."""
    key, value = line.split("=", 1)
    return text.replace(line + "\n", f"{ctx.rng.choice(MISSPELT[key])}={value}\n", 1)


@fault("dhcp.config_broken")
def config_broken(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """The scope's option name is misspelt: dnsmasq refuses the file, the DHCP server does
    not start, and the host is left without an address."""
    if not (host := pick_client(ctx)):
        return None
    text = dhcp_conf(dhcp_scope(ctx.network, ctx.derived(place_services), host))
    line = next(x for x in text.splitlines() if x.startswith("dhcp-range="))
    wrong = _misspelt(ctx, text, line)
    present = lease_test(ctx, tag, host, expect=False)
    isolated = Impact(isolated={host})
    return _dhcp_plan(ctx, tag, host, wrong, present, isolated, frozenset(), {"line": line})


def _unused(ctx: FaultContext, host: str) -> str:
    """An address in ``host``'s LAN that no device has."""
    lan = ctx.network.lans[host]
    used = {ctx.network.node(host).gateway, ctx.network.host_address(host)}
    base = lan.rsplit(".", 1)[0]
    return next(a for n in (253, 2, 252, 3) if (a := f"{base}.{n}") not in used)


@fault("dhcp.wrong_router")
def wrong_router(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """The router option names an address on the LAN that is not the gateway: the host takes
    a default route that leads nowhere."""
    if not (host := pick_client(ctx)):
        return None
    right = dhcp_scope(ctx.network, ctx.derived(place_services), host)
    wrong_gateway = _unused(ctx, host)
    wrong = dataclasses.replace(right, router=wrong_gateway)
    present = lease_test(ctx, tag, host, router=wrong_gateway)
    impact = Impact(isolated={host})
    return _dhcp_plan(
        ctx, tag, host, wrong, present, impact, frozenset(), {"router": wrong_gateway}
    )


def _peer(ctx: FaultContext, host: str) -> str | None:
    others = sorted(h for h in ctx.network.lans if h != host)
    return ctx.rng.choice(others) if others else None


@fault("dhcp.wrong_resolver")
def wrong_resolver(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """The dns-server option names another router's loopback, where no DNS server runs: the
    host's own lookups are refused, while the lab's DNS server still answers."""
    if not (host := pick_client(ctx)) or not (peer := _peer(ctx, host)):
        return None
    services = ctx.derived(place_services)
    loopbacks = sorted(
        r.loopback for r in ctx.network.routers
        if r.loopback and r.name != services.dns_router
    )  # fmt: skip
    if not loopbacks:
        return None
    resolver = ctx.rng.choice(loopbacks)
    right = dhcp_scope(ctx.network, services, host)
    wrong = dataclasses.replace(right, dns=resolver)
    present = lease_test(ctx, tag, host, dns=resolver)
    name = services.name_of(peer)
    flows = frozenset({Observation("unresolved", (host, peer))})
    plan = _dhcp_plan(
        ctx, tag, host, dhcp_conf(wrong), present, Impact(), flows, {"resolver": resolver}
    )
    lookup = answer_test(tag, host, name, ctx.network.host_address(peer), None)
    return dataclasses.replace(plan, healthy=[*plan.healthy, lookup])


def _dns_plan(
    ctx: FaultContext, tag: str, services: Services, records: dict[str, str],
    present: HiddenTest, healthy: list[HiddenTest], flows: frozenset[Observation],
    params: dict[str, object], zone: str | None = None,
) -> FaultPlan:  # fmt: skip
    right = dns_conf(services, zone_records(ctx.network, services))
    wrong = zone if zone is not None else dns_conf(services, records)
    router = services.dns_router
    return FaultPlan(
        Fault(
            type=tag,
            device=router,
            params=params,
            inject=[service_call(router, "dns-server", wrong)],
            fix=[service_call(router, "dns-server", right)],
            present=[present],
        ),
        Impact(),
        healthy,
        flows,
    )


@fault("dns.wrong_record")
def wrong_record(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """A host's A record holds another host's address: its name leads to the wrong host (the
    client looking it up may be that host itself)."""
    hosts = sorted(ctx.network.lans)
    if len(hosts) < 2 or not ctx.take("dns:zone"):
        return None
    target = ctx.rng.choice(hosts)
    others = [h for h in hosts if h != target]
    other, client = ctx.rng.choice(others), ctx.rng.choice(others)
    services = ctx.derived(place_services)
    records = zone_records(ctx.network, services)
    name = services.name_of(target)
    wrong_address = ctx.network.host_address(other)
    records[name] = wrong_address
    right_address = ctx.network.host_address(target)
    server = services.dns_address
    present = answer_test(tag, services.dns_router, name, wrong_address, server)
    healthy: list[HiddenTest] = [
        answer_test(tag, client, name, right_address, server),
        answer_test(tag, client, name, right_address, None),
    ]
    flows = frozenset({Observation("unresolved", (client, target))})
    params = {"name": name, "wrong": wrong_address}
    return _dns_plan(ctx, tag, services, records, present, healthy, flows, params)


@fault("dns.zone_broken")
def zone_broken(ctx: FaultContext, tag: str) -> FaultPlan | None:
    """A record's option name is misspelt; dnsmasq refuses its file and the DNS
    server does not start, so no name resolves."""
    hosts = sorted(ctx.network.lans)
    if len(hosts) < 2 or not ctx.take("dns:zone"):
        return None
    target, client = ctx.rng.sample(hosts, 2)
    services = ctx.derived(place_services)
    records = zone_records(ctx.network, services)
    name = services.name_of(target)
    right_address = records[name]
    zone = _misspelt(ctx, dns_conf(services, records), f"host-record={name},{right_address}")
    server = services.dns_address
    present = answer_test(tag, services.dns_router, name, right_address, server, expect=False)
    healthy: list[HiddenTest] = [
        answer_test(tag, client, name, right_address, server),
        answer_test(tag, client, name, right_address, None),
    ]
    flows = frozenset({Observation("unresolved", (client, target))})
    return _dns_plan(ctx, tag, services, records, present, healthy, flows, {"name": name},
                     zone)  # fmt: skip
