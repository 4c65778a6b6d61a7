"""Hidden tests: what the judge checks on a live lab, one small model per kind.

A hidden test has an id, a description in words, its kind, the device it runs on and the
parameters of its kind; `params.expect` says whether what it checks must hold (True) or must
not (False). Each kind's checker is registered in `netdojo.judges.checks`. A new kind is a
`…Params` and a `…Test` model here, a member of `HiddenTest`, and a checker registered there.

The serialized shape is `{"id", "description", "kind", "device", "params": {…}}`, with the
parameters in the order declared (a route's: in the order given, see `RouteParams`); an
optional parameter is written only when it is set.
"""

from __future__ import annotations

import ipaddress
import operator
from typing import Annotated, Any, Literal, Self, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    ModelWrapValidatorHandler,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)


def _address(value: str) -> str:
    ipaddress.ip_address(value)  # IPv4, or IPv6 for the IPv6 families
    return value


def _router_id(value: str) -> str:
    ipaddress.IPv4Address(value)  # a 32-bit id, written as an IPv4 address whatever the family
    return value


def _prefix(value: str) -> str:
    ipaddress.ip_network(value)
    return value


def _interface_address(value: str) -> str:
    if "/" not in value:
        raise ValueError(f"{value} has no prefix length")
    ipaddress.ip_interface(value)
    return value


Address = Annotated[str, AfterValidator(_address)]
Prefix = Annotated[str, AfterValidator(_prefix)]
InterfaceAddress = Annotated[str, AfterValidator(_interface_address)]
Name = Annotated[str, Field(min_length=1)]
RouterId = Annotated[str, AfterValidator(_router_id)]


class _Params(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class HiddenTestBase(BaseModel):
    """What every hidden test has; each kind adds its ``kind`` literal and its ``params``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: Name
    description: str
    kind: str
    device: Name


class PingParams(_Params):
    target: Address
    expect: bool = True


class PingTest(HiddenTestBase):
    """``device`` pings ``target``, and the device the plan gives that address answers."""

    kind: Literal["ping"] = "ping"
    params: PingParams


class RouteParams(_Params):
    """The route's fields are written in the order they were given (the rest after them):
    the generators give `expect` at different places, and an instance's JSON must stay the
    one it was generated with, read back or not."""

    prefix: Prefix
    via: Address | None = Field(None, exclude_if=lambda via: via is None)
    sole: bool = Field(False, exclude_if=operator.not_)
    blackhole: bool = Field(False, exclude_if=operator.not_)
    expect: bool = True
    _given: tuple[str, ...] = PrivateAttr(())

    @model_validator(mode="wrap")
    @classmethod
    def _remember_order(cls, data: Any, handler: ModelWrapValidatorHandler[Self]) -> Self:
        made = handler(data)
        if isinstance(data, dict):
            made._given = tuple(data)
        return made

    @model_serializer(mode="wrap")
    def _in_given_order(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        written: dict[str, Any] = handler(self)
        order = [key for key in self._given if key in written]
        order += [key for key in written if key not in order]
        return {key: written[key] for key in order}


class RouteTest(HiddenTestBase):
    """``device`` has ``prefix`` selected; via ``via`` if given (``sole``: via nothing else);
    ``blackhole``: the selected route drops the traffic."""

    kind: Literal["route"] = "route"
    params: RouteParams


class OspfAdjacencyParams(_Params):
    neighbor: Address = Field(description="the neighbour's router-id")
    expect: bool = True


class OspfAdjacencyTest(HiddenTestBase):
    """``device`` has ``neighbor`` in Full state."""

    kind: Literal["ospf_full"] = "ospf_full"
    params: OspfAdjacencyParams


class Ospf6AdjacencyParams(_Params):
    neighbor: RouterId = Field(description="the neighbour's OSPFv3 router-id")
    expect: bool = True


class Ospf6AdjacencyTest(HiddenTestBase):
    """``device`` has the OSPFv3 neighbour ``neighbor`` in Full state."""

    kind: Literal["ospf6_full"] = "ospf6_full"
    params: Ospf6AdjacencyParams


class IsisAdjacencyParams(_Params):
    neighbor: Name = Field(description="the neighbour's hostname, as IS-IS shows it")
    system_id: str = Field(pattern=r"^[0-9a-f]{4}\.[0-9a-f]{4}\.[0-9a-f]{4}$")
    interface: Name
    expect: bool = True


class IsisAdjacencyTest(HiddenTestBase):
    """``device`` has an Up IS-IS adjacency with ``neighbor`` (by hostname or system id) on
    ``interface``."""

    kind: Literal["isis_adjacency"] = "isis_adjacency"
    params: IsisAdjacencyParams


class ConfigParams(_Params):
    pattern: str = Field(min_length=1)
    match: Literal["line", "prefix", "words"] = Field(
        "line", exclude_if=lambda match: match == "line"
    )
    expect: bool = True


class ConfigTest(HiddenTestBase):
    """``device``'s running-config has a line equal to ``pattern`` (``match="prefix"``: a
    line starting with it; ``"words"``: a line whose first words are its words), both
    stripped."""

    kind: Literal["config"] = "config"
    params: ConfigParams


class LinkParams(_Params):
    interface: Name
    expect: bool = True


class LinkUpTest(HiddenTestBase):
    """``device``'s ``interface`` is up."""

    kind: Literal["link_up"] = "link_up"
    params: LinkParams


