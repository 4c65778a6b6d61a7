"""Seeds drawn afresh on every run for the family-wide live checks, so no instance can be tuned
for: the run's seed is printed, and NETDOJO_LIVE_SEED replays its draw."""

from __future__ import annotations

import os
import random
import time

from netdojo.scenarios.healthy import is_healthy_control

SEED_VARIABLE = "NETDOJO_LIVE_SEED"
SEEDS = (10**9, 2**31)
"""Instance seeds no audit or calibration run uses, long enough not to occur in read text by
chance."""


RUN_SEED = int(os.environ.get(SEED_VARIABLE, time.time_ns() % 2**31))
"""This run's seed: from the clock, or NETDOJO_LIVE_SEED to replay a run."""
REPLAY = f"{SEED_VARIABLE}={RUN_SEED} replays this run's draws"


def run_draw(check: str) -> random.Random:
    """This run's draw for ``check``."""
    print(f"{SEED_VARIABLE}={RUN_SEED} ({check})")
    return random.Random(f"{RUN_SEED}:{check}")


def instance_seed(draw: random.Random, family: str, level: int, control: bool = False) -> int:
    """A seed of a faulted instance of ``family`` (on a healthy control, changing nothing is
    the answer), or with ``control`` one of a healthy control."""
    while True:
        seed = draw.randrange(*SEEDS)
        if is_healthy_control(family, level, seed) == control:
            return seed
