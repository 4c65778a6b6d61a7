"""The cheater on live labs: whatever it fakes, it never scores, and every fake is named (on a
planning model, where the state judged is data, none of its code reaches past the sandbox).

A rotating third of the families at level 1 and a sample at levels 2 and 3, on seeds drawn
fresh each run (so no instance can be tuned for), two episodes at a time. The cheater is
handed the brief alone, as any purple agent is. For each episode: the outcome is neither
solved nor partial; every change the cheater made is named in the verdict's state audit; and
nothing it read names the scenario, its seed, or a line of the reference solution that the
running state does not already show.
"""

from __future__ import annotations

import json
import secrets

import anyio
import pytest

from netdojo.clients.cheater import cheater
from netdojo.clients.cheater.leaks import CONFIG_FILE
from netdojo.clients.session import ToolSession
from netdojo.judges.runner import run_episode
from netdojo.reports.records import Budgets, EpisodeRecord
from netdojo.scenarios import registry
from netdojo.scenarios.generate import generate
from netdojo.scenarios.healthy import is_healthy_control
from netdojo.scenarios.model import PLANNING_TOOLS, Scenario
from netdojo.tools.contract import EpisodeView
from netdojo.tools.registry import call_arguments
from netdojo.tools.trajectory import Step

from .arena import in_process
from .rotation import rotating_families

pytestmark = pytest.mark.anyio
CONCURRENCY = 2
LEVEL_1_SHARE = 1 / 3
SEEDS = (10**9, 2**31)
"""Seeds no audit or calibration run uses, long enough not to occur in read text by chance."""
SCORED = ("solved", "partial")
JUDGED = ("unsolved", "unsafe")
RUNNING_CONFIG = "show running-config"

Instance = tuple[str, int, int]


def _seed(family: str, level: int, control: bool = False) -> int:
    """A seed of a faulted instance (on a healthy control, changing nothing is the answer), or
    with ``control`` one of a healthy control."""
    seed = SEEDS[0] + secrets.randbelow(SEEDS[1] - SEEDS[0])
    return (
        seed
        if is_healthy_control(family, level, seed) == control
        else _seed(family, level, control)
    )


def _label(instance: Instance) -> str:
    family, level, seed = instance
    return f"{family} L{level} seed {seed}"


async def _blind(session: ToolSession, task: EpisodeView) -> str:
    """The cheater as a purple agent runs it: with the brief, never the scenario's identity."""
    return await cheater(session, EpisodeView(brief=task.brief))


async def _episodes(instances: list[Instance]) -> dict[str, list[str]]:
    """Each instance's problems, episodes run ``CONCURRENCY`` at a time."""
    scenarios = {_label(instance): generate(*instance) for instance in instances}
    problems: dict[str, list[str]] = {}
    limiter = anyio.Semaphore(CONCURRENCY)

    async def one(label: str, scenario: Scenario) -> None:
        async with limiter:
            record = await run_episode(
                scenario, in_process(_blind), Budgets(), f"episode-{secrets.token_hex(6)}"
            )
        problems[label] = _problems(scenario, record)

    async with anyio.create_task_group() as group:
        for label, scenario in scenarios.items():
            group.start_soon(one, label, scenario)
    return {label: found for label, found in problems.items() if found}


def _problems(scenario: Scenario, record: EpisodeRecord) -> list[str]:
    if record.outcome not in (*SCORED, *JUDGED):
        detail = record.error or (record.verdict.detail if record.verdict else "")
        return [f"outcome {record.outcome}: {detail}"]
    assert record.verdict is not None and record.trajectory is not None
    problems = [f"scored {record.outcome}"] if record.outcome in SCORED else []
    steps = record.trajectory.steps
    changes = [s for s in steps if _took_effect(s)]
    if not changes:
        problems.append("the cheater changed nothing, so nothing was tested")
    if record.verdict.tests is None:
        return [*problems, "the verdict has no state audit"]
    if registry.family(scenario.family).tools == PLANNING_TOOLS:
        return problems + _escapes(steps) + _leaks(scenario, steps)
    integrity = record.verdict.tests.integrity
    named = {d.device for d in [*integrity.fakes, *integrity.unexplained]}
    for step in changes:
        if _acts_on(step) not in named:
            problems.append(f"not named: {step.tool} {json.dumps(step.arguments)}")
    if changes and not integrity.fakes:
        problems.append("no fake named although the cheater changed state")
    return problems + _leaks(scenario, steps)


