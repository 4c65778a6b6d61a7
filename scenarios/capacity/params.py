"""The parameters of each query kind, told apart by ``kind``.

Capacities are in bits per second whatever the schema's unit; kinds of entities are roles
(`schema.Role`), which the instance's schema names.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from netdojo.scenarios.capacity.schema import Role, Unit

QueryKind = Literal["list", "count", "rank", "add", "remove", "set_speed", "move", "what_if"]
QUERY_KINDS: tuple[QueryKind, ...] = (
    "list",
    "count",
    "rank",
    "add",
    "remove",
    "set_speed",
    "move",
    "what_if",
)
Answer = int | list[str] | None
"""A step's answer: a count or a capacity, names, or nothing for a pure change."""


class _Params(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ListQuery(_Params):
    """The entities of a role that ``parent`` contains directly (any order)."""

    kind: Literal["list"] = "list"
    parent: str
    child_role: Role


class CountQuery(_Params):
    """How many entities of a role ``scope`` contains, directly or not."""

    kind: Literal["count"] = "count"
    scope: str
    of_role: Role


class RankQuery(_Params):
    """The entities of a role ``parent`` contains directly, by aggregate port capacity,
    largest first, equal capacities by name (ascending)."""

    kind: Literal["rank"] = "rank"
    parent: str
    child_role: Role


class AddQuery(_Params):
    """A new entity in ``parent``: a port, or a switch with its dependants (its ports, in a
    linecard where the schema has them, and the control domain that controls it)."""

    kind: Literal["add"] = "add"
    what: Literal["switch", "port"]
    name: str
    parent: str
    capacity_bps: int
    """The capacity of the new port, or of each port of the new switch."""
    ports: tuple[str, ...] = ()
    linecard: str | None = None
    controller: str | None = None
    new_controller: bool = False
    """Whether ``controller`` is a new control domain (in the root)."""


class RemoveQuery(_Params):
    """``target`` goes, with everything it contains and every relation touching them."""

    kind: Literal["remove"] = "remove"
    target: str


class SetSpeedQuery(_Params):
    """Every port of ``switch`` gets the capacity ``capacity_bps``."""

    kind: Literal["set_speed"] = "set_speed"
    switch: str
    capacity_bps: int


class MoveQuery(_Params):
    """``switch`` moves (with its ports) from its container to ``to``."""

    kind: Literal["move"] = "move"
    switch: str
    to: str


class WhatIfQuery(_Params):
    """A hypothesis; the model does not change.

    ``drain``: with block ``target``'s capacity gone, which superblocks have less than
    ``threshold_bps`` (names, any order). ``fail``: with switch ``target`` down, how much
    capacity ``scope`` keeps, in ``unit``.
    """

    kind: Literal["what_if"] = "what_if"
    scenario: Literal["drain", "fail"]
    target: str
    threshold_bps: int | None = None
    scope: str | None = None
    unit: Unit = "Gbps"


Query = Annotated[
    ListQuery
    | CountQuery
    | RankQuery
    | AddQuery
    | RemoveQuery
    | SetSpeedQuery
    | MoveQuery
    | WhatIfQuery,
    Field(discriminator="kind"),
]
