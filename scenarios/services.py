"""Services inside a lab: DHCP for the hosts and DNS for a lab zone, both served by dnsmasq.

Every host's gateway runs a DHCP server on its LAN port whose one-address scope is the host's
planned address, handing out the gateway and the lab's resolver; hosts take their address,
default route and resolver from it with `dhclient` at boot. One router serves the zone
`ZONE` on its loopback (reachable over the routing protocol), with no upstream: names outside
the zone are refused. Nothing listens on or reaches the machine that runs the lab.

The configuration files are rendered here, so a fault and its fix are the same files with
one line changed.
"""

from __future__ import annotations

import hashlib
import ipaddress
from dataclasses import dataclass

from netdojo.labs.spec import LabSpec
from netdojo.scenarios.network import Network

ZONE = "site.lan"
LEASE = "10m"
DHCP_CONF = "/etc/dnsmasq-dhcp.conf"
DNS_CONF = "/etc/dnsmasq-dns.conf"
RELAY_CONF = "/etc/dnsmasq-relay.conf"
SERVER_CONF = {"dhcp-server": DHCP_CONF, "dns-server": DNS_CONF, "dhcp-relay": RELAY_CONF}
SERVER_PID = {
    "dhcp-server": "/run/dnsmasq-dhcp.pid",
    "dns-server": "/run/dnsmasq-dns.pid",
    "dhcp-relay": "/run/dnsmasq-relay.pid",
}
CLIENT_CONF = "/etc/dhcp/dhclient.conf"
CLIENT_LEASES = "/var/lib/dhcp/dhclient.eth0.leases"
CLIENT_PID = "/run/dhclient.eth0.pid"
CLIENT_TIMEOUT_S = 6
RESOLV_HOOK = "/etc/dhcp/dhclient-enter-hooks.d/lab-resolv"
READABLE = (DHCP_CONF, DNS_CONF, RELAY_CONF, "/etc/resolv.conf", CLIENT_LEASES)

DHCLIENT = f"""send host-name = gethostname();
request subnet-mask, broadcast-address, routers, domain-name, domain-name-servers;
timeout {CLIENT_TIMEOUT_S};
retry 5;
"""
# /etc/resolv.conf is a bind mount in a container: it is written in place, never replaced.
RESOLV = """make_resolv_conf() {
    if [ -n "$new_domain_name_servers" ]; then
        { [ -n "$new_domain_name" ] && echo "search $new_domain_name"
          for server in $new_domain_name_servers; do echo "nameserver $server"; done
        } > /etc/resolv.conf
    fi
}
"""


@dataclass(frozen=True)
class Services:
    """Where the services run: the DNS router and its address, and each host's DHCP server
    (its gateway) with the port it serves."""

    dns_router: str
    dns_address: str
    dhcp: dict[str, tuple[str, str]]  # host -> (router, LAN port)

    def name_of(self, host: str) -> str:
        return f"{host}.{ZONE}"


def place_services(network: Network) -> Services:
    """The DNS server is a router picked by a hash of the plan (so it is seeded, and not
    where the topology alone would put it); a host's DHCP server is its gateway."""
    routers = sorted(network.routers, key=lambda r: r.name)
    digest = hashlib.sha256(network.model_dump_json().encode()).digest()
    dns = routers[int.from_bytes(digest[:4], "big") % len(routers)]
    assert dns.loopback is not None
    dhcp = {
        host: (network.router_of(host), network.node(network.router_of(host)).iface_to(host).name)
        for host in sorted(network.lans)
    }
    return Services(dns_router=dns.name, dns_address=dns.loopback, dhcp=dhcp)


@dataclass(frozen=True)
class DhcpScope:
    """What one DHCP server hands out; a fault changes one field."""

    port: str
    first: str
    last: str
    router: str
    dns: str
    reserved: str | None = None  # a MAC the scope's address is bound to, when not the host's


def dhcp_scope(network: Network, services: Services, host: str) -> DhcpScope:
    _, port = services.dhcp[host]
    address = network.host_address(host)
    gateway = network.node(host).gateway
    assert gateway is not None
    return DhcpScope(port, address, address, gateway, services.dns_address)


