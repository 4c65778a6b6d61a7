"""The registries of fault types and scenario families, and their lookups.

A fault type is declared once, with `@fault("ospf.area_mismatch", routing={"ospf"})` on its
injector; a family is declared once, in its own module under `scenarios/families/`, with
`register(Family(...))`. Families name their fault types by the declared objects, so a typo
fails at import. The catalogue is every module of `netdojo.scenarios.families`, loaded on the
first lookup: the established families in the order that package imports them, then the others.
"""

from __future__ import annotations

import importlib
import pkgutil
import random
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import NamedTuple

from netdojo.errors import NetdojoError
from netdojo.labs.spec import LabSpec
from netdojo.scenarios.constructive import IntentKind
from netdojo.scenarios.faults.base import FaultContext, FaultPlan, Injector
from netdojo.scenarios.model import STANDARD_TOOLS, HiddenHalf, Kind, PublicHalf
from netdojo.scenarios.network import Network, Routing, plan_network
from netdojo.scenarios.topology import Shape, Topology

LEVELS = (1, 2, 3)

Planner = Callable[[Topology, int, random.Random], Network]  # (topology, level, rng)


class Built(NamedTuple):
    """The two halves of an instance a family builds itself."""

    public: PublicHalf
    hidden: HiddenHalf


Builder = Callable[[int, random.Random, str], Built]  # (level, rng, lab name)
Furnisher = Callable[[LabSpec, Network], None]  # adds a family's services to a rendered lab


class ScenarioError(NetdojoError):
    """A family, level or seed that cannot produce a scenario, or a declaration that is wrong."""


@dataclass(frozen=True)
class FaultType:
    """One fault type: its id, where it can occur, and its injector, which picks a place with
    the context's generator and returns the plan (injection, presence tests, fix, impact)."""

    id: str
    injector: Injector
    routing: frozenset[Routing] | None = None  # the routings it occurs under; None: any
    firewall: bool = False  # it needs the family's firewall policy (``ctx.firewall``)

    def draw(self, ctx: FaultContext) -> FaultPlan | None:
        """A plan for one place the type can land now; None when it cannot occur here."""
        if self.routing is not None and ctx.routing not in self.routing:
            return None
        if self.firewall and ctx.firewall is None:
            return None
        return self.injector(ctx, self.id)


@dataclass(frozen=True, kw_only=True)
class Family:
    """A scenario family: how its networks are planned, what goes wrong in them or what is to
    be built, how its brief states the repair rule, and which tools an agent gets.

    Most families are drawn on a routed network (``routing``, ``shapes``, ``plan``) with
    registered fault types. One whose instances are not routed networks (a Kubernetes
    application, say) gives ``build`` instead, and names the fault types it draws in ``kinds``.
    """

    name: str
    kind: Kind
    summary: str
    routing: Routing | None = None
    shapes: dict[int, tuple[Shape, ...]] = field(default_factory=dict)  # topologies per level
    faults: tuple[FaultType, ...] = ()  # reactive: drawn in this order (the seed depends on it)
    task: str | None = None  # constructive: the task type the catalogue names
    intent: IntentKind | None = None  # constructive: a policy on top of the build
    plan: Planner = plan_network  # the network drawn on a topology: addresses, hosts, ASes
    firewall: bool = False  # a server behind an iptables policy (see scenarios.firewall)
    furnish: Furnisher | None = None  # services installed on the lab before any fault
    repair: str | None = None  # how a repair must be made (briefs.ROUTING_RULES); else routing
    levels: tuple[int, ...] = LEVELS
    tools: tuple[str, ...] = STANDARD_TOOLS  # the tools an agent gets, by name
    build: Builder | None = None  # an instance built by the family, not drawn on a network
    kinds: tuple[str, ...] = ()  # reactive, with ``build``: the fault types it draws
    packages: tuple[str, ...] = ()  # Debian packages its devices need in the device image

    @property
    def types(self) -> tuple[str, ...]:
        """The fault or task types, as the catalogue lists them."""
        if self.task is not None:
            return (self.task,)
        return self.kinds if self.build is not None else tuple(f.id for f in self.faults)

    @property
    def network_routing(self) -> Routing:
        """The routing of a family drawn on a routed network."""
        if self.routing is None:
            raise ScenarioError(f"family {self.name!r} is not drawn on a routed network")
        return self.routing


