"""The plan model (entities and relations as JSON) and the schema one instance names it by.

Every instance draws its own naming: kind names (`EK_PORT`, `PORT`, `port`), the capacity
attribute and its unit, and at higher levels extra kinds between the standard ones (a rack or
chassis between block and switch, a linecard between switch and port). The invariants a valid
model satisfies are listed once here, by name, in words; `invariants.py` checks them.
"""

from __future__ import annotations

from functools import cached_property
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, ValidationError

from netdojo.scenarios.capacity.bulk import bulk

Role = Literal[
    "root",
    "superblock",
    "agg_block",
    "spine_block",
    "rack",
    "switch",
    "linecard",
    "port",
    "control_domain",
]
"""What an entity kind is in the hierarchy, whatever the instance calls it."""
ROLES: tuple[Role, ...] = get_args(Role)
"""Every role, from the root down, control domains last."""

Unit = Literal["bps", "Mbps", "Gbps"]
UNIT_BPS: dict[str, int] = {"bps": 1, "Mbps": 10**6, "Gbps": 10**9}
UNIT_WORDS: dict[str, str] = {
    "bps": "bits per second",
    "Mbps": "megabits per second",
    "Gbps": "gigabits per second",
}
BLOCK_ROLES: tuple[Role, ...] = ("agg_block", "spine_block")

Scalar = str | int | float | bool | None

INVARIANTS: tuple[tuple[str, str], ...] = (
    ("unique-names", "every entity has a name that no other entity has"),
    ("known-kinds", "every entity's kind is one of the kinds the schema lists"),
    ("known-relations", 'every relation\'s kind is "{contains}" or "{controls}"'),
    ("relation-endpoints", "every relation's source and target name entities of the model"),
    (
        "hierarchy",
        'each "{contains}" relation goes from a container to a kind it may contain (see the '
        'containment table), and each "{controls}" relation from a "{control_domain}" to a '
        '"{switch}"',
    ),
    ("one-root", 'there is exactly one "{root}" entity'),
    (
        "one-container",
        'every entity except the "{root}" is contained by exactly one entity; the "{root}" by none',
    ),
    ("no-isolated", "no entity is isolated: each one is the source or target of a relation"),
    (
        "port-capacity",
        'every "{port}" has a positive number in attribute "{capacity_attr}", in {unit}',
    ),
    ("switch-has-port", 'every "{switch}" contains at least one "{port}"{through}'),
    ("one-controller", 'every "{switch}" is controlled by exactly one "{control_domain}"'),
)
"""The invariants of a valid model: (name, statement with the schema's names as fields)."""

MEANINGS: dict[Role, str] = {
    "root": "the whole data-centre fabric; the single root of the model",
    "superblock": "a superblock, a group of aggregation and spine blocks",
    "agg_block": "an aggregation block",
    "spine_block": "a spine block",
    "rack": "a rack of packet switches inside a block",
    "switch": "a packet switch",
    "linecard": "a linecard of a packet switch, holding ports",
    "port": "a switch port; its capacity is the only capacity in the model",
    "control_domain": "a control domain of the SDN control plane",
}


