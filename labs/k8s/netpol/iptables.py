"""Render one pod's rules as ``iptables-restore`` input for the filter table of its network
namespace; the text is a pure function of the rules.

Ingress is enforced in a chain hooked from INPUT, egress in one hooked from OUTPUT. Each chain
first accepts packets of connections already accepted (conntrack ESTABLISHED,RELATED) and
loopback traffic, then one ACCEPT per (peer, port range) of each `Allow` in order, and ends with
a DROP only when the pod is isolated in that direction. A peer with excepts jumps to a chain of
its own that RETURNs on each excepted range before accepting its ports; these chains' rules
follow their direction's main chain. The whole table is
replaced at once, so a restore is atomic and leaves nothing of the previous rules. IPv4 only:
IPv6 blocks are left out (the lab's pods have IPv4 addresses).
"""

from __future__ import annotations

from ipaddress import IPv4Network

from netdojo.labs.k8s.netpol.ir import Allow, Direction, PodRules, PortRange

INGRESS_CHAIN = "NETDOJO-INGRESS"
EGRESS_CHAIN = "NETDOJO-EGRESS"
_BUILTIN = ("INPUT", "FORWARD", "OUTPUT")


class _Chain:
    """The rules of one direction: its main chain and the except chains it jumps to."""

    def __init__(self, name: str, prefix: str, address_flag: str, interface_flag: str) -> None:
        self.name = name
        self.prefix = prefix
        self.address_flag = address_flag
        self.interface_flag = interface_flag
        self.subchains: list[str] = []
        self.rules: list[str] = []
        self.subchain_rules: list[str] = []

    def render(self, direction: Direction) -> None:
        self.rules += [
            f"-A {self.name} -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT",
            f"-A {self.name} {self.interface_flag} lo -j ACCEPT",
        ]
        for allow in direction.allows:
            self._allow(allow)
        if direction.isolated:
            self.rules.append(f"-A {self.name} -j DROP")

    def _allow(self, allow: Allow) -> None:
        if allow.peers is None:
            self._accept(self.name, "", allow)
            return
        for peer in allow.peers:
            if not isinstance(peer.network, IPv4Network):
                continue
            match = self._address(peer.network)
            cuts = [cut for cut in peer.excepts if isinstance(cut, IPv4Network)]
            if not cuts:
                self._accept(self.name, match, allow)
                continue
            sub = f"{self.prefix}-{len(self.subchains) + 1}"
            self.subchains.append(sub)
            self.rules.append(_rule(self.name, match, f"-j {sub}"))
            self.subchain_rules += (_rule(sub, self._address(cut), "-j RETURN") for cut in cuts)
            self._accept(sub, "", allow)

    def _accept(self, chain: str, match: str, allow: Allow) -> None:
        into = self.rules if chain == self.name else self.subchain_rules
        if allow.ports is None:
            into.append(_rule(chain, match, "-j ACCEPT"))
            return
        into += (_rule(chain, match, f"{_port(r)} -j ACCEPT") for r in allow.ports)

    def _address(self, network: IPv4Network) -> str:
        return "" if network.prefixlen == 0 else f"{self.address_flag} {network}"


def _rule(chain: str, *parts: str) -> str:
    return " ".join(["-A", chain, *(part for part in parts if part)])


def _port(ports: PortRange) -> str:
    proto = ports.protocol.lower()
    span = str(ports.first) if ports.first == ports.last else f"{ports.first}:{ports.last}"
    return f"-p {proto} -m {proto} --dport {span}"


def render(rules: PodRules) -> str:
    """The ``iptables-restore`` text that enforces ``rules`` in the pod's namespace."""
    ingress = _Chain(INGRESS_CHAIN, "NETDOJO-IN", "-s", "-i")
    egress = _Chain(EGRESS_CHAIN, "NETDOJO-EG", "-d", "-o")
    ingress.render(rules.ingress)
    egress.render(rules.egress)
    lines = ["*filter"]
    lines += (f":{chain} ACCEPT [0:0]" for chain in _BUILTIN)
    chains = [INGRESS_CHAIN, EGRESS_CHAIN, *ingress.subchains, *egress.subchains]
    lines += (f":{chain} - [0:0]" for chain in chains)
    lines += [f"-A INPUT -j {INGRESS_CHAIN}", f"-A OUTPUT -j {EGRESS_CHAIN}"]
    lines += ingress.rules + ingress.subchain_rules + egress.rules + egress.subchain_rules
    lines.append("COMMIT")
    return "\n".join(lines) + "\n"
