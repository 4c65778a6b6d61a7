"""The iptables-restore text for one pod says what its rules say, in their order."""

from __future__ import annotations

from ipaddress import IPv4Address, ip_network

from netdojo.labs.k8s.netpol.iptables import render
from netdojo.labs.k8s.netpol.ir import AddressBlock, Allow, Direction, PodRules, PortRange

HEAD = [
    "*filter",
    ":INPUT ACCEPT [0:0]",
    ":FORWARD ACCEPT [0:0]",
    ":OUTPUT ACCEPT [0:0]",
    ":NETDOJO-INGRESS - [0:0]",
    ":NETDOJO-EGRESS - [0:0]",
]
HOOKS = ["-A INPUT -j NETDOJO-INGRESS", "-A OUTPUT -j NETDOJO-EGRESS"]
INGRESS_START = [
    "-A NETDOJO-INGRESS -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT",
    "-A NETDOJO-INGRESS -i lo -j ACCEPT",
]
EGRESS_START = [
    "-A NETDOJO-EGRESS -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT",
    "-A NETDOJO-EGRESS -o lo -j ACCEPT",
]


def _block(network: str, *excepts: str) -> AddressBlock:
    return AddressBlock(network=ip_network(network), excepts=tuple(map(ip_network, excepts)))


def _pod(ingress: Direction = Direction(), egress: Direction = Direction()) -> PodRules:
    return PodRules(pod="shop/db", ip=IPv4Address("10.0.0.3"), ingress=ingress, egress=egress)


def test_a_pod_that_no_policy_selects_drops_nothing() -> None:
    text = render(_pod())
    assert text.splitlines() == [*HEAD, *HOOKS, *INGRESS_START, *EGRESS_START, "COMMIT"]
    assert text.endswith("COMMIT\n")


def test_isolation_without_allows_is_a_drop() -> None:
    text = render(_pod(ingress=Direction(isolated=True), egress=Direction(isolated=True)))
    assert text.splitlines() == [
        *HEAD,
        *HOOKS,
        *INGRESS_START,
        "-A NETDOJO-INGRESS -j DROP",
        *EGRESS_START,
        "-A NETDOJO-EGRESS -j DROP",
        "COMMIT",
    ]


def test_allows_become_accepts_in_order_before_the_drop() -> None:
    ingress = Direction(
        isolated=True,
        allows=(
            Allow(
                origin="shop/np0 ingress[0]",
                peers=(_block("10.0.0.1/32"), _block("10.0.2.0/24")),
                ports=(
                    PortRange(protocol="TCP", first=5432, last=5432),
                    PortRange(protocol="UDP", first=9000, last=9100),
                ),
            ),
            Allow(
                origin="shop/np1 ingress[0]",
                peers=None,
                ports=(PortRange(protocol="SCTP", first=1, last=65535),),
            ),
            Allow(origin="shop/np2 ingress[0]", peers=(_block("0.0.0.0/0"),), ports=None),
        ),
    )
    assert render(_pod(ingress=ingress)).splitlines()[len(HEAD) + len(HOOKS) + 2 :] == [
        "-A NETDOJO-INGRESS -s 10.0.0.1/32 -p tcp -m tcp --dport 5432 -j ACCEPT",
        "-A NETDOJO-INGRESS -s 10.0.0.1/32 -p udp -m udp --dport 9000:9100 -j ACCEPT",
        "-A NETDOJO-INGRESS -s 10.0.2.0/24 -p tcp -m tcp --dport 5432 -j ACCEPT",
        "-A NETDOJO-INGRESS -s 10.0.2.0/24 -p udp -m udp --dport 9000:9100 -j ACCEPT",
        "-A NETDOJO-INGRESS -p sctp -m sctp --dport 1:65535 -j ACCEPT",
        "-A NETDOJO-INGRESS -j ACCEPT",
        "-A NETDOJO-INGRESS -j DROP",
        *EGRESS_START,
        "COMMIT",
    ]


def test_excepts_return_from_a_chain_of_their_own() -> None:
    egress = Direction(
        isolated=True,
        allows=(
            Allow(
                origin="shop/np0 egress[0]",
                peers=(
                    _block("10.0.0.0/16", "10.0.1.0/24", "10.0.9.9/32"),
                    _block("192.168.0.0/16", "192.168.1.0/24"),
                ),
                ports=(PortRange(protocol="TCP", first=443, last=443),),
            ),
            Allow(
                origin="shop/np0 egress[1]",
                peers=(_block("172.16.0.0/12", "172.16.0.0/16"),),
                ports=None,
            ),
        ),
    )
    lines = render(_pod(egress=egress)).splitlines()
    assert lines[: len(HEAD)] == HEAD
    assert lines[len(HEAD) : len(HEAD) + 3] == [
        ":NETDOJO-EG-1 - [0:0]",
        ":NETDOJO-EG-2 - [0:0]",
        ":NETDOJO-EG-3 - [0:0]",
    ]
    assert lines[lines.index(EGRESS_START[1]) + 1 :] == [
        "-A NETDOJO-EGRESS -d 10.0.0.0/16 -j NETDOJO-EG-1",
        "-A NETDOJO-EGRESS -d 192.168.0.0/16 -j NETDOJO-EG-2",
        "-A NETDOJO-EGRESS -d 172.16.0.0/12 -j NETDOJO-EG-3",
        "-A NETDOJO-EGRESS -j DROP",
        "-A NETDOJO-EG-1 -d 10.0.1.0/24 -j RETURN",
        "-A NETDOJO-EG-1 -d 10.0.9.9/32 -j RETURN",
        "-A NETDOJO-EG-1 -p tcp -m tcp --dport 443 -j ACCEPT",
        "-A NETDOJO-EG-2 -d 192.168.1.0/24 -j RETURN",
        "-A NETDOJO-EG-2 -p tcp -m tcp --dport 443 -j ACCEPT",
        "-A NETDOJO-EG-3 -d 172.16.0.0/16 -j RETURN",
        "-A NETDOJO-EG-3 -j ACCEPT",
        "COMMIT",
    ]


def test_ipv6_blocks_are_left_out() -> None:
    ingress = Direction(
        isolated=True,
        allows=(
            Allow(origin="o", peers=(_block("2001:db8::/64"), _block("10.0.0.0/8")), ports=None),
        ),
    )
    text = render(_pod(ingress=ingress))
    assert "2001:db8" not in text
    assert "-A NETDOJO-INGRESS -s 10.0.0.0/8 -j ACCEPT" in text.splitlines()


def test_rendering_is_deterministic() -> None:
    pod = _pod(
        ingress=Direction(isolated=True, allows=(Allow(origin="o", peers=None, ports=None),))
    )
    assert render(pod) == render(PodRules.model_validate(pod.model_dump()))
