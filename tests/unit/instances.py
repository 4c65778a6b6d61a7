"""Generated instances shared by the unit tests.

Many tests read the same instances. Each (family, level, seed) is generated once per test run
and kept as its JSON, a string the garbage collector has nothing to walk in; every call reads
a new `Scenario` back from it: the same instance, byte for byte, that the caller may change
without touching anyone else's. Tests of generation itself (that it is deterministic, what it
costs) call `generate`.
"""

from __future__ import annotations

from netdojo.scenarios.generate import generate
from netdojo.scenarios.model import Scenario

_KEPT: dict[tuple[str, int, int], str] = {}


def instance(family: str, level: int, seed: int) -> Scenario:
    """The instance ``generate(family, level, seed)`` makes, generated once per test run."""
    key = (family, level, seed)
    if key not in _KEPT:
        _KEPT[key] = generate(family, level, seed).model_dump_json()
    return Scenario.model_validate_json(_KEPT[key])
