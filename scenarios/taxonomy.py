"""The published taxonomy of fault classes, and the structured root cause an agent submits.

Every fault and task type a reactive family draws maps to one class here, so a diagnosis can
be scored against the injected faults by class as well as by place. ``none`` is the class of a
healthy network: nothing is wrong. The table is the one place a type gets its class; a type
left out fails the unit tests (`tests/unit/test_taxonomy.py`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from netdojo.scenarios.model import Fault

FaultClass = Literal[
    "link",
    "addressing",
    "adjacency",
    "routing_policy",
    "static_route",
    "filtering",
    "host_config",
    "policy_routing",
    "performance",
    "translation",
    "service",
    "kubernetes_policy",
    "none",
]
CLASSES: dict[FaultClass, str] = {
    "link": "a link or interface down, or its layer-2 settings (MTU) wrong",
    "addressing": "an interface address or prefix length wrong",
    "adjacency": "a routing-protocol adjacency or session that does not form: areas, timers, "
    "authentication, network types, neighbours, peering addresses",
    "routing_policy": "routes that form but are advertised, filtered, redistributed or preferred "
    "wrongly: missing networks, prefix lists, route maps, costs, preferences, limits",
    "static_route": "a static or kernel route missing, wrong or overriding the design",
    "filtering": "a packet filter (iptables, nftables) that drops or admits the wrong traffic",
    "host_config": "a host's own address, mask or default gateway",
    "policy_routing": "a routing rule (`ip rule`) sending traffic to the wrong routing table",
    "performance": "a queue, shaper or drop on a link that slows or thins traffic",
    "translation": "an address translation (source NAT, masquerade, port forward) missing, "
    "wrong or bypassed",
    "service": "a network service in the lab (DHCP, DNS) serving wrong or no answers",
    "kubernetes_policy": "a Kubernetes NetworkPolicy that admits or denies the wrong flows",
    "none": "nothing is wrong: the network is healthy",
}
"""Each class with what it covers, as the docs and the submit tool describe it."""

TAXONOMY: dict[str, FaultClass] = {
    "iface.admin_down": "link",
    "iface.lan_port_down": "link",
    "iface.mtu_mismatch": "link",
    "iface.wrong_address": "addressing",
    "iface.lan_wrong_mask": "addressing",
    "static.missing_route": "static_route",
    "static.wrong_next_hop": "static_route",
    "static.wrong_prefix": "static_route",
    "static.blackhole": "static_route",
    "static.more_specific_hijack": "static_route",
    "static.route_override": "static_route",
    "ospf.area_mismatch": "adjacency",
    "ospf.hello_mismatch": "adjacency",
    "ospf.dead_mismatch": "adjacency",
    "ospf.passive_transit": "adjacency",
    "ospf.missing_network_transit": "adjacency",
    "ospf.network_type_mismatch": "adjacency",
    "ospf.auth_key_mismatch": "adjacency",
    "ospf.auth_one_side": "adjacency",
    "ospf.stub_area_mismatch": "adjacency",
    "ospf.router_id_clash": "adjacency",
    "ospf.missing_loopback": "routing_policy",
    "ospf.missing_network_stub": "routing_policy",
    "ospf.cost_steering": "routing_policy",
    "ospf.missing_redistribution": "routing_policy",
    "ospf.redistribution_filter": "routing_policy",
    "bgp.missing_neighbor": "adjacency",
    "bgp.md5_one_side": "adjacency",
    "bgp.md5_mismatch": "adjacency",
    "bgp.wrong_remote_as": "adjacency",
    "bgp.update_source_missing": "adjacency",
    "bgp.max_prefix": "routing_policy",
    "bgp.missing_network": "routing_policy",
    "bgp.requires_policy": "routing_policy",
    "bgp.local_pref_steering": "routing_policy",
    "bgp.as_path_prepend_steering": "routing_policy",
    "bgp.next_hop_self_missing": "routing_policy",
    "bgp.prefix_list_out": "routing_policy",
    "bgp.prefix_list_in": "routing_policy",
    "bgp.route_map_out_deny": "routing_policy",
    "bgp.route_map_in_deny": "routing_policy",
    "acl.needed_flow_dropped": "filtering",
    "acl.forbidden_flow_allowed": "filtering",
    "acl.rule_order": "filtering",
    "acl.nft_drop": "filtering",
    "acl.rule_wrong_hop": "filtering",
    "acl.stray_accept": "filtering",
    "host.wrong_gateway": "host_config",
    "host.missing_default": "host_config",
    "host.wrong_mask": "host_config",
    "host.wrong_address": "host_config",
    "rip.version_mismatch": "adjacency",
    "rip.passive_transit": "adjacency",
    "rip.missing_network_transit": "adjacency",
    "rip.auth_key_mismatch": "adjacency",
    "rip.auth_one_side": "adjacency",
    "rip.timers": "adjacency",
    "rip.missing_network_stub": "routing_policy",
    "rip.distribute_list": "routing_policy",
    "rip.offset_steering": "routing_policy",
    "isis.level_mismatch": "adjacency",
    "isis.area_mismatch": "adjacency",
    "isis.auth_mismatch": "adjacency",
    "isis.passive_transit": "adjacency",
    "isis.hello_padding_mtu": "link",
    "isis.metric_steering": "routing_policy",
    "isis.overload_bit": "routing_policy",
    "v6.ospf6_area_mismatch": "adjacency",
    "v6.ospf6_hello_mismatch": "adjacency",
    "v6.ospf6_passive_transit": "adjacency",
    "v6.ospf6_dead_mismatch": "adjacency",
    "v6.ospf6_lan_unannounced": "routing_policy",
    "v6.static_blackhole": "static_route",
    "v6.lan_wrong_prefix": "addressing",
    "v6bgp.af_not_activated": "adjacency",
    "v6bgp.lan_unannounced": "routing_policy",
    "v6bgp.remote_as_wrong": "adjacency",
    "v6bgp.nexthop_unreachable": "routing_policy",
    "v6bgp.linklocal_nexthop": "routing_policy",
    "v6bgp.prefix_filtered": "routing_policy",
    "v6bgp.ra_suppressed": "host_config",
    "prule.wrong_table_default": "policy_routing",
    "prule.unroutable_table": "policy_routing",
    "prule.source_unroutable": "policy_routing",
    "prule.shadowed_rule": "policy_routing",
    "pmtu.icmp_filtered_near": "filtering",
    "pmtu.icmp_filtered_nft": "filtering",
    "pmtu.icmp_filtered_edge": "filtering",
    "perf.rate_limit": "performance",
    "perf.shaper_class": "performance",
    "perf.lan_rate_limit": "performance",
    "perf.random_drop": "performance",
    "nat.masquerade_missing": "translation",
    "nat.snat_wrong_address": "translation",
    "nat.snat_wrong_interface": "translation",
    "nat.forward_wrong_host": "translation",
    "nat.forward_wrong_port": "translation",
    "nat.forward_missing": "translation",
    "nat.nft_forward_override": "translation",
    "nat.asymmetric_return": "static_route",
    "nat.notrack_inside": "translation",
    "nat.notrack_forward": "translation",
    "dhcp.config_broken": "service",
    "dhcp.scope_exhausted": "service",
    "dhcp.scope_outside": "service",
    "dhcp.wrong_resolver": "service",
    "dhcp.wrong_router": "service",
    "dhcp.relay_wrong_server": "service",
    "dhcp.relay_missing": "service",
    "dhcp.relay_scope_missing": "service",
    "dns.wrong_record": "service",
    "dns.zone_broken": "service",
}
"""Each fault type id -> its class; Kubernetes policy types (``k8s.*``) by their prefix."""

PREFIX_CLASSES: dict[str, FaultClass] = {"k8s.": "kubernetes_policy"}
"""Whole families of types that share one class, by the prefix of their ids."""


def fault_class(type_id: str) -> FaultClass | None:
    """The class of fault type ``type_id``; None when the taxonomy does not map it."""
    if type_id in TAXONOMY:
        return TAXONOMY[type_id]
    for prefix, kind in PREFIX_CLASSES.items():
        if type_id.startswith(prefix):
            return kind
    return None


Location = Annotated[
    str,
    Field(
        description="a device at fault, or one of its interfaces as device:interface "
        "(e.g. r2 or r2:eth1)",
        max_length=200,
    ),
]


def _untitled(schema: dict[str, Any]) -> None:
    """Drop pydantic's titles, as a tool's own arguments do (a small model may copy them)."""
    schema.pop("title", None)
    for field in schema.get("properties", {}).values():
        field.pop("title", None)


class Diagnosis(BaseModel):
    """A structured root cause, as `submit` takes it: where the faults are and their classes.
    A healthy network is diagnosed with no location and the class ``none``."""

    model_config = ConfigDict(extra="forbid", frozen=True, json_schema_extra=_untitled)

    locations: list[Location] = Field(
        default_factory=list, max_length=50, description="the devices (or interfaces) at fault"
    )
    classes: list[FaultClass] = Field(
        default_factory=list,
        max_length=20,
        description="the fault classes found; ['none'] when nothing is wrong. Classes: "
        + "; ".join(f"{name}: {what}" for name, what in CLASSES.items()),
    )

    @property
    def devices(self) -> frozenset[str]:
        """The devices named, interfaces reduced to their device."""
        return frozenset(loc.split(":", 1)[0].strip() for loc in self.locations if loc.strip())

    @property
    def fault_classes(self) -> frozenset[str]:
        return frozenset(self.classes)

    @property
    def claims_fault(self) -> bool:
        """Whether the diagnosis says something is wrong: a place, or a class other than none."""
        return bool(self.devices) or bool(self.fault_classes - {"none"})


class RootCause(BaseModel):
    """The truth a diagnosis is scored against: the devices of the injected faults (red
    herrings aside) and their classes; a healthy network has no device and the class none."""

    model_config = ConfigDict(frozen=True)

    devices: frozenset[str]
    classes: frozenset[str]


def root_cause(faults: list[Fault]) -> RootCause:
    """The root cause of a scenario whose hidden half injects ``faults``."""
    real = [f for f in faults if not f.red_herring]
    if not real:
        return RootCause(devices=frozenset(), classes=frozenset({"none"}))
    classes = {fault_class(f.type) or "unmapped" for f in real}
    return RootCause(devices=frozenset(f.device for f in real), classes=frozenset(classes))
