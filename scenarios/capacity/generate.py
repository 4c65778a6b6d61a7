"""Seeded data-centre models: a schema, a shape drawn per level, names drawn per seed.

Level 1 has a few hundred entities in the plain schema; level 2 a few thousand, level 3 tens
of thousands, both in drawn schema variations. Port speeds are real ones (10/25/40/100/400
Gbps), written in the schema's unit; control domains each control the switches of some blocks.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass

from netdojo.scenarios.capacity.bulk import bulk
from netdojo.scenarios.capacity.invariants import broken_invariants
from netdojo.scenarios.capacity.naming import Naming, draw_naming
from netdojo.scenarios.capacity.schema import (
    PLAIN_SCHEMA,
    Entity,
    OptionalAttr,
    PlanModel,
    Relation,
    Role,
    Scalar,
    Schema,
    Unit,
)

GBPS = 10**9
LEVELS = (1, 2, 3)

WORDS: dict[Role, tuple[str, ...]] = {
    "root": ("JUPITER", "FABRIC", "DATACENTER"),
    "superblock": ("SUPERBLOCK", "SUPER_BLOCK"),
    "agg_block": ("AGG_BLOCK", "AGGREGATION_BLOCK", "AGGBLOCK"),
    "spine_block": ("SPINEBLOCK", "SPINE_BLOCK"),
    "rack": ("RACK", "CHASSIS"),
    "switch": ("PACKET_SWITCH", "SWITCH", "PKT_SWITCH"),
    "linecard": ("LINECARD", "LINE_CARD"),
    "port": ("PORT", "INTERFACE"),
    "control_domain": ("CONTROL_DOMAIN", "CTRL_DOMAIN"),
}
RELATIONS = {
    "ek": ("RK_CONTAINS", "RK_CONTROLS"),
    "upper": ("CONTAINS", "CONTROLS"),
    "lower": ("contains", "controls"),
    "camel": ("Contains", "Controls"),
}
CAPACITY_ATTRS: tuple[tuple[str, Unit], ...] = (
    ("physical_capacity_bps", "bps"),
    ("capacity_bps", "bps"),
    ("capacity_gbps", "Gbps"),
    ("speed_gbps", "Gbps"),
    ("speed_mbps", "Mbps"),
    ("line_rate_mbps", "Mbps"),
)
EXTRAS = (
    OptionalAttr(role="switch", name="switch_loc", meaning="where the switch is installed"),
    OptionalAttr(role="switch", name="vendor", meaning="the switch's vendor"),
    OptionalAttr(role="port", name="media", meaning="the port's physical medium"),
    OptionalAttr(role="agg_block", name="generation", meaning="the hardware generation"),
)
EXTRA_VALUES: dict[str, tuple[Scalar, ...]] = {
    "vendor": ("vendor-a", "vendor-b", "vendor-c"),
    "media": ("fiber", "copper", "dac"),
    "generation": (1, 2, 3, 4),
}


@dataclass(frozen=True)
class Size:
    superblocks: tuple[int, int]
    agg_blocks: tuple[int, int]
    spine_blocks: tuple[int, int]
    switches: tuple[int, int]
    ports: tuple[int, ...]
    racks: tuple[int, int]
    linecards: tuple[int, int]
    control_domains: tuple[int, int]
    speeds: tuple[int, ...]
    entities: tuple[int, int]
    variations: tuple[float, float]
    """The chances of a rack kind and of a linecard kind."""


SIZES = {
    1: Size((2, 3), (1, 3), (0, 1), (2, 4), (6, 8, 12, 16), (2, 2), (2, 2), (1, 3),
            (10, 25, 40, 100), (150, 450), (0.0, 0.0)),
    2: Size((3, 5), (2, 4), (1, 2), (3, 6), (12, 16, 24, 32), (2, 3), (2, 3), (2, 4),
            (10, 25, 40, 100, 400), (1500, 5000), (0.4, 0.3)),
    3: Size((4, 8), (3, 6), (1, 3), (6, 12), (32, 48, 64), (2, 4), (2, 4), (3, 8),
            (25, 40, 100, 400), (15000, 30000), (0.5, 0.5)),
}  # fmt: skip


@dataclass(frozen=True)
class SwitchShape:
    rack: int
    linecards: int
    speeds: tuple[int, ...]
    """Each port's speed in Gbps."""


@dataclass(frozen=True)
class BlockShape:
    role: Role
    racks: int
    switches: tuple[SwitchShape, ...]


@dataclass(frozen=True)
class Generated:
    schema: Schema
    model: PlanModel
    naming: Naming


def _styled(word: str, style: str) -> str:
    if style == "ek":
        return f"EK_{word}"
    if style == "lower":
        return word.lower()
    if style == "camel":
        return "".join(part.capitalize() for part in word.split("_"))
    return word


def draw_schema(level: int, rng: random.Random) -> Schema:
    """The plain schema at level 1; a drawn variation above it."""
    if level == 1:
        return PLAIN_SCHEMA
    size = SIZES[level]
    style = rng.choice(("ek", "upper", "lower", "camel"))
    kinds = {role: _styled(rng.choice(words), style) for role, words in WORDS.items()}
    attr, unit = rng.choice(CAPACITY_ATTRS)
    if style == "camel":
        head, *rest = attr.split("_")
        attr = head + "".join(part.capitalize() for part in rest)
    extras = tuple(sorted(rng.sample(EXTRAS, rng.randint(0, 2)), key=EXTRAS.index))
    return Schema(
        root=kinds["root"],
        superblock=kinds["superblock"],
        agg_block=kinds["agg_block"],
        spine_block=kinds["spine_block"],
        rack=kinds["rack"] if rng.random() < size.variations[0] else None,
        switch=kinds["switch"],
        linecard=kinds["linecard"] if rng.random() < size.variations[1] else None,
        port=kinds["port"],
        control_domain=kinds["control_domain"],
        contains=RELATIONS[style][0],
        controls=RELATIONS[style][1],
        capacity_attr=attr,
        capacity_unit=unit,
        optional_attrs=extras,
    )


