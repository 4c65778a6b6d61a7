"""Small ready-made labs for the demo, the tests and the benchmarks: OSPF rings with hosts.

Router links are OSPF point-to-point with 1 s hellos and no LSA throttling, so a ring
converges within seconds of FRR starting.
"""

from __future__ import annotations

import json

from netdojo.labs.runtime import LiveLab
from netdojo.labs.spec import DeviceSpec, LabSpec, LinkSpec

DAEMONS = """zebra=yes
ospfd=yes
bgpd=no
ospf6d=no
ripd=no
ripngd=no
isisd=no
pimd=no
ldpd=no
nhrpd=no
eigrpd=no
babeld=no
sharpd=no
pbrd=no
bfdd=no
fabricd=no
vrrpd=no
pathd=no
vtysh_enable=yes
zebra_options="  -A 127.0.0.1 -s 90000000"
ospfd_options="  -A 127.0.0.1"
MAX_FDS=1024
"""
FRR_START = "/usr/lib/frr/frrinit.sh start"


def router_conf(name: str, index: int, p2p: dict[str, str], lans: dict[str, str]) -> str:
    lines = [
        "frr defaults traditional",
        f"hostname {name}",
        "log file /var/log/frr/frr.log",
        "service integrated-vtysh-config",
        "!",
    ]
    for iface, cidr in p2p.items():
        lines += [
            f"interface {iface}",
            f" ip address {cidr}",
            " ip ospf network point-to-point",
            " ip ospf hello-interval 1",
            " ip ospf dead-interval 4",
            "!",
        ]
    for iface, cidr in lans.items():
        lines += [f"interface {iface}", f" ip address {cidr}", "!"]
    lines += [
        "router ospf",
        f" ospf router-id 10.255.{index // 250}.{index % 250 + 1}",
        " timers throttle lsa all 0",
        " timers lsa min-arrival 0",
        " timers throttle spf 0 50 500",
    ]
    lines += [f" passive-interface {iface}" for iface in lans]
    lines += [f" network {cidr} area 0" for cidr in [*p2p.values(), *lans.values()]]
    lines += ["!", ""]
    return "\n".join(lines)


def ospf_ring(routers: int = 3, hosts: int = 2, name: str = "ospf") -> LabSpec:
    """``routers`` FRR routers in a ring (a chain for 2), ``hosts`` hosts on distinct routers."""
    if routers < 2 or not 0 <= hosts <= routers:
        raise ValueError("need at least 2 routers and at most one host per router")
    names = [f"r{i + 1}" for i in range(routers)]
    p2p: dict[str, dict[str, str]] = {r: {} for r in names}
    lans: dict[str, dict[str, str]] = {r: {} for r in names}
    links: list[LinkSpec] = []
    next_iface = dict.fromkeys(names, 0)
    ring = routers if routers > 2 else 1
    for i in range(ring):
        a, b = names[i], names[(i + 1) % routers]
        links.append(LinkSpec(name=f"p{i}", endpoints=[(a, next_iface[a]), (b, next_iface[b])]))
        p2p[a][f"eth{next_iface[a]}"] = f"10.0.{i}.1/30"
        p2p[b][f"eth{next_iface[b]}"] = f"10.0.{i}.2/30"
        next_iface[a] += 1
        next_iface[b] += 1
    # Spread the hosts around the ring so traffic crosses it.
    host_routers = [names[(k * routers) // hosts] for k in range(hosts)] if hosts else []
    devices = []
    for k, router in enumerate(host_routers):
        j = names.index(router)
        iface = next_iface[router]
        lans[router][f"eth{iface}"] = f"10.1.{j}.1/24"
        links.append(LinkSpec(name=f"lan{j}", endpoints=[(router, iface), (f"h{k + 1}", 0)]))
        next_iface[router] += 1
        devices.append(
            DeviceSpec(
                name=f"h{k + 1}",
                role="host",
                startup=[
                    f"ip address add 10.1.{j}.10/24 dev eth0",
                    f"ip route add default via 10.1.{j}.1",
                ],
            )
        )
    for index, router in enumerate(names):
        devices.insert(
            index,
            DeviceSpec(
                name=router,
                role="router",
                files={
                    "/etc/frr/daemons": DAEMONS,
                    "/etc/frr/frr.conf": router_conf(router, index, p2p[router], lans[router]),
                },
                startup=[FRR_START],
            ),
        )
    return LabSpec.build(name=name, devices=devices, links=links)


def host_address(spec: LabSpec, host: str) -> str:
    """The address a sample lab's host configures on eth0."""
    line = next(s for s in spec.device(host).startup if s.startswith("ip address add"))
    return line.split()[3].split("/")[0]


async def ospf_converged(lab: LiveLab) -> bool:
    """True when every router has all its OSPF neighbours Full and a route to every LAN.

    Each LAN's route is asked for alone: a router's whole table outgrows the output cap of an
    exec in a lab of a hundred routers."""
    lans = sorted(link.name for link in lab.spec.links if link.name.startswith("lan"))
    lan_prefixes = [f"10.1.{name.removeprefix('lan')}.0/24" for name in lans]
    routes = [f"show ip route {prefix} json" for prefix in lan_prefixes]
    for dev in lab.spec.devices:
        if dev.role != "router":
            continue
        expected = sum(1 for _, link in lab.spec.interfaces(dev.name) if link.startswith("p"))
        shown = await lab.vtysh(dev.name, "show ip ospf neighbor json", *routes)
        if not shown.ok:
            return False
        decoder, text, found = json.JSONDecoder(), shown.stdout.strip(), []
        while text:
            answer, end = decoder.raw_decode(text)
            found.append(answer)
            text = text[end:].strip()
        neighbours, *known = found
        full = [
            n
            for entries in neighbours.get("neighbors", {}).values()
            for n in entries
            if str(n.get("nbrState", n.get("state", ""))).startswith("Full")
        ]
        reached = [prefix in answer for prefix, answer in zip(lan_prefixes, known, strict=False)]
        if len(full) < expected or len(reached) < len(lan_prefixes) or not all(reached):
            return False
    return True