class DefaultRouteParams(_Params):
    gateway: Address | None = Field(description="None: no default route")
    expect: bool = True


class DefaultRouteTest(HiddenTestBase):
    """``device``'s default route goes via ``gateway``."""

    kind: Literal["default_route"] = "default_route"
    params: DefaultRouteParams


class AddressParams(_Params):
    interface: Name
    address: InterfaceAddress
    expect: bool = True


class AddressTest(HiddenTestBase):
    """``device``'s ``interface`` carries ``address`` (with its prefix length)."""

    kind: Literal["address"] = "address"
    params: AddressParams


class BgpSessionParams(_Params):
    peer: Address
    expect: bool = True


class BgpSessionTest(HiddenTestBase):
    """``device``'s BGP session with ``peer`` is Established."""

    kind: Literal["bgp_session"] = "bgp_session"
    params: BgpSessionParams


class TcpParams(_Params):
    target: Address
    port: int = Field(ge=1, le=65535)
    expect: bool = True


class TcpTest(HiddenTestBase):
    """``device`` opens a TCP connection to ``target``:``port``, and the device the plan gives
    that address accepts it."""

    kind: Literal["tcp"] = "tcp"
    params: TcpParams


class UdpTest(HiddenTestBase):
    """``device`` sends a datagram to ``target``:``port`` and gets an answer, and the device the
    plan gives that address delivered the datagram to a listening socket."""

    kind: Literal["udp"] = "udp"
    params: TcpParams


class BgpRouteParams(_Params):
    prefix: Prefix
    not_from: Address = Field(description="the peer no BGP path for the prefix may come from")
    expect: bool = True


class BgpRouteTest(HiddenTestBase):
    """``device`` has ``prefix`` selected and no BGP path for it from ``not_from``."""

    kind: Literal["bgp_route"] = "bgp_route"
    params: BgpRouteParams


class PathParams(_Params):
    target: Address
    routers: list[Name] = Field(min_length=1)
    owners: dict[Address, Name] = Field(description="each router address and its router")
    expect: bool = True


class PathTest(HiddenTestBase):
    """``device``'s traceroute to ``target`` crosses ``routers``, in order, and arrives."""

    kind: Literal["path"] = "path"
    params: PathParams


class PolicyMatrixParams(_Params):
    allowed: list[str] = Field(
        description="every flow to allow, as `namespace/pod>namespace/pod:port/PROTOCOL`"
    )
    expect: bool = True