def _draw_block(size: Size, role: Role, rng: random.Random) -> BlockShape:
    count = rng.randint(*size.switches)
    racks = min(rng.randint(*size.racks), count)
    block_speed = rng.choice(size.speeds)
    switches = []
    for index in range(count):
        ports = rng.choice(size.ports)
        main = block_speed if rng.random() < 0.7 else rng.choice(size.speeds)
        speeds = tuple(
            main if rng.random() < 0.8 else rng.choice(size.speeds) for _ in range(ports)
        )
        cards = min(rng.randint(*size.linecards), ports)
        switches.append(SwitchShape(index % racks, cards, speeds))
    return BlockShape(role, racks, tuple(switches))


def _draw_shape(size: Size, schema: Schema, rng: random.Random) -> list[list[BlockShape]]:
    """Superblocks of blocks, redrawn until the model's size is in the level's range."""
    while True:
        shape = []
        for _ in range(rng.randint(*size.superblocks)):
            agg = rng.randint(*size.agg_blocks)
            spine = rng.randint(*size.spine_blocks)
            roles: list[Role] = ["agg_block"] * agg + ["spine_block"] * spine
            shape.append([_draw_block(size, role, rng) for role in roles])
        blocks = [block for superblock in shape for block in superblock]
        switches = [switch for block in blocks for switch in block.switches]
        count = 1 + size.control_domains[1] + len(shape) + len(blocks)
        count += sum(len(switch.speeds) for switch in switches) + len(switches)
        count += sum(block.racks for block in blocks) if schema.rack else 0
        count += sum(switch.linecards for switch in switches) if schema.linecard else 0
        if size.entities[0] <= count <= size.entities[1]:
            return shape


class _Builder:
    def __init__(self, schema: Schema, naming: Naming, rng: random.Random) -> None:
        self.schema, self.naming, self.rng = schema, naming, rng
        self.entities: list[Entity] = []
        self.relations: list[Relation] = []
        self.counters: dict[tuple[Role, str], int] = {}
        self.kinds = {role: schema.kind(role) for role in schema.roles}
        self.extras: dict[Role, list[str]] = defaultdict(list)
        for extra in schema.optional_attrs:
            self.extras[extra.role].append(extra.name)

    def add(self, role: Role, parent: str | None, attrs: dict[str, Scalar] | None = None) -> str:
        if parent is None:
            name = self.naming.root
        else:
            flat = not self.naming.hierarchical and role not in ("port", "linecard")
            key = (role, "" if flat else parent)
            number = self.counters.get(key, self.naming.start)
            self.counters[key] = number + 1
            name = self.naming.name(role, parent, number)
            self.relations.append(Relation(kind=self.schema.contains, source=parent, target=name))
        extras = self.extras.get(role)
        if extras:
            attrs = dict(attrs or {})
            for extra in extras:
                if self.rng.random() < 0.7:
                    attrs[extra] = self._extra(extra)
        self.entities.append(Entity(name=name, kind=self.kinds[role], attrs=attrs or {}))
        return name

    def _extra(self, name: str) -> Scalar:
        if name == "switch_loc":
            return (
                f"{self.rng.choice('ABCDEFGH')}{self.rng.randint(1, 40)}-u{self.rng.randint(1, 42)}"
            )
        return self.rng.choice(EXTRA_VALUES[name])

    def switch(self, parent: str, shape: SwitchShape) -> str:
        name = self.add("switch", parent)
        holders = [name]
        if self.schema.linecard:
            holders = [self.add("linecard", name) for _ in range(shape.linecards)]
        for index, speed in enumerate(shape.speeds):
            value = self.schema.from_bps(speed * GBPS)
            self.add("port", holders[index % len(holders)], {self.schema.capacity_attr: value})
        return name

    def controls(self, domain: str, switch: str) -> None:
        self.relations.append(Relation(kind=self.schema.controls, source=domain, target=switch))


def generate_plan(level: int, rng: random.Random) -> Generated:
    """The schema, the model and the names' style of one instance."""
    with bulk():
        return _generate(level, rng)


def _generate(level: int, rng: random.Random) -> Generated:
    size = SIZES[level]
    schema = draw_schema(level, rng)
    naming = draw_naming(rng)
    shape = _draw_shape(size, schema, rng)
    build = _Builder(schema, naming, rng)
    root = build.add("root", None)
    domains = [build.add("control_domain", root) for _ in range(rng.randint(*size.control_domains))]
    for superblock_shape in shape:
        superblock = build.add("superblock", root)
        for block_shape in superblock_shape:
            block = build.add(block_shape.role, superblock)
            domain = rng.choice(domains)
            racks = [
                build.add("rack", block) for _ in range(block_shape.racks if schema.rack else 0)
            ]
            for switch_shape in block_shape.switches:
                holder = racks[switch_shape.rack] if racks else block
                switch = build.switch(holder, switch_shape)
                build.controls(domain if rng.random() < 0.9 else rng.choice(domains), switch)
    model = PlanModel(entities=build.entities, relations=build.relations)
    problems = broken_invariants(model, schema)
    assert not problems, problems
    return Generated(schema, model, naming)


def generate_model(level: int, rng: random.Random) -> tuple[Schema, PlanModel]:
    """A valid model of ``level`` (1, 2 or 3) and the schema it is written in."""
    generated = generate_plan(level, rng)
    return generated.schema, generated.model
