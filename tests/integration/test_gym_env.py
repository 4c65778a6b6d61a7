"""The Gymnasium adapter on live labs: Gymnasium's checker, and one seed, one instance.

The checker resets the environment many times; a planning model's lab deploys in well under a
second, so the family whose labs are quickest carries it (the adapter knows no family)."""

from __future__ import annotations

import gymnasium
from gymnasium.utils.env_checker import check_env

from netdojo.servers.gym_env import ENV_ID


def test_gymnasiums_checker_passes_and_a_seed_gives_the_same_instance() -> None:
    env = gymnasium.make(ENV_ID, family="capacity-planning", level=1)
    try:
        first, _ = env.reset(seed=7)
        again, _ = env.reset(seed=7)
        assert again == first
        check_env(env.unwrapped, skip_render_check=True)
    finally:
        env.close()
