"""Every registered family, checked live on every run.

Each family gets a level-1 instance with a seed drawn afresh (printed; NETDOJO_LIVE_SEED
replays the draw), a few families a level-2 or level-3 one, and every instance that ever
failed a live check comes back (`regressions.REGRESSIONS`: each failed staging or its audit,
so it is audited again). A drawn instance runs twice, on two labs:

* the audit: staged as for an episode, with its fault active and every symptom real; then
  read as an agent first finds it, everything the read allowlist admits (`leak_reads`), where
  nothing may name the instance or show its answer; then its reference solution passes every
  target, guard and adherence test, stage by stage, with nothing the state audit objects to;
* the cheater, handed the brief alone, as any purple agent is: whatever it fakes, it never
  scores, and every change it makes is named (`cheating`).

Instances run two at a time; each family's verdict is a test of its own.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import anyio
import pytest

from netdojo.judges.audit import AuditRecord, audit_instance
from netdojo.labs.runtime import LiveLab
from netdojo.scenarios import registry
from netdojo.scenarios.generate import generate
from netdojo.scenarios.model import Scenario

from .cheating import cheat, problems
from .draws import REPLAY, instance_seed, run_draw
from .leak_reads import leaks
from .regressions import REGRESSIONS

CONCURRENCY = 2
HIGHER_LEVELS = {2: 2, 3: 1}
"""Families drawn per higher level: their labs grow (6-12 routers at level 2, 15-30 at 3)."""
FAMILIES = sorted(registry.families())

Instance = tuple[str, int, int]

REACTIVE = ["deploy", "baseline", "inject", "settle", "fault_active", "solve", "fixed", "integrity"]
CASCADE = [*REACTIVE[:5], "unmask", "unmasked", *REACTIVE[5:]]
CONSTRUCTIVE = ["deploy", "baseline", "unsolved", "solve", "fixed", "integrity"]


def _drawn(families: list[str]) -> list[Instance]:
    """The instances of ``families``: the draw is made over every family, so a run that
    selects some (``pytest -k``) checks the same instances of those as the whole run would."""
    draw = run_draw("every family")
    drawn = [(family, 1, instance_seed(draw, family, 1)) for family in FAMILIES]
    for level, count in HIGHER_LEVELS.items():
        drawn += [(f, level, instance_seed(draw, f, level)) for f in draw.sample(FAMILIES, count)]
    return [instance for instance in drawn if instance[0] in families]


def _regressions(families: list[str]) -> list[Instance]:
    return [(family, level, seed) for family, level, seed, _ in REGRESSIONS if family in families]


def _label(instance: Instance) -> str:
    family, level, seed = instance
    return f"{family} L{level} seed {seed}"


def _stages_wrong(record: AuditRecord) -> list[str]:
    if registry.family(record.family).kind == "constructive":
        expected = CONSTRUCTIVE
    else:
        expected = CASCADE if record.cascade else REACTIVE
    stages = list(record.stages)
    return [] if stages == expected else [f"stages {stages}, expected {expected}"]


async def _audit(instance: Instance) -> list[str]:
    shown: list[str] = []

    async def read(lab: LiveLab, scenario: Scenario) -> None:
        shown.extend(await leaks(lab, scenario))

    record = await audit_instance(*instance, examine=read)
    if not record.ok:
        failed = {name: stage.detail for name, stage in record.stages.items() if not stage.ok}
        return [f"audit failed: {record.error or failed}"]
    return shown + _stages_wrong(record)


async def _check(instance: Instance, cheated: bool) -> list[str]:
    started = time.monotonic()
    found = [f"audit: {problem}" for problem in await _audit(instance)]
    audited = time.monotonic()
    if cheated:
        scenario = generate(*instance)
        found += [f"cheater: {problem}" for problem in problems(scenario, await cheat(scenario))]
    verdict = "ok" if not found else f"{len(found)} problems"
    print(
        f"{_label(instance)}: audit {audited - started:.0f}s, "
        f"cheater {time.monotonic() - audited:.0f}s, {verdict}",
        flush=True,
    )
    return found


async def _check_all(drawn: list[Instance], again: list[Instance]) -> dict[Instance, list[str]]:
    found: dict[Instance, list[str]] = {}
    limiter = anyio.Semaphore(CONCURRENCY)

    async def one(instance: Instance, cheated: bool) -> None:
        async with limiter:
            found[instance] = await _check(instance, cheated)

    async with anyio.create_task_group() as group:
        for instance in drawn:
            group.start_soon(one, instance, True)
        for instance in again:
            group.start_soon(one, instance, False)
    return found


@pytest.fixture(scope="module")
def checked(request: pytest.FixtureRequest) -> Iterator[dict[Instance, list[str]]]:
    """The problems of every instance of the selected families, all checked at once."""
    selected = [
        item.callspec.params["family"]
        for item in request.session.items
        if isinstance(item, pytest.Function) and item.originalname == VERDICT
    ]
    drawn, again = _drawn(selected), _regressions(selected)
    found = anyio.run(_check_all, drawn, again)
    assert sorted(found) == sorted({*drawn, *again})
    yield found


VERDICT = "test_the_family_audits_leaks_nothing_and_the_cheater_never_scores"


@pytest.mark.timeout(3600)
@pytest.mark.parametrize("family", FAMILIES)
def test_the_family_audits_leaks_nothing_and_the_cheater_never_scores(
    family: str, checked: dict[Instance, list[str]]
) -> None:
    mine = {_label(i): found for i, found in checked.items() if i[0] == family}
    assert any(level == 1 for f, level, _ in checked if f == family)
    assert not any(mine.values()), "\n".join(
        [f"{label}:\n  " + "\n  ".join(found) for label, found in mine.items() if found] + [REPLAY]
    )