_faults: dict[str, FaultType] = {}
_families: dict[str, Family] = {}
_loaded = False


def fault(
    id: str, *, routing: Iterable[Routing] | None = None, firewall: bool = False
) -> Callable[[Injector], FaultType]:
    """Declare the decorated injector as fault type ``id``; it is drawn only under ``routing``
    (any when None) and, with ``firewall``, only in a family with a firewall policy."""

    def declare(injector: Injector) -> FaultType:
        kind = FaultType(id, injector, None if routing is None else frozenset(routing), firewall)
        _add_fault(kind)
        return kind

    return declare


def _add_fault(kind: FaultType) -> None:
    if kind.id in _faults:
        raise ScenarioError(f"fault type {kind.id!r} is declared twice")
    _faults[kind.id] = kind


def register(family: Family) -> Family:
    """Add ``family`` to the catalogue, after checking that it can be generated."""
    if family.name in _families:
        raise ScenarioError(f"family {family.name!r} is registered twice")
    _check(family)
    _families[family.name] = family
    return family


def _check(family: Family) -> None:
    def fail(why: str) -> ScenarioError:
        return ScenarioError(f"family {family.name!r}: {why}")

    if not set(family.levels) <= set(LEVELS) or not family.levels:
        raise fail(f"levels must be among {LEVELS}")
    if family.build is not None:
        if family.faults or family.routing is not None:
            raise fail("a family that builds its instances draws no network and no fault types")
        if family.kind == "reactive" and (not family.kinds or family.task is not None):
            raise fail("a reactive family names the fault types it draws and no task")
    elif family.routing is None:
        raise fail("a family drawn on a network names its routing")
    elif missing := [level for level in family.levels if not family.shapes.get(level)]:
        raise fail(f"no shapes for levels {missing}")
    elif family.kind == "reactive" and (not family.faults or family.task is not None):
        raise fail("a reactive family draws fault types and names no task")
    if family.kind == "constructive" and (family.faults or family.kinds or family.task is None):
        raise fail("a constructive family names its task and draws no fault types")
    for kind in family.faults:
        if _faults.get(kind.id) is not kind:
            raise fail(f"fault type {kind.id!r} is not registered")
        if kind.routing is not None and family.routing not in kind.routing:
            raise fail(f"fault type {kind.id!r} does not occur under {family.routing} routing")
        if kind.firewall and not family.firewall:
            raise fail(f"fault type {kind.id!r} needs a firewall policy")


@contextmanager
def registered(family: Family) -> Iterator[Family]:
    """``family``, and those of its fault types not yet registered, in the registries for the
    duration of the block (for tests: a family with its own faults or tools)."""
    _discover()
    added = [kind for kind in dict.fromkeys(family.faults) if kind.id not in _faults]
    for kind in added:
        _add_fault(kind)
    try:
        register(family)
        try:
            yield family
        finally:
            del _families[family.name]
    finally:
        for kind in added:
            del _faults[kind.id]


def families() -> Mapping[str, Family]:
    """Every registered family by name, in catalogue order."""
    _discover()
    return MappingProxyType(_families)


def family(name: str) -> Family:
    _discover()
    if name not in _families:
        raise ScenarioError(f"unknown family {name!r}; families are: {', '.join(_families)}")
    return _families[name]


def fault_types() -> Mapping[str, FaultType]:
    """Every declared fault type by id."""
    _discover()
    return MappingProxyType(_faults)


def fault_type(id: str) -> FaultType:
    _discover()
    if id not in _faults:
        raise ScenarioError(f"unknown fault type {id!r}")
    return _faults[id]


def _discover() -> None:
    """Load the catalogue: importing the families package registers the established families in
    their order, then every other module of the package registers its own (in name order), and,
    through their imports, every fault type they draw."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    import netdojo.scenarios.families as package

    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{info.name}")
