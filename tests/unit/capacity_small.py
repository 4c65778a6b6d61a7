"""A small hand-made plan model in the plain schema, whose answers are worked out by hand.

J ── cd1 (controls a1-sw9, a1-sw10, a1-sw2, a2-sw1), cd2 (controls m1-sw1, s2-sw1)
└─ S1 ── A1: a1-sw9 (100G, 100G), a1-sw10 (200G), a1-sw2 (40G, 10G)    = 450G
│     ├─ A2: a2-sw1 (400G)                                               = 400G
│     └─ M1: m1-sw1 (100G, 100G)                                         = 200G
└─ S2 ── A3: s2-sw1 (25G)                                                =  25G
"""

from __future__ import annotations

from netdojo.scenarios.capacity import Entity, PlanModel, Relation
from netdojo.scenarios.capacity.schema import PLAIN_SCHEMA

G = 10**9
SWITCHES = {
    "A1": {"a1-sw9": (100, 100), "a1-sw10": (200,), "a1-sw2": (40, 10)},
    "A2": {"a2-sw1": (400,)},
    "M1": {"m1-sw1": (100, 100)},
    "A3": {"s2-sw1": (25,)},
}
BLOCKS = {"S1": ("A1", "A2", "M1"), "S2": ("A3",)}
CONTROL = {"cd1": ("a1-sw9", "a1-sw10", "a1-sw2", "a2-sw1"), "cd2": ("m1-sw1", "s2-sw1")}


def small_model() -> PlanModel:
    s = PLAIN_SCHEMA
    entities = [Entity(name="J", kind=s.root)]
    relations = []

    def add(name: str, kind: str, parent: str, attrs: dict[str, int] | None = None) -> None:
        entities.append(Entity(name=name, kind=kind, attrs=attrs or {}))
        relations.append(Relation(kind=s.contains, source=parent, target=name))

    for domain in CONTROL:
        add(domain, s.control_domain, "J")
    for superblock, blocks in BLOCKS.items():
        add(superblock, s.superblock, "J")
        for block in blocks:
            add(block, s.spine_block if block.startswith("M") else s.agg_block, superblock)
            for switch, speeds in SWITCHES[block].items():
                add(switch, s.switch, block)
                for index, speed in enumerate(speeds):
                    add(f"{switch}.p{index}", s.port, switch, {s.capacity_attr: speed * G})
    for domain, switches in CONTROL.items():
        relations += [Relation(kind=s.controls, source=domain, target=sw) for sw in switches]
    return PlanModel(entities=entities, relations=relations)
