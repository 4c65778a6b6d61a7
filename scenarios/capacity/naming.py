"""Entity names drawn per seed: prefixes, separators, numbering, hierarchical or flat.

A hierarchical name extends its container's (``ju1.a2.s3``); a flat one numbers its kind
across the model (``sw-0412``). Ports and linecards always extend their switch's name, as real
interface names do. New entities a query adds are named the same way.
"""

from __future__ import annotations

import random
from collections.abc import Container
from dataclasses import dataclass

from netdojo.scenarios.capacity.schema import Role

PREFIXES: dict[Role, tuple[str, ...]] = {
    "superblock": ("sb", "pod", "super", "spb"),
    "agg_block": ("a", "agg", "ab", "ag"),
    "spine_block": ("m", "spine", "sp", "sn"),
    "rack": ("r", "rack", "ch", "k"),
    "switch": ("sw", "ps", "c", "x", "t"),
    "linecard": ("lc", "card", "slot"),
    "port": ("p", "port", "eth", "xe", "et"),
    "control_domain": ("cd", "ctl", "dom", "ctrl"),
}
ROOTS = ("ju", "jupiter", "dc", "fabric", "site", "jup", "cell")
SEPARATORS = (".", "-", "_", "/")
PORT_SEPARATORS = (".", "-", "/", ":")


@dataclass(frozen=True)
class Naming:
    root: str
    sep: str
    port_sep: str
    hierarchical: bool
    pad: int
    start: int
    prefixes: dict[Role, str]

    def local(self, role: Role, number: int) -> str:
        return f"{self.prefixes[role]}{str(number).zfill(self.pad)}"

    def name(self, role: Role, parent: str, number: int) -> str:
        """The name of the ``number``-th entity of ``role`` in ``parent`` (hierarchical), or of
        its kind in the model (flat)."""
        if role in ("port", "linecard"):
            return f"{parent}{self.port_sep}{self.local(role, number)}"
        if role == "control_domain" and self.hierarchical:
            return f"{self.root}{self.sep}{self.local(role, number)}"
        if self.hierarchical:
            return f"{parent}{self.sep}{self.local(role, number)}"
        return self.local(role, number)

    def fresh(self, role: Role, parent: str, taken: Container[str]) -> str:
        """The first free name of ``role`` in ``parent``."""
        number = self.start
        while (name := self.name(role, parent, number)) in taken:
            number += 1
        return name


def draw_naming(rng: random.Random) -> Naming:
    sep = rng.choice(SEPARATORS)
    port_sep = rng.choice([s for s in PORT_SEPARATORS if s != sep] + [sep])
    prefixes: dict[Role, str] = {role: rng.choice(pool) for role, pool in PREFIXES.items()}
    return Naming(
        root=f"{rng.choice(ROOTS)}{rng.randint(1, 9)}",
        sep=sep,
        port_sep=port_sep,
        hierarchical=rng.random() < 0.6,
        pad=rng.choice((0, 0, 2, 3)),
        start=rng.choice((0, 1, 1)),
        prefixes=prefixes,
    )