FIXED_LINES = frozenset(
    {
        "dhcp-leasefile=/var/lib/misc/dnsmasq-dhcp.leases",
        "pid-file=/run/dnsmasq-dhcp.pid",
        "log-facility=/var/log/dnsmasq-dhcp.log",
        "pid-file=/run/dnsmasq-dns.pid",
        "log-facility=/var/log/dnsmasq-dns.log",
        "pid-file=/run/dnsmasq-relay.pid",
        "log-facility=/var/log/dnsmasq-relay.log",
    }
)
"""The servers' own paths, which their files keep."""


DHCP_TAIL = (
    "dhcp-leasefile=/var/lib/misc/dnsmasq-dhcp.leases",
    f"pid-file={SERVER_PID['dhcp-server']}",
    "log-facility=/var/log/dnsmasq-dhcp.log",
)
"""The lines that end every DHCP server's file: its lease file, pid file and log."""


def dhcp_conf(scope: DhcpScope) -> str:
    return "\n".join(
        [
            "port=0",
            f"interface={scope.port}",
            "bind-dynamic",
            "dhcp-authoritative",
            f"dhcp-range={scope.first},{scope.last},255.255.255.0,{LEASE}",
            *([f"dhcp-host={scope.reserved},{scope.first}"] if scope.reserved else []),
            f"dhcp-option=option:router,{scope.router}",
            f"dhcp-option=option:dns-server,{scope.dns}",
            f"dhcp-option=option:domain-name,{ZONE}",
            *DHCP_TAIL,
            "",
        ]
    )


def zone_records(network: Network, services: Services) -> dict[str, str]:
    """Every host's name in the zone and its address."""
    return {services.name_of(h): network.host_address(h) for h in sorted(network.lans)}


def dns_conf(services: Services, records: dict[str, str]) -> str:
    lines = [
        "no-resolv",
        "no-hosts",
        f"listen-address={services.dns_address}",
        "bind-dynamic",
        f"local=/{ZONE}/",
        *(f"host-record={name},{address}" for name, address in records.items()),
        f"pid-file={SERVER_PID['dns-server']}",
        "log-facility=/var/log/dnsmasq-dns.log",
        "",
    ]
    return "\n".join(lines)


def start_server(service: str) -> str:
    """The shell line that (re)starts a dnsmasq server from its configuration file."""
    pid = SERVER_PID[service]
    return (
        f"if [ -f {pid} ]; then kill $(cat {pid}) 2>/dev/null; rm -f {pid}; sleep 0.3; fi; "
        f"dnsmasq --conf-file={SERVER_CONF[service]}"
    )


def renew_client(tries: int = 1) -> str:
    """The shell line that gives up the host's lease and asks for a new one, as at boot
    (``tries`` times at most, for a server that is still starting)."""
    ask = f"dhclient -4 -1 -pf {CLIENT_PID} -lf {CLIENT_LEASES} eth0"
    return (
        f"dhclient -r -pf {CLIENT_PID} eth0 2>/dev/null; rm -f {CLIENT_LEASES}; "
        f"ip address flush dev eth0; for try in $(seq {tries}); do {ask} && break; done"
    )


def furnish_client(lab: LabSpec, host: str, tries: int) -> None:
    """Make ``host`` a DHCP client that asks for its lease at boot, ``tries`` times at most."""
    client = lab.device(host)
    client.files[CLIENT_CONF] = DHCLIENT
    client.files[RESOLV_HOOK] = RESOLV
    client.startup = [renew_client(tries=tries)]


def furnish_dns(lab: LabSpec, network: Network, services: Services) -> None:
    """Install the DNS server of the zone on its router."""
    dns = lab.device(services.dns_router)
    dns.files[DNS_CONF] = dns_conf(services, zone_records(network, services))
    dns.startup.append(start_server("dns-server"))


def furnish_services(lab: LabSpec, network: Network) -> None:
    """Install the DHCP and DNS servers on their routers and make every host a DHCP client."""
    services = place_services(network)
    for host, (router, _) in services.dhcp.items():
        device = lab.device(router)
        device.files[DHCP_CONF] = dhcp_conf(dhcp_scope(network, services, host))
        device.startup.append(start_server("dhcp-server"))
        furnish_client(lab, host, tries=3)
    furnish_dns(lab, network, services)


def other_subnet(address: str, shift: int) -> str:
    """``address`` moved ``shift`` /24s along: the same host number in a foreign subnet."""
    moved = ipaddress.ip_address(address) + 256 * shift
    return str(moved)
