"""Interfaces and hosts: admin state, addresses and masks, MTU, default gateways, blackholes."""

from __future__ import annotations

from netdojo.clients.heuristic.actor import Actor
from netdojo.clients.heuristic.model import Snapshot

STANDARD_MTU = 1500


async def fix_admin_down(snap: Snapshot, actor: Actor) -> None:
    """Bring up every port the topology lists that is administratively down."""
    for device, ports in sorted(snap.topo.ports.items()):
        for port in ports:
            link = snap.devices[device].links.get(port.name)
            if link is not None and not link.up:
                await actor.execute(device, f"ip link set dev {port.name} up", "port was down")


async def fix_addresses(snap: Snapshot, actor: Actor) -> None:
    """Give each port the address the topology intends, removing a wrong one in its place."""
    for device, ports in sorted(snap.topo.ports.items()):
        state = snap.devices[device]
        for port in ports:
            if port.address is None or port.name not in state.links:
                continue
            have = state.addresses(port.name)
            if port.address in have:
                continue
            # A wrong address to replace: one in another subnet, or the right one with a wrong mask.
            wrong = [a for a in have if not a.ip.is_link_local]
            why = f"{port.name} carried {', '.join(map(str, wrong)) or 'no address'}"
            why += f", restored {port.address}"
            if state.role == "router":
                lines = [f"interface {port.name}"]
                lines += [f" no ip address {a}" for a in wrong]
                lines += [f" ip address {port.address}"]
                await actor.configure(device, lines, why)
            else:
                for address in wrong:
                    await actor.execute(device, f"ip address del {address} dev {port.name}", why)
                await actor.execute(device, f"ip address add {port.address} dev {port.name}", why)
                await fix_host_gateway(snap, actor, device, force=True)


async def fix_mtu(snap: Snapshot, actor: Actor) -> None:
    """On a link whose ends disagree on the MTU, put the odd end back to the standard 1500."""
    for link_name, members in sorted(snap.topo.links.items()):
        mtus = {}
        for member in members:
            port = snap.topo.port(member, link_name)
            link = snap.devices[member].links.get(port.name) if port else None
            if port and link:
                mtus[(member, port.name)] = link.mtu
        if len(set(mtus.values())) <= 1:
            continue
        for (member, ifname), mtu in sorted(mtus.items()):
            if mtu != STANDARD_MTU:
                await actor.execute(
                    member, f"ip link set dev {ifname} mtu {STANDARD_MTU}", f"MTU {mtu} on {ifname}"
                )


async def fix_host_gateways(snap: Snapshot, actor: Actor) -> None:
    for host in snap.topo.hosts:
        await fix_host_gateway(snap, actor, host)


async def fix_host_gateway(snap: Snapshot, actor: Actor, host: str, force: bool = False) -> None:
    """A host's default route goes via its LAN's router port."""
    for port in snap.topo.ports[host]:
        gateway = snap.topo.gateway_port(port.link)
        if gateway is None or gateway.address is None:
            continue
        want = str(gateway.address.ip)
        have = snap.devices[host].default_gateway()
        if have != want or force:
            why = f"default route was {have or 'missing'}, set via {want}"
            await actor.execute(host, f"ip route replace default via {want}", why)
        return


async def fix_kernel_blackholes(snap: Snapshot, actor: Actor) -> None:
    """Kernel blackholes that swallow a network of the topology (others are left alone)."""
    known = snap.topo.known_networks()
    for router in snap.topo.routers:
        for hole in snap.devices[router].kernel_blackholes():
            if any(hole.overlaps(net) for net in known):
                await actor.execute(
                    router, f"ip route del blackhole {hole}", f"kernel blackhole {hole}"
                )
