"""Docker remote network driver for Kathará labs: one Linux bridge per collision domain.

Runs inside the managed plugin (host network namespace), with the standard library only.
Docker speaks ``docker.networkdriver/1.0`` to it: JSON over HTTP POST on a unix socket.
Names derive from Docker's ids, so the driver keeps no state it cannot rebuild.
"""

from __future__ import annotations

import hashlib
import json
import os
import socketserver
import subprocess
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

SOCKET_DIR = "/run/docker/plugins"
SOCKET_NAME = "katharanp.sock"
BRIDGE_PREFIX = "kt-"
HOST_VETH_PREFIX = "kv"
PEER_VETH_PREFIX = "kp"

Json = dict[str, Any]


class DriverError(Exception):
    pass


def run(*argv: str, stdin: str | None = None) -> str:
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise DriverError(f"{' '.join(argv)}: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout


def ip_batch(*commands: str) -> None:
    """Several ``ip`` commands in one process: a request costs one fork, not one per step."""
    run("ip", "-batch", "-", stdin="".join(f"{command}\n" for command in commands))


def _quiet_then_up(link: str, settings: str) -> tuple[str, str, str]:
    """The steps that bring ``link`` up silent: each its own command, in this order. Given in
    one command, the kernel may raise the link before it takes ``addrgenmode none``, and the
    link-local address it makes meanwhile sends frames with the host's MAC into the lab."""
    return (
        f"link set {link} addrgenmode none",
        f"link set {link} {settings}",
        f"link set {link} up",
    )


def bridge_name(network_id: str) -> str:
    return BRIDGE_PREFIX + network_id[:12]


def veth_names(endpoint_id: str) -> tuple[str, str]:
    return HOST_VETH_PREFIX + endpoint_id[:12], PEER_VETH_PREFIX + endpoint_id[:12]


def derived_mac(link: str, iface: str, endpoint_id: str) -> str:
    """A locally administered unicast MAC, stable for one (link, interface, endpoint)."""
    digest = hashlib.md5(f"{link}/{iface}/{endpoint_id}".encode()).digest()
    octets = [(digest[0] & 0xFC) | 0x02, *digest[1:6]]
    return ":".join(f"{octet:02x}" for octet in octets)


def iptables_binary() -> str:
    """The iptables flavour whose FORWARD chain dockerd programmed (nft or legacy)."""
    for flavour in ("iptables-nft", "iptables-legacy"):
        try:
            rules = run(flavour, "-w", "-S", "FORWARD")
        except (DriverError, FileNotFoundError):
            continue
        if "DOCKER" in rules:
            return flavour
    return "iptables"


class Driver:
    def __init__(self) -> None:
        self.iptables = iptables_binary()
        self.macs: dict[str, str] = {}
        self.lock = threading.Lock()

    @staticmethod
    def rules(bridge: str) -> list[tuple[str, str]]:
        """The host rules a lab bridge needs, as (table, rule) in ``iptables-save`` form.

        Frames crossing a bridge pass the host's iptables (br_netfilter): FORWARD must accept
        them, and they must stay out of connection tracking, or the host's NAT rules (Docker's
        MASQUERADE of 172.17.0.0/16, for one) rewrite lab traffic and identical address plans
        in two labs share conntrack entries. Nothing from a lab may reach the host itself.
        """
        return [
            ("raw", f"PREROUTING -i {bridge} -j NOTRACK"),
            ("filter", f"FORWARD -i {bridge} -o {bridge} -j ACCEPT"),
            ("filter", f"INPUT -i {bridge} -j DROP"),
        ]

    def saved_rules(self) -> list[str]:
        """Every rule of the raw and filter tables, as ``iptables-save`` lists them."""
        text = run(f"{self.iptables}-save", "-t", "raw") + run(
            f"{self.iptables}-save", "-t", "filter"
        )
        return [line[3:] for line in text.splitlines() if line.startswith("-A ")]

    def apply_rules(self, changes: list[tuple[str, str]]) -> None:
        """Insert (``-I``) or delete (``-D``) rules, given as (table, action rule), in one
        ``iptables-restore`` that leaves every other rule alone."""
        if not changes:
            return
        script = []
        for table in dict.fromkeys(table for table, _ in changes):
            script += [f"*{table}", *(rule for t, rule in changes if t == table), "COMMIT"]
        run(f"{self.iptables}-restore", "-w", "--noflush", stdin="\n".join(script) + "\n")

    def handle(self, path: str, body: Json) -> Json:
        handlers: dict[str, Callable[[Json], Json]] = {
            "/Plugin.Activate": lambda _b: {"Implements": ["NetworkDriver"]},
            "/NetworkDriver.GetCapabilities": lambda _b: {
                "Scope": "local",
                "ConnectivityScope": "local",
            },
            "/NetworkDriver.CreateNetwork": self.create_network,
            "/NetworkDriver.DeleteNetwork": self.delete_network,
            "/NetworkDriver.CreateEndpoint": self.create_endpoint,
            "/NetworkDriver.DeleteEndpoint": self.delete_endpoint,
            "/NetworkDriver.EndpointOperInfo": lambda _b: {"Value": {}},
            "/NetworkDriver.Join": self.join,
            "/NetworkDriver.Leave": self.leave,
        }
        handler = handlers.get(path)
        if handler is None:
            # AllocateNetwork, FreeNetwork, Discover*, *ExternalConnectivity: nothing to do.
            return {}
        with self.lock:
            return handler(body)

    def create_network(self, body: Json) -> Json:
        bridge = bridge_name(body["NetworkID"])
        if os.path.exists(f"/sys/class/net/{bridge}"):
            # Asked again for a network it has made: add only the rules that are missing.
            saved = set(self.saved_rules())
            missing = [(t, rule) for t, rule in self.rules(bridge) if rule not in saved]
        else:
            # The host answers ARP for its own addresses on any interface: a lab host whose
            # gateway is, say, 172.17.0.1 (docker0's) would otherwise reach the host's stack.
            ip_batch(
                f"link add {bridge} type bridge ageing_time 0 group_fwd_mask 0xfff8",
                *_quiet_then_up(bridge, "arp off"),
            )
            # A new network id names a new bridge, so no rule of it can exist yet.
            missing = self.rules(bridge)
        self.apply_rules([(t, f"-I {rule}") for t, rule in missing])
        return {}

    def delete_network(self, body: Json) -> Json:
        bridge = bridge_name(body["NetworkID"])
        saved = self.saved_rules()
        wanted = {rule: table for table, rule in self.rules(bridge)}
        self.apply_rules([(wanted[rule], f"-D {rule}") for rule in saved if rule in wanted])
        if os.path.exists(f"/sys/class/net/{bridge}"):
            run("ip", "link", "del", bridge)
        return {}

    def create_endpoint(self, body: Json) -> Json:
        endpoint = body["EndpointID"]
        options = body.get("Options") or {}
        requested = (body.get("Interface") or {}).get("MacAddress") or ""
        mac = (
            requested
            or options.get("kathara.mac_addr")
            or derived_mac(
                str(options.get("kathara.link", body["NetworkID"])),
                str(options.get("kathara.iface", "")),
                endpoint,
            )
        )
        self.macs[endpoint] = mac
        # Docker refuses a MAC in the answer when the request already carried one.
        return {"Interface": {} if requested else {"MacAddress": mac}}

    def delete_endpoint(self, body: Json) -> Json:
        endpoint = body["EndpointID"]
        self.macs.pop(endpoint, None)
        host_end, _ = veth_names(endpoint)
        if os.path.exists(f"/sys/class/net/{host_end}"):
            run("ip", "link", "del", host_end)
        return {}

    def join(self, body: Json) -> Json:
        endpoint = body["EndpointID"]
        bridge = bridge_name(body["NetworkID"])
        host_end, peer_end = veth_names(endpoint)
        if os.path.exists(f"/sys/class/net/{host_end}"):
            run("ip", "link", "del", host_end)
        mac = self.macs.get(endpoint)
        ip_batch(
            f"link add {host_end} type veth peer name {peer_end}",
            *([f"link set {peer_end} address {mac}"] if mac else []),
            *_quiet_then_up(host_end, f"master {bridge}"),
        )
        return {
            "InterfaceName": {"SrcName": peer_end, "DstPrefix": "eth"},
            "DisableGatewayService": True,
        }

    def leave(self, body: Json) -> Json:
        host_end, _ = veth_names(body["EndpointID"])
        if os.path.exists(f"/sys/class/net/{host_end}"):
            run("ip", "link", "del", host_end)
        return {}


class Handler(BaseHTTPRequestHandler):
    driver: Driver

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw.strip() else {}
            status, answer = 200, self.driver.handle(self.path, body)
        except Exception as exc:  # every failure must reach Docker as {"Err": ...}
            status, answer = 500, {"Err": f"{type(exc).__name__}: {exc}"}
        payload = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/vnd.docker.plugins.v1+json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def address_string(self) -> str:
        return "docker"

    def log_message(self, format: str, *args: Any) -> None:
        sys.stderr.write(f"{self.command} {self.path} {args[1] if len(args) > 1 else ''}\n")


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


def main() -> None:
    os.makedirs(SOCKET_DIR, exist_ok=True)
    path = os.path.join(SOCKET_DIR, SOCKET_NAME)
    if os.path.exists(path):
        os.unlink(path)
    Handler.driver = Driver()
    with Server(path, Handler) as server:
        server.serve_forever()


if __name__ == "__main__":
    main()
