"""Short versions of the load and soak benchmarks (`benchmarks/load.py`, `benchmarks/soak.py`):
the same code with a few episodes, asserting what must hold at any size. Speed and memory
figures are the benchmarks' to print, not the tests' to assert."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.anyio
BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
FD_SLACK = 8  # pooled connections to the engine and to the agents may open and close


def _benchmark(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # pydantic resolves the models' annotations through it
    spec.loader.exec_module(module)
    return module


async def test_concurrent_episodes_see_only_their_own_traffic_and_match_one_by_one() -> None:
    result = await _benchmark("load").load(episodes=3)
    captures = result.concurrent.captures + result.sequential.captures
    assert len(captures) == 6 and all(c.frames > 0 for c in captures), "traffic was captured"
    assert result.cross_talk == 0, [c.foreign_frames for c in captures]
    assert result.identical, result.differences
    assert {r.outcome for r in result.concurrent.episodes} == {"solved"}
    assert result.labs_left == 0


async def test_sequential_episodes_leave_nothing_behind() -> None:
    result = await _benchmark("soak").soak(episodes=5)
    controls = result.healthy_controls
    expected = {"unsolved": 5 - controls, "solved": controls}
    assert result.outcomes == {k: n for k, n in expected.items() if n}, "noop solves only controls"
    assert result.most_labs_at_once <= 1, "an episode's lab outlived it"
    assert result.after.labs_left == 0
    assert result.after.orphan_bridges <= result.before.orphan_bridges
    assert result.after.fds <= result.fds_warm + FD_SLACK