class PlanModelError(ValueError):
    """A plan model's JSON does not parse or does not have the model's shape."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Entity(_Frozen):
    name: str
    kind: str
    attrs: dict[str, Scalar] = {}


class Relation(_Frozen):
    kind: str
    source: str
    target: str


class PlanModel(_Frozen):
    """A data-centre model: the JSON an agent reads and writes back."""

    entities: list[Entity]
    relations: list[Relation]

    @classmethod
    def from_json(cls, text: str | bytes) -> PlanModel:
        """The model in ``text``; a `PlanModelError` lists every place it is wrong."""
        try:
            with bulk():
                return cls.model_validate_json(text)
        except ValidationError as error:
            problems = error.errors(include_url=False)
            lines = [
                f"- {'.'.join(str(part) for part in problem['loc']) or '(top)'}: {problem['msg']}"
                for problem in problems[:20]
            ]
            if len(problems) > 20:
                lines.append(f"- ... and {len(problems) - 20} more")
            raise PlanModelError(
                f"the model does not have the expected shape ({len(problems)} problems):\n"
                + "\n".join(lines)
            ) from None

    def to_json(self, indent: int | None = None) -> str:
        return self.model_dump_json(indent=indent)


class OptionalAttr(_Frozen):
    """An attribute some entities of a kind carry and others do not."""

    role: Role
    name: str
    meaning: str


class Schema(_Frozen):
    """One instance's names for the model's kinds, relations and capacity attribute.

    A kind set to ``None`` does not exist in this instance (only `rack` and `linecard` may be).
    """

    root: str = "EK_JUPITER"
    superblock: str = "EK_SUPERBLOCK"
    agg_block: str = "EK_AGG_BLOCK"
    spine_block: str = "EK_SPINEBLOCK"
    rack: str | None = None
    switch: str = "EK_PACKET_SWITCH"
    linecard: str | None = None
    port: str = "EK_PORT"
    control_domain: str = "EK_CONTROL_DOMAIN"
    contains: str = "RK_CONTAINS"
    controls: str = "RK_CONTROLS"
    capacity_attr: str = "physical_capacity_bps"
    capacity_unit: Unit = "bps"
    optional_attrs: tuple[OptionalAttr, ...] = ()

    @cached_property
    def roles(self) -> tuple[Role, ...]:
        """The roles this instance has, from the root down, control domains last."""
        return tuple(role for role in ROLES if getattr(self, role) is not None)

    @cached_property
    def role_map(self) -> dict[str, Role]:
        """Each kind name's role."""
        return {self.kind(role): role for role in self.roles}

    @cached_property
    def containment(self) -> dict[Role, tuple[Role, ...]]:
        """The roles each role may contain (roles that contain nothing are left out)."""
        switch_level: Role = "rack" if self.rack else "switch"
        port_level: Role = "linecard" if self.linecard else "port"
        table: dict[Role, tuple[Role, ...]] = {
            "root": ("superblock", "control_domain"),
            "superblock": BLOCK_ROLES,
            "agg_block": (switch_level,),
            "spine_block": (switch_level,),
            "rack": ("switch",),
            "switch": (port_level,),
            "linecard": ("port",),
        }
        return {role: table[role] for role in self.roles if role in table}

    @cached_property
    def contains_pairs(self) -> frozenset[tuple[str, str]]:
        """The (container kind, contained kind) pairs the hierarchy allows."""
        return frozenset(
            (self.kind(role), self.kind(child))
            for role, children in self.containment.items()
            for child in children
        )

    def kind(self, role: Role) -> str:
        """The kind name of ``role``; a `KeyError` if this instance has no such kind."""
        name = getattr(self, role)
        if name is None:
            raise KeyError(role)
        return str(name)

    def role_of(self, kind: str) -> Role | None:
        return self.role_map.get(kind)

    def child_roles(self, role: Role) -> tuple[Role, ...]:
        """The roles an entity of ``role`` may contain."""
        return self.containment.get(role, ())

    def to_bps(self, value: int | float) -> int:
        """A capacity attribute's value in bits per second."""
        return round(value * UNIT_BPS[self.capacity_unit])

    def from_bps(self, bps: int) -> int:
        """The capacity attribute's value for ``bps`` (always a whole number of the unit here)."""
        return bps // UNIT_BPS[self.capacity_unit]

    def names(self) -> dict[str, str]:
        """The fields the invariant statements are written with."""
        through = f' (through a "{self.linecard}")' if self.linecard else ""
        return {
            "root": self.root,
            "switch": self.switch,
            "port": self.port,
            "control_domain": self.control_domain,
            "contains": self.contains,
            "controls": self.controls,
            "capacity_attr": self.capacity_attr,
            "unit": f"{self.capacity_unit} ({UNIT_WORDS[self.capacity_unit]})",
            "through": through,
        }

    def describe(self) -> str:
        """The schema in plain English, for a brief."""
        lines = [
            'The model is one JSON object: {"entities": [...], "relations": [...]}. An entity is '
            '{"name": ..., "kind": ..., "attrs": {...}}; a relation is '
            '{"kind": ..., "source": <entity name>, "target": <entity name>}.',
            "",
            "Entity kinds:",
        ]
        lines += [f'- "{self.kind(role)}": {MEANINGS[role]}' for role in self.roles]
        lines += [
            "",
            f'Containment (relation kind "{self.contains}", the source contains the target):',
        ]
        for role in self.roles:
            children = self.child_roles(role)
            if children:
                kinds = " or ".join(f'"{self.kind(child)}"' for child in children)
                lines.append(f'- "{self.kind(role)}" contains {kinds}')
        lines += [
            "",
            f'Control (relation kind "{self.controls}", the source controls the target): '
            f'"{self.control_domain}" controls "{self.switch}".',
            "",
            "Attributes:",
            f'- "{self.port}" has "{self.capacity_attr}" (required): its capacity in '
            f"{self.capacity_unit} ({UNIT_WORDS[self.capacity_unit]}), a positive number",
        ]
        lines += [
            f'- "{self.kind(extra.role)}" may have "{extra.name}" (optional): {extra.meaning}'
            for extra in self.optional_attrs
        ]
        lines += [
            "- the capacity of any other entity is the sum of the capacities of all ports it "
            "contains, directly or through other entities",
            "",
            "A valid model keeps these invariants:",
        ]
        names = self.names()
        lines += [f"- {name}: {text.format(**names)}" for name, text in INVARIANTS]
        return "\n".join(lines)


PLAIN_SCHEMA = Schema()
"""The schema of level 1: the MALT names, capacities in bits per second."""