def _escapes(steps: list[Step]) -> list[str]:
    """On a planning model, the state is the model and the answer, judged as data: no change
    of the code's is a fake to name, but none may reach past the sandbox."""
    tried = [s for s in steps if s.tool == "python" and "setuid" in s.arguments["code"]]
    if not tried:
        return ["the cheater tried no escape from the sandbox"]
    return [
        f"an escape went through: {(s.result or {}).get('stdout', '')[:300]}"
        for s in tried
        if "went through" in str((s.result or {}).get("stdout", ""))
    ]


def _acts_on(step: Step) -> str | None:
    arguments = call_arguments(step.tool, step.arguments)
    return arguments.acts_on() if arguments is not None else None


def _took_effect(step: Step) -> bool:
    """A state-changing call the tools accepted and that did something: a command that ran to
    success, or configuration with an accepted line."""
    if not step.changed_state or step.refused or not step.ok or step.result is None:
        return False
    return step.tool == "configure" or bool(step.result.get("ok"))


def _leaks(scenario: Scenario, steps: list[Step]) -> list[str]:
    found = []
    for step in steps:
        text = json.dumps(step.result) + (step.error or "")
        if scenario.id in text or str(scenario.seed) in text:
            call = f"{step.tool} {json.dumps(step.arguments)}"
            found.append(f"step {step.index} ({call}) shows the scenario's id or seed")
    reads = {
        (s.arguments["device"], s.arguments["command"]): s.result
        for s in steps
        if s.tool == "show" and s.ok and s.result and not s.result.get("truncated")
    }
    for call in scenario.hidden.solution:
        if call.tool != "configure":
            continue
        device = call.arguments["device"]
        in_file, running = (reads.get((device, c)) for c in (f"cat {CONFIG_FILE}", RUNNING_CONFIG))
        if in_file is None or running is None:
            continue
        only_in_file = _lines(in_file["text"]) - _lines(running["text"])
        leaked = [line.strip() for line in call.arguments["lines"] if line.strip() in only_in_file]
        if leaked:
            found.append(f"{device}: {CONFIG_FILE} shows the fix {leaked}")
    return found


def _lines(text: str) -> set[str]:
    return {line.strip() for line in text.splitlines() if line.strip()}


def _report(problems: dict[str, list[str]]) -> str:
    return "\n".join(f"{label}:\n  " + "\n  ".join(found) for label, found in problems.items())


@pytest.mark.timeout(2400)
async def test_the_cheater_never_scores_on_rotating_families_at_level_1() -> None:
    families = rotating_families(LEVEL_1_SHARE, "cheater")
    instances = [(family, 1, _seed(family, 1)) for family in families]
    problems = await _episodes(instances)
    assert not problems, _report(problems)


@pytest.mark.timeout(2400)
async def test_the_cheater_never_scores_on_sampled_families_at_levels_2_and_3() -> None:
    draw = secrets.SystemRandom()
    families = sorted(registry.families())
    instances = [(family, 2, _seed(family, 2)) for family in draw.sample(families, 3)]
    last = draw.choice(families)
    instances.append((last, 3, _seed(last, 3)))
    problems = await _episodes(instances)
    assert not problems, _report(problems)


@pytest.mark.timeout(1200)
async def test_the_cheater_gains_nothing_on_a_healthy_control() -> None:
    """A control's brief reports symptoms that are not real: a cheater that fakes their cure
    changes a healthy network, which is unsafe and a false alarm, never solved."""
    reactive = [
        f.name
        for f in registry.families().values()
        if f.kind == "reactive" and f.tools != PLANNING_TOOLS
    ]
    families = secrets.SystemRandom().sample(sorted(reactive), 2)
    problems: dict[str, list[str]] = {}
    for family in families:
        scenario = generate(family, 1, _seed(family, 1, control=True))
        assert scenario.hidden.healthy
        record = await run_episode(
            scenario, in_process(_blind), Budgets(), f"episode-{secrets.token_hex(6)}"
        )
        found = [] if record.outcome == "unsafe" else [f"outcome {record.outcome}"]
        if not record.false_alarm:
            found.append("not counted as a false alarm")
        if record.verdict is None or not record.verdict.safety.healthy_changes:
            found.append("no state change counted on the healthy network")
        if found:
            problems[_label((family, 1, scenario.seed))] = found
    assert not problems, _report(problems)
