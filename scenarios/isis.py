"""IS-IS routing (FRR `isisd`): how a router's IS-IS configuration is written, and the
hidden test of an IS-IS adjacency.

Every router runs one level-1 process in one area; its NET carries the area and a system id
made of its loopback address. Transit ports are fast point-to-point circuits (hello every
second, neighbours held four seconds); the loopback and the LAN ports are passive, so their
prefixes are advertised without adjacencies; metrics are wide. The one link the plan
authenticates (`Network.ospf_md5`, whatever the protocol) carries an MD5 hello password.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from netdojo.scenarios.hidden_tests import IsisAdjacencyParams, IsisAdjacencyTest

if TYPE_CHECKING:
    from netdojo.scenarios.network import Iface, Network, Node

PROCESS = "CORE"
AREA = "49.0001"
HELLO_INTERVAL = 1
HELLO_MULTIPLIER = 4
PORT_METRIC = 10  # FRR's default metric of a circuit


@lru_cache(maxsize=1 << 14)
def system_id(loopback: str) -> str:
    """The system id a loopback address spells: 10.255.0.23 -> 0102.5500.0023."""
    digits = "".join(f"{int(octet):03d}" for octet in loopback.split("."))
    return ".".join(digits[k : k + 4] for k in range(0, 12, 4))


def net(loopback: str, area: str = AREA) -> str:
    """The NET of the router with ``loopback`` in ``area``."""
    return f"{area}.{system_id(loopback)}.00"


def password_line(key: str) -> str:
    return f" isis password md5 {key}"


def isis_lines(network: Network, router: Node) -> list[str]:
    """The router's IS-IS process and its interfaces' IS-IS settings."""
    assert router.loopback is not None
    lines: list[str] = []
    for iface in router.ifaces:
        lines += [f"interface {iface.name}", f" ip router isis {PROCESS}"]
        if network.node(iface.peer).role == "router":
            lines += [
                " isis network point-to-point",
                f" isis hello-interval {HELLO_INTERVAL}",
                f" isis hello-multiplier {HELLO_MULTIPLIER}",
            ]
            if iface.link in network.ospf_md5:
                lines.append(password_line(network.ospf_md5[iface.link]))
        else:
            lines.append(" isis passive")
        lines.append("exit")
    lines += ["interface lo", f" ip router isis {PROCESS}", " isis passive", "exit"]
    return [
        *lines,
        f"router isis {PROCESS}",
        f" net {net(router.loopback)}",
        " is-type level-1",
        " metric-style wide",
        " lsp-gen-interval 1",
        " spf-interval 1",
        "exit",
    ]


def isis_adjacency_test(
    network: Network, a: str, b: str, expect: bool, tag: str
) -> IsisAdjacencyTest:
    """Whether ``a`` has an Up IS-IS adjacency with ``b`` on the port that faces it."""
    iface: Iface = network.node(a).iface_to(b)
    loopback = network.node(b).loopback
    assert loopback is not None
    state = "has" if expect else "has no"
    return IsisAdjacencyTest(
        id=f"{tag}:isis:{a}-{b}",
        description=f"{a} {state} an Up IS-IS adjacency with {b} on {iface.name}",
        device=a,
        params=IsisAdjacencyParams(
            neighbor=b, system_id=system_id(loopback), interface=iface.name, expect=expect
        ),
    )
