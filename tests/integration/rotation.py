"""Family-wide live checks run on a rotating share of the families: a new draw each run, so
every family comes round over a few runs while one run stays short. The draw is printed with
its seed; set NETDOJO_SAMPLE_SEED to replay a run's draw, or NETDOJO_SAMPLE_FAMILIES (names,
comma-separated) to run the checks on those families instead."""

from __future__ import annotations

import os
import random
import time

from netdojo.scenarios import registry

SEED_VARIABLE = "NETDOJO_SAMPLE_SEED"
FAMILIES_VARIABLE = "NETDOJO_SAMPLE_FAMILIES"


def rotating_families(share: float, check: str) -> list[str]:
    """A share (at least one) of the registered families, sorted, drawn for ``check``."""
    if chosen := os.environ.get(FAMILIES_VARIABLE):
        names = sorted(name.strip() for name in chosen.split(",") if name.strip())
        unknown = set(names) - set(registry.families())
        assert not unknown, f"{FAMILIES_VARIABLE} names no family {sorted(unknown)}"
        return names
    seed = int(os.environ.get(SEED_VARIABLE, time.time_ns() % 2**31))
    names = sorted(registry.families())
    count = max(1, round(share * len(names)))
    drawn = sorted(random.Random(f"{seed}:{check}").sample(names, count))
    print(f"{SEED_VARIABLE}={seed} {check}: {', '.join(drawn)}")
    return drawn
