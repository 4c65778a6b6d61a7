"""Host faults: a host's own gateway, default route, mask or address gone wrong."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable

from netdojo.scenarios.faults.base import (
    FaultContext,
    FaultPlan,
    Injector,
    address_test,
    narrower,
)
from netdojo.scenarios.forwarding import Impact
from netdojo.scenarios.hidden_tests import DefaultRouteParams, DefaultRouteTest
from netdojo.scenarios.model import Fault, execute
from netdojo.scenarios.registry import fault


def _host(ctx: FaultContext) -> str | None:
    hosts = sorted(ctx.network.lans)
    ctx.rng.shuffle(hosts)
    return next((h for h in hosts if ctx.take(f"host:{h}")), None)


def _default_route_test(tag: str, host: str, gateway: str | None) -> DefaultRouteTest:
    return DefaultRouteTest(
        id=f"{tag}:{host}",
        description=f"{host}'s default route is {'via ' + gateway if gateway else 'missing'}",
        device=host,
        params=DefaultRouteParams(gateway=gateway, expect=True),
    )


@fault("host.wrong_gateway")
def wrong_gateway(ctx: FaultContext, tag: str) -> FaultPlan | None:
    if not (host := _host(ctx)):
        return None
    node = ctx.network.node(host)
    assert node.gateway is not None
    base = ipaddress.ip_network(ctx.network.lans[host]).network_address
    used = {node.gateway, ctx.network.host_address(host)}
    wrong = next(str(base + n) for n in (253, 2, 252, 3) if str(base + n) not in used)
    return FaultPlan(
        Fault(
            type=tag,
            device=host,
            params={"wrong": wrong, "intended": node.gateway},
            inject=[execute(host, f"ip route replace default via {wrong}")],
            fix=[execute(host, f"ip route replace default via {node.gateway}")],
            present=[_default_route_test(tag, host, wrong)],
        ),
        Impact(isolated={host}),
        [],
    )


@fault("host.missing_default")
def missing_default(ctx: FaultContext, tag: str) -> FaultPlan | None:
    if not (host := _host(ctx)):
        return None
    gateway = ctx.network.node(host).gateway
    return FaultPlan(
        Fault(
            type=tag,
            device=host,
            params={"intended": gateway},
            inject=[execute(host, "ip route del default")],
            fix=[execute(host, f"ip route add default via {gateway}")],
            present=[_default_route_test(tag, host, None)],
        ),
        Impact(isolated={host}),
        [],
    )


def _readdress(wrong: Callable[[FaultContext, str, str], str]) -> Injector:
    """The host's address changes so its gateway is off-link; the fix restores both."""

    def injector(ctx: FaultContext, tag: str) -> FaultPlan | None:
        if not (host := _host(ctx)):
            return None
        node = ctx.network.node(host)
        good = node.ifaces[0].address
        assert node.gateway is not None
        bad = wrong(ctx, good, node.gateway)
        return FaultPlan(
            Fault(
                type=tag,
                device=host,
                params={"wrong": bad, "intended": good},
                inject=[
                    execute(host, f"ip address del {good} dev eth0"),
                    execute(host, f"ip address add {bad} dev eth0"),
                ],
                fix=[
                    execute(host, f"ip address del {bad} dev eth0"),
                    execute(host, f"ip address add {good} dev eth0"),
                    execute(host, f"ip route add default via {node.gateway}"),
                ],
                present=[address_test(tag, host, "eth0", bad)],
            ),
            Impact(isolated={host}),
            [],
        )

    return injector


def _narrow_mask(ctx: FaultContext, good: str, gateway: str) -> str:
    return narrower(good, gateway, ctx.rng)


def _other_subnet(ctx: FaultContext, good: str, _gateway: str) -> str:
    octets = good.split("/")[0].split(".")
    octets[2] = str((int(octets[2]) + ctx.rng.randint(1, 5)) % 250)
    return ".".join(octets) + "/24"


wrong_address = fault("host.wrong_address")(_readdress(_other_subnet))
wrong_mask = fault("host.wrong_mask")(_readdress(_narrow_mask))