class PolicyMatrixTest(HiddenTestBase):
    """The NetworkPolicies the lab's API server holds allow, among the pods as it holds them
    and the ports they declare, exactly the flows ``allowed`` (netdojo's NetworkPolicy
    compiler decides, proven against an independent analyser). ``device``: `CONTROL_PLANE`."""

    kind: Literal["policy_matrix"] = "policy_matrix"
    params: PolicyMatrixParams


class PolicyParams(_Params):
    namespace: Name
    name: Name
    expect: bool = True


class PolicyTest(HiddenTestBase):
    """The lab's API server holds the NetworkPolicy ``namespace``/``name``.
    ``device``: `CONTROL_PLANE`."""

    kind: Literal["policy"] = "policy"
    params: PolicyParams


class PlanAnswerParams(_Params):
    answers: list[JsonValue] = Field(description="each query's expected answer, in order")
    ordered: list[bool] = Field(description="for each query, whether a list's order counts")
    expect: bool = True


class PlanAnswerTest(HiddenTestBase):
    """The answer file a capacity-planning agent left holds, query by query, the ``answers``
    (`netdojo.scenarios.capacity.queries.check_answers`). ``device``: the planner."""

    kind: Literal["plan_answer"] = "plan_answer"
    params: PlanAnswerParams


class PlanModelParams(_Params):
    digest: str = Field(
        pattern="^[0-9a-f]{64}$", description="sha256 of the expected model's canonical form"
    )
    entities: int = Field(ge=0)
    relations: int = Field(ge=0)
    expect: bool = True


class PlanModelTest(HiddenTestBase):
    """The model the agent left has the canonical form whose digest is ``digest`` (the counts
    only describe a difference). ``device``: the planner."""

    kind: Literal["plan_model"] = "plan_model"
    params: PlanModelParams


class PlanValidParams(_Params):
    plan_schema: dict[str, JsonValue] = Field(description="the instance's schema")
    expect: bool = True


class PlanValidTest(HiddenTestBase):
    """The model the agent left is a valid model of the instance's schema: every invariant
    holds. ``device``: the planner."""

    kind: Literal["plan_valid"] = "plan_valid"
    params: PlanValidParams


class TransferParams(_Params):
    target: Address
    server: Name = Field(description="the device that runs the receiving end")
    kilobytes: int = Field(ge=1, le=100_000)
    within_s: int = Field(ge=1, le=60)
    expect: bool = True


class TransferTest(HiddenTestBase):
    """``device`` sends ``kilobytes`` over one TCP connection to ``target`` (iperf3, its server
    started on ``server`` for the test and stopped after) and the transfer ends within
    ``within_s`` seconds; with the plan's owners known, ``server`` must be the owner of
    ``target`` and must have accepted the connections."""

    kind: Literal["transfer"] = "transfer"
    params: TransferParams


class ThroughputParams(_Params):
    target: Address
    server: Name = Field(description="the device that runs the receiving end")
    seconds: int = Field(ge=1, le=30)
    min_mbps: float = Field(gt=0)
    expect: bool = True


class ThroughputTest(HiddenTestBase):
    """``device`` sends TCP to ``target`` for ``seconds`` (iperf3, its server started on
    ``server`` for the test and stopped after) and the receiver counts at least ``min_mbps``
    Mbit/s; witnessed like a transfer."""

    kind: Literal["throughput"] = "throughput"
    params: ThroughputParams


class LatencyParams(_Params):
    target: Address
    count: int = Field(ge=5, le=1000)
    max_rtt_ms: float = Field(gt=0)
    max_loss_percent: float = Field(ge=0, le=100)
    expect: bool = True


class LatencyTest(HiddenTestBase):
    """``device`` sends ``count`` pings to ``target``, 10 ms apart: the average round trip is at
    most ``max_rtt_ms`` and at most ``max_loss_percent`` of them go unanswered; with the plan's
    owners known, the owner of ``target`` must have answered the replies counted."""

    kind: Literal["latency"] = "latency"
    params: LatencyParams


