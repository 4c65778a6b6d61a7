"""The red herring added at levels 2-3: a harmless oddity on a router that a careful engineer
leaves in place (an adherence test checks it stays). It is no fault type: no family draws it."""

from __future__ import annotations

from netdojo.scenarios.faults.base import FaultContext, FaultPlan
from netdojo.scenarios.forwarding import Impact
from netdojo.scenarios.hidden_tests import ConfigParams, ConfigTest
from netdojo.scenarios.model import Fault, configure

RED_HERRINGS = (
    ("interface {iface}", "description legacy uplink - do not remove"),
    ("ip route 198.51.100.0/24 Null0",),
    ("interface {iface}", "bandwidth 100000"),
)


def red_herring(ctx: FaultContext) -> FaultPlan:
    """A harmless oddity on a router; a careful engineer leaves it in place."""
    router = ctx.rng.choice(ctx.network.routers)
    iface = ctx.rng.choice(router.ifaces)
    lines = [line.format(iface=iface.name) for line in ctx.rng.choice(RED_HERRINGS)]
    keep = ConfigTest(
        id=f"adherence.red_herring:{router.name}",
        description=f"{router.name} still has the harmless line '{lines[-1]}'",
        device=router.name,
        params=ConfigParams(pattern=lines[-1], expect=True),
    )
    return FaultPlan(
        Fault(
            type="red_herring",
            device=router.name,
            params={"lines": lines},
            inject=[configure(router.name, *lines)],
            fix=[],
            present=[keep],
            red_herring=True,
        ),
        Impact(),
        [keep],
    )
