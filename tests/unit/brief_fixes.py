"""The fix an adversary writes for a guessed fault, as far as the public half gives it."""

from __future__ import annotations

import ipaddress
import itertools
import json
from collections.abc import Callable

import networkx as nx

from netdojo.scenarios.model import ToolCall, configure, execute

from .brief_reader import Public


def _toward(p: Public, router: str) -> str:
    """The neighbour of ``router`` most likely faulted: on the named paths, else the first."""
    named = {h for s in p.seen for h in s.hosts if h in p.gateway}
    on = set().union(*(p.on_paths(a, b) for a, b in itertools.combinations(sorted(named), 2)))
    neighbours = sorted(p.graph.neighbors(router), key=lambda n: (n not in on, n))
    return neighbours[0] if neighbours else router


def _named_lan(p: Public, router: str) -> str:
    """The LAN of a named host that ``router`` does not serve."""
    named = [h for s in p.seen for h in s.hosts if h in p.gateway and p.gateway[h] != router]
    host = named[0] if named else next(h for h in p.hosts if p.gateway[h] != router)
    return p.lans[host]


def _served(p: Public, router: str) -> tuple[str, str] | None:
    """A host ``router`` serves, preferring a named one, and the port facing it."""
    served = [h for h in p.hosts if p.gateway[h] == router]
    named = [h for s in p.seen for h in s.hosts]
    served.sort(key=lambda h: (h not in named, h))
    return (served[0], p.ports[router, served[0]][0]) if served else None


def _subnet(address: str) -> str:
    return str(ipaddress.ip_interface(address).network)


def _next_hop(p: Public, router: str, lan: str) -> str:
    host = next(h for h in p.hosts if p.lans[h] == lan)
    path = min(nx.all_shortest_paths(p.graph, router, p.gateway[host]))
    return p.ports[path[1], router][1].split("/")[0]


def _fix_acl(p: Public, type_: str, device: str) -> list[ToolCall] | None:
    if not (p.server and p.admin and p.firewall):
        return None
    server, admin = p.ports[p.server, p.gateway[p.server]][1].split("/")[0], None
    admin = p.ports[p.admin, p.gateway[p.admin]][1].split("/")[0]
    accept = f"FORWARD -s {admin} -d {server} -p tcp --dport {p.admin_port} -j ACCEPT"
    drop = f"FORWARD -d {server} -p tcp --dport {p.admin_port} -j DROP"
    lan = f"FORWARD -d {p.lans[p.server]} -j ACCEPT"
    flows = [s for s in p.seen if s.kind in ("blocked", "open", "policy")]
    client = flows[0].hosts[0] if flows else p.admin
    source = p.ports[client, p.gateway[client]][1].split("/")[0]
    port = flows[0].port if flows and flows[0].port else p.web
    lines = {
        "acl.needed_flow_dropped": [
            f"-D FORWARD -s {source} -d {server} -p tcp --dport {port} -j DROP"
        ],
        "acl.rule_order": (
            [f"-D {accept}", f"-I {accept}"]
            if any(s.kind == "blocked" for s in flows)
            else [f"-D {lan}", f"-A {lan}"]
        ),
        "acl.forbidden_flow_allowed": [f"-D {lan}", f"-A {drop}", f"-A {lan}"],
        "acl.stray_accept": [f"-D FORWARD -s {source} -d {server} -j ACCEPT"],
    }
    if type_ == "acl.nft_drop":
        return [execute(device, "nft delete table ip filter2")]
    if type_ == "acl.rule_wrong_hop":
        return [
            execute(device, f"iptables -D {accept}"),
            execute(device, f"iptables -D {drop}"),
            *(execute(p.firewall, f"iptables {line}") for line in
              (f"-D {lan}", f"-A {accept}", f"-A {drop}", f"-A {lan}")),
        ]  # fmt: skip
    return [execute(device, f"iptables {line}") for line in lines.get(type_, [])] or None


def write_fix(p: Public, type_: str, device: str) -> list[ToolCall] | None:
    """The fix of ``type_`` on ``device`` as far as the public half gives it; None otherwise."""
    if type_.startswith("acl."):
        return _fix_acl(p, type_, device)
    if device in p.hosts:
        gateway = p.ports[p.gateway[device], device][1].split("/")[0]
        address = p.ports[device, p.gateway[device]][1]
        own = address.split("/")[0]
        fixes = {
            "host.wrong_gateway": [execute(device, f"ip route replace default via {gateway}")],
            "host.missing_default": [execute(device, f"ip route add default via {gateway}")],
            "host.wrong_mask": [
                execute(device, f"ip address del {own}/30 dev eth0"),
                execute(device, f"ip address add {address} dev eth0"),
                execute(device, f"ip route add default via {gateway}"),
            ],
        }
        return fixes.get(type_)
    peer = _toward(p, device)
    iface, address = p.ports.get((device, peer), ("", ""))
    served = _served(p, device)
    lan = _named_lan(p, device) if len(p.hosts) > 1 else ""
    writers: dict[str, Callable[[], list[ToolCall]]] = {
        "iface.admin_down": lambda: [execute(device, f"ip link set dev {iface} up")],
        "iface.mtu_mismatch": lambda: [execute(device, f"ip link set dev {iface} mtu 1500")],
        "ospf.hello_mismatch": lambda: [
            configure(device, f"interface {iface}", "ip ospf hello-interval 1")
        ],
        "ospf.dead_mismatch": lambda: [
            configure(device, f"interface {iface}", "ip ospf dead-interval 4")
        ],
        "ospf.network_type_mismatch": lambda: [
            configure(device, f"interface {iface}", "ip ospf network point-to-point")
        ],
        "ospf.auth_one_side": lambda: [
            configure(device, f"interface {iface}", "ip ospf authentication message-digest")
        ],
        "ospf.cost_steering": lambda: [configure(device, f"interface {iface}", "no ip ospf cost")],
        "ospf.passive_transit": lambda: [
            configure(device, "router ospf", f"no passive-interface {iface}")
        ],
        "ospf.missing_network_transit": lambda: [
            configure(device, "router ospf", f"network {_subnet(address)} area 0")
        ],
        "ospf.area_mismatch": lambda: [
            configure(
                device,
                "router ospf",
                f"no network {_subnet(address)} area 0.0.0.1",
                f"network {_subnet(address)} area 0",
            )
        ],
        "ospf.missing_redistribution": lambda: [
            configure(device, "router ospf", "redistribute connected route-map RM-LAN")
        ],
        "static.blackhole": lambda: [execute(device, f"ip route del blackhole {lan}")],
        "static.missing_route": lambda: [
            configure(device, f"ip route {lan} {_next_hop(p, device, lan)}")
        ],
    }
    if served:
        host, port = served
        gateway = p.ports[device, host][1]
        writers |= {
            "iface.lan_port_down": lambda: [execute(device, f"ip link set dev {port} up")],
            "iface.lan_wrong_mask": lambda: [
                configure(
                    device,
                    f"interface {port}",
                    f"no ip address {gateway.split('/')[0]}/29",
                    f"ip address {gateway}",
                )
            ],
            "ospf.missing_network_stub": lambda: [
                configure(device, "router ospf", f"network {p.lans[host]} area 0")
            ],
        }
    writer = writers.get(type_)
    return writer() if writer and iface else None


def canonical(calls: list[ToolCall]) -> list[str]:
    return sorted(json.dumps(c.model_dump(), sort_keys=True) for c in calls)
