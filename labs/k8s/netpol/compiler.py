"""Compile a cluster's policies into each pod's rules (`ClusterRules`).

A pod is isolated in a direction when a policy of its namespace selects it and has that
direction in its ``policyTypes``; what it lets through is the union of those policies' rules.
Peers become addresses: selector peers the IPs of the pods they select now (pods without an IP
match nothing), ipBlocks their CIDR minus its excepts (pod IPs included: no address is
translated in these labs). Named ports resolve against the destination pod's container ports
with the rule's protocol: for ingress that is the pod itself, for egress each destination pod in
turn, so a named egress port yields one `Allow` per destination pod that has it.
"""

from __future__ import annotations

from collections.abc import Iterable
from ipaddress import ip_network

from netdojo.labs.k8s.netpol.cluster import Cluster
from netdojo.labs.k8s.netpol.ir import (
    AddressBlock,
    Allow,
    ClusterRules,
    Direction,
    Listener,
    PodRules,
    PortRange,
)
from netdojo.labs.k8s.netpol.policy import NetworkPolicy, PolicyPeer, PolicyPort, Rule
from netdojo.labs.k8s.objects import Pod

ALL_PORTS = (1, 65535)


def compile_cluster(cluster: Cluster) -> ClusterRules:
    policies = sorted(cluster.policies, key=lambda policy: (policy.namespace, policy.name))
    pods = sorted(cluster.pods, key=lambda pod: (pod.namespace, pod.name))
    return ClusterRules(pods=tuple(_pod_rules(cluster, policies, pod) for pod in pods))


def _pod_rules(cluster: Cluster, policies: list[NetworkPolicy], pod: Pod) -> PodRules:
    selecting = [p for p in policies if p.namespace == pod.namespace and _selects(p, pod)]
    ingress = [p for p in selecting if "Ingress" in p.policy_types]
    egress = [p for p in selecting if "Egress" in p.policy_types]
    ingress_allows = [
        allow
        for policy in ingress
        for index, rule in enumerate(policy.ingress_rules)
        for allow in _ingress_allows(cluster, policy, f"{policy.key} ingress[{index}]", rule, pod)
    ]
    egress_allows = [
        allow
        for policy in egress
        for index, rule in enumerate(policy.egress_rules)
        for allow in _egress_allows(cluster, policy, f"{policy.key} egress[{index}]", rule)
    ]
    return PodRules(
        pod=pod.key,
        ip=pod.ip,
        listeners=_listeners(pod),
        ingress=Direction(isolated=bool(ingress), allows=tuple(ingress_allows)),
        egress=Direction(isolated=bool(egress), allows=tuple(egress_allows)),
    )


def _selects(policy: NetworkPolicy, pod: Pod) -> bool:
    return policy.spec.pod_selector.matches(pod.labels)


def _listeners(pod: Pod) -> tuple[Listener, ...]:
    found = (Listener(protocol=p.protocol, port=p.container_port) for p in pod.ports)
    return tuple(dict.fromkeys(found))


def _ingress_allows(
    cluster: Cluster, policy: NetworkPolicy, origin: str, rule: Rule, pod: Pod
) -> list[Allow]:
    peers = _peer_blocks(cluster, policy, rule.peers)
    ports = _ports(rule.ports, pod)
    if peers == () or ports == ():
        return []
    return [Allow(origin=origin, peers=peers, ports=ports)]


def _egress_allows(cluster: Cluster, policy: NetworkPolicy, origin: str, rule: Rule) -> list[Allow]:
    """Numbered ports (or none) give one Allow over all the rule's peers; named ports give one
    Allow per destination pod that declares them."""
    peers = _peer_blocks(cluster, policy, rule.peers)
    if peers == ():
        return []
    numbered = tuple(port for port in rule.ports or () if not isinstance(port.port, str))
    named = tuple(port for port in rule.ports or () if isinstance(port.port, str))
    allows = []
    if not rule.ports or numbered:
        allows.append(Allow(origin=origin, peers=peers, ports=_ports(numbered, None)))
    if named:
        for target in _covered_pods(cluster, peers):
            ranges = _ports(named, target)
            if ranges:
                block = _pod_block(target)
                allows.append(Allow(origin=origin, peers=(block,), ports=ranges))
    return allows


def _peer_blocks(
    cluster: Cluster, policy: NetworkPolicy, peers: tuple[PolicyPeer, ...]
) -> tuple[AddressBlock, ...] | None:
    """The addresses the peers stand for; ``None`` (no peers) is any address, ``()`` none."""
    if not peers:
        return None
    blocks: list[AddressBlock] = []
    for peer in peers:
        if peer.ip_block is not None:
            blocks.append(AddressBlock(network=peer.ip_block.cidr, excepts=peer.ip_block.except_))
        else:
            blocks += (_pod_block(pod) for pod in _selected_pods(cluster, policy, peer) if pod.ip)
    return tuple(dict.fromkeys(blocks))


def _selected_pods(cluster: Cluster, policy: NetworkPolicy, peer: PolicyPeer) -> list[Pod]:
    if peer.namespace_selector is None:
        namespaces = {policy.namespace}
    else:
        selector = peer.namespace_selector
        namespaces = {ns.name for ns in cluster.namespaces if selector.matches(ns.labels)}
    pods = sorted(
        (pod for pod in cluster.pods if pod.namespace in namespaces),
        key=lambda pod: (pod.namespace, pod.name),
    )
    if peer.pod_selector is None:
        return pods
    return [pod for pod in pods if peer.pod_selector.matches(pod.labels)]


def _pod_block(pod: Pod) -> AddressBlock:
    assert pod.ip is not None
    return AddressBlock(network=ip_network(pod.ip))


def _covered_pods(cluster: Cluster, peers: tuple[AddressBlock, ...] | None) -> list[Pod]:
    """The pods with an address among ``peers`` (every pod with an address for ``None``)."""
    pods = sorted(cluster.pods, key=lambda pod: (pod.namespace, pod.name))
    return [
        pod
        for pod in pods
        if pod.ip is not None and (peers is None or any(b.contains(pod.ip) for b in peers))
    ]


def _ports(ports: Iterable[PolicyPort] | None, target: Pod | None) -> tuple[PortRange, ...] | None:
    """The port ranges of a rule's ports; ``None`` (no ports) is all traffic. Named ports are
    looked up in ``target``'s container ports with the same protocol."""
    listed = tuple(ports or ())
    if not listed:
        return None
    ranges: list[PortRange] = []
    for port in listed:
        if port.port is None:
            ranges.append(PortRange(protocol=port.protocol, first=ALL_PORTS[0], last=ALL_PORTS[1]))
        elif isinstance(port.port, int):
            last = port.port if port.end_port is None else port.end_port
            ranges.append(PortRange(protocol=port.protocol, first=port.port, last=last))
        elif target is not None:
            ranges += (
                PortRange(protocol=c.protocol, first=c.container_port, last=c.container_port)
                for c in target.ports
                if c.name == port.port and c.protocol == port.protocol
            )
    return tuple(dict.fromkeys(ranges))