class IpRuleParams(_Params):
    priority: int = Field(ge=1, le=32765)
    expect: bool = True


class IpRuleTest(HiddenTestBase):
    """``device`` holds a policy-routing rule (`ip rule`) at ``priority``."""

    kind: Literal["ip_rule"] = "ip_rule"
    params: IpRuleParams


class ForwardParams(_Params):
    target: Address
    port: int = Field(ge=1, le=65535)
    server: Name = Field(description="the device that must accept the connection")
    expect: bool = True


class ForwardTest(HiddenTestBase):
    """``device`` opens a TCP connection to ``target``:``port``, an address that translates it
    (a port forward), and ``server``, not the owner of ``target``, accepts it."""

    kind: Literal["forward"] = "forward"
    params: ForwardParams


class SeenSourceParams(_Params):
    target: Address
    port: int = Field(ge=1, le=65535)
    server: Name = Field(description="the device that owns ``target`` and watches the source")
    source: Address = Field(description="the source address ``server`` must see")
    expect: bool = True


class SeenSourceTest(HiddenTestBase):
    """``device`` opens a TCP connection to ``target``:``port``, where ``server`` listens for
    one connection for the test, and ``server`` sees it come from ``source``."""

    kind: Literal["seen_source"] = "seen_source"
    params: SeenSourceParams


class NetfilterParams(_Params):
    command: Literal["iptables-save", "nft list ruleset"]
    words: list[str] = Field(min_length=1, description="all on one line of the listing")
    expect: bool = True


class NetfilterTest(HiddenTestBase):
    """A line of ``device``'s netfilter listing (``command``) holds every one of ``words``."""

    kind: Literal["netfilter"] = "netfilter"
    params: NetfilterParams


class DhcpLeaseParams(_Params):
    subnet: str = Field(description="the prefix the lease's address must lie in")
    router: str | None = Field(default=None, description="the gateway the lease must hand out")
    dns: str | None = Field(default=None, description="the resolver the lease must hand out")
    expect: bool = True


class DhcpLeaseTest(HiddenTestBase):
    """``device`` (a DHCP client) obtains a lease now, in ``subnet``, with ``router`` and
    ``dns`` as its options where given; the probe's lease configures nothing."""

    kind: Literal["dhcp_lease"] = "dhcp_lease"
    params: DhcpLeaseParams


class DnsAnswerParams(_Params):
    name: str
    address: str = Field(description="the A record the answer must hold")
    server: str | None = Field(default=None, description="asked directly; None: the device's "
                               "own resolver")  # fmt: skip
    expect: bool = True


class DnsAnswerTest(HiddenTestBase):
    """A lookup of ``name`` from ``device`` answers ``address``."""

    kind: Literal["dns_answer"] = "dns_answer"
    params: DnsAnswerParams


HiddenTest = Annotated[
    PingTest
    | RouteTest
    | OspfAdjacencyTest
    | ConfigTest
    | LinkUpTest
    | DefaultRouteTest
    | AddressTest
    | BgpSessionTest
    | TcpTest
    | BgpRouteTest
    | PathTest
    | UdpTest
    | PolicyMatrixTest
    | PolicyTest
    | PlanAnswerTest
    | PlanModelTest
    | PlanValidTest
    | TransferTest
    | ThroughputTest
    | LatencyTest
    | IpRuleTest
    | IsisAdjacencyTest
    | ForwardTest
    | SeenSourceTest
    | NetfilterTest
    | DhcpLeaseTest
    | DnsAnswerTest
    | Ospf6AdjacencyTest,
    Field(discriminator="kind"),
]
"""Any hidden test, told apart by its ``kind``."""

TEST_MODELS: tuple[type[HiddenTestBase], ...] = get_args(get_args(HiddenTest)[0])
"""Each kind's model, in the order of `HiddenTest`."""


def kind_of(model: type[HiddenTestBase]) -> str:
    """The ``kind`` a hidden test model carries."""
    kind: str = model.model_fields["kind"].default
    return kind
