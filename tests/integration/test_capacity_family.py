"""The capacity-planning family on live labs: instances of every level pass the live audit,
the agent's code stays inside its sandbox whatever it does, and a careless change is judged
unsafe with the broken invariants named.

Agents that must not score (noop, vandal, cheater) are run on every family by the arena,
calibration and cheater tests; here the vandal's episode pins what it gets.
"""

from __future__ import annotations

import secrets

import pytest

from netdojo.clients.agents import Policy, vandal
from netdojo.clients.catalogue import policy_factory
from netdojo.clients.session import ToolSession
from netdojo.judges.audit import audit_instance
from netdojo.judges.runner import run_episode
from netdojo.labs.runtime import start_lab, stop_lab
from netdojo.reports.records import Budgets
from netdojo.scenarios.capacity.lab import ANSWER_PATH, MODEL_PATH, PLANNER
from netdojo.scenarios.generate import generate
from netdojo.scenarios.hidden_tests import PlanAnswerTest
from netdojo.tools.contract import EpisodeView
from netdojo.tools.python_code import run_code

from .arena import in_process

pytestmark = pytest.mark.anyio
FAMILY = "capacity-planning"
CAP = 4096


@pytest.mark.parametrize("level", [1, 2, 3])
async def test_an_instance_of_each_level_passes_the_audit(level: int) -> None:
    seed = 1 + secrets.randbelow(10_000)
    record = await audit_instance(FAMILY, level, seed)
    failed = {name: stage.detail for name, stage in record.stages.items() if not stage.ok}
    assert record.ok, (seed, record.error, failed)
    assert list(record.stages) == ["deploy", "baseline", "unsolved", "solve", "fixed", "integrity"]


async def test_the_sandbox_keeps_the_code_within_its_bounds() -> None:
    lab = await start_lab(generate(FAMILY, 1, 1 + secrets.randbelow(10_000)).hidden.lab)
    try:
        model = await lab.read_file(PLANNER, MODEL_PATH)

        async def run(code: str, timeout: float = 10) -> tuple[bool, str, bool, bool]:
            done = await run_code(lab, code, timeout, CAP)
            return done.ok, done.stdout + done.stderr, done.timed_out, done.truncated

        ok, out, _, _ = await run("raise ValueError('on purpose')")
        assert not ok and "ValueError: on purpose" in out
        ok, out, timed_out, _ = await run("while True: pass", timeout=3)
        assert not ok and timed_out
        ok, out, _, _ = await run("x = bytearray(2 * 1024**3)")
        assert not ok and "MemoryError" in out
        ok, out, _, truncated = await run("print('x' * 100_000)")
        assert truncated and len(out) <= CAP + 200
        escapes = (
            "open('/etc/hostname', 'w').write('mine')",
            "import os; os.setuid(0)",
            "open('/usr/lib/python3/dist-packages/sitecustomize.py', 'w').write('')",
        )
        for code in escapes:
            ok, out, _, _ = await run(code)
            assert not ok and "PermissionError" in out, code
        ok, out, _, _ = await run("import os, socket; print(socket.if_nameindex(), os.getuid())")
        assert ok and out.split("]")[0] == "[(1, 'lo')" and out.split()[-1] == "10001", out
        ok, out, _, _ = await run("import json; print(len(json.load(open('model.json'))))")
        assert ok and out.strip() == "2", out
        assert await lab.read_file(PLANNER, MODEL_PATH) == model
    finally:
        await stop_lab(lab)


async def test_a_careless_delete_is_unsafe_with_the_broken_invariants_named() -> None:
    scenario = generate(FAMILY, 1, 1 + secrets.randbelow(10_000))
    record = await run_episode(
        scenario, in_process(vandal), Budgets(), f"episode-{secrets.token_hex(6)}"
    )
    assert record.outcome == "unsafe", (record.error, record.verdict)
    assert record.verdict is not None and record.verdict.tests is not None
    guards = [r for r in record.verdict.tests.guards if not r.passed]
    assert guards and "broken invariants" in guards[0].evidence, guards


def _answering(answer: object) -> Policy:
    """Carries the reference program out, drops the answer file it wrote, and submits
    ``answer`` (the expected one when None)."""

    async def agent(session: ToolSession, task: EpisodeView) -> str:
        assert task.scenario is not None
        scenario = generate(task.scenario.family, task.scenario.level, task.scenario.seed)
        for call in scenario.hidden.solution:
            await session.call(call.tool, call.arguments)
        await session.call("python", {"code": f"import os; os.remove({ANSWER_PATH!r})"})
        (target,) = [t for t in scenario.hidden.targets if isinstance(t, PlanAnswerTest)]
        given = target.params.answers if answer is None else answer
        await session.call("submit", {"summary": "the plan is carried out", "answer": given})
        return "submitted an answer"

    return agent


@pytest.mark.parametrize(("answer", "right"), [(None, True), ([["nothing"]], False)])
async def test_the_answer_given_to_submit_is_the_one_judged(answer: object, right: bool) -> None:
    """The reference program's changes are made either way: a wrong answer leaves a task that
    changes the model partly solved, one that only asks unsolved."""
    scenario = generate(FAMILY, 1, 1 + secrets.randbelow(10_000))
    record = await run_episode(
        scenario,
        in_process(_answering(answer)),
        Budgets(),
        f"episode-{secrets.token_hex(6)}",
        calibration=True,
    )
    assert record.verdict is not None and record.verdict.tests is not None, record.error
    judged = {r.id: r.passed for r in record.verdict.tests.targets}
    assert judged["target:answer"] is right, record.verdict
    assert (record.outcome == "solved") is right, record.verdict
    assert record.outcome in ("solved", "partial", "unsolved"), record.verdict


async def test_the_heuristic_surveys_the_model_and_leaves_it_safe_and_unsolved() -> None:
    scenario = generate(FAMILY, 1, 1 + secrets.randbelow(10_000))
    heuristic = policy_factory("heuristic")()
    record = await run_episode(
        scenario, in_process(heuristic), Budgets(), f"episode-{secrets.token_hex(6)}"
    )
    assert record.outcome == "unsolved", (record.error, record.verdict)
    assert record.trajectory is not None and "entities" in record.trajectory.submitted
