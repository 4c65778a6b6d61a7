"""Nothing a purple agent is handed names the scenario: opaque episode ids, a drawn default
assessment seed recorded in the results, a handoff without the instance's identity."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import ValidationError

from netdojo.judges import assessment
from netdojo.judges.assessment import AssessmentConfig, Slot, run_assessment, schedule
from netdojo.judges.episode import new_episode_id, public_view
from netdojo.judges.journal import open_run
from netdojo.judges.runner import new_record
from netdojo.reports.records import SEED_BOUND, Budgets, EpisodeRecord, Provenance
from netdojo.scenarios.generate import generate
from netdojo.scenarios.model import Scenario
from netdojo.servers.green import AssessmentRequest, handoff
from netdojo.servers.practice import BriefView, EndResult, Started, _brief
from netdojo.tools.contract import AgentReport

pytestmark = pytest.mark.anyio
AGENT = {"agent": "http://127.0.0.1:1"}


async def _nobody(episode: Any) -> AgentReport:
    return AgentReport()


async def _assess(
    config: AssessmentConfig, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[tuple[Scenario, str]], int | None, list[EpisodeRecord]]:
    """Run ``config``'s schedule with episodes that deploy nothing: what each episode was given,
    the seed provenance recorded, and the records."""
    given: list[tuple[Scenario, str]] = []
    recorded: list[int | None] = []

    async def episode(
        scenario: Scenario,
        agent: Any,
        budgets: Budgets,
        episode_id: str,
        trial: int = 0,
        calibration: bool = False,
        task: str = "repair",
    ) -> EpisodeRecord:
        given.append((scenario, episode_id))
        return new_record(scenario, episode_id, trial).model_copy(update={"outcome": "unsolved"})

    def provenance(
        scenarios: Sequence[Scenario] = (),
        budgets: Budgets | None = None,
        assessment_seed: int | None = None,
    ) -> Provenance:
        recorded.append(assessment_seed)
        return Provenance(
            netdojo="0", kathara="0", mcp="0", python="3", host="test",
            assessment_seed=assessment_seed,
        )  # fmt: skip

    async def keep(slot: Slot, record: EpisodeRecord) -> None:
        return None

    monkeypatch.setattr(assessment, "run_episode_with_retry", episode)
    monkeypatch.setattr(assessment, "provenance", provenance)
    result = await run_assessment(config, "test", lambda slot, scenario: _nobody, keep)
    assert result.provenance.assessment_seed == result.config.seed
    return given, recorded[0], result.episodes


async def test_episode_ids_are_random_and_name_neither_the_scenario_nor_its_seed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = AssessmentConfig(families=["static-routing", "host-config"], episodes=4, trials=2)
    first, _, records = await _assess(config, monkeypatch)
    again, _, _ = await _assess(config, monkeypatch)
    ids = [episode_id for _, episode_id in first + again]
    assert len(set(ids)) == len(ids) == 16, "every episode, in every run, gets an id of its own"
    for scenario, episode_id in first:
        assert scenario.id not in episode_id and str(scenario.seed) not in episode_id
        assert scenario.family not in episode_id
    assert [r.episode_id for r in records] == [episode_id for _, episode_id in first]
    assert len({new_episode_id() for _ in range(1000)}) == 1000


def test_a_given_seed_reproduces_the_schedule_exactly() -> None:
    config = {"families": ["static-routing", "ospf-adjacency"], "levels": [1, 2], "episodes": 6}
    one = AssessmentConfig.model_validate({**config, "seed": 12345})
    two = AssessmentConfig.model_validate({**config, "seed": 12345})
    assert schedule(one) == schedule(two)
    assert schedule(one) != schedule(AssessmentConfig.model_validate({**config, "seed": 12346}))


async def test_a_config_without_a_seed_gets_one_drawn_and_recorded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    drawn = [AssessmentConfig().seed for _ in range(20)]
    assert all(0 <= seed < SEED_BOUND for seed in drawn) and len(set(drawn)) > 1
    assert 0 <= AssessmentConfig.model_validate({"seed": None}).seed < SEED_BOUND
    config = AssessmentConfig(families=["static-routing"], episodes=2)
    assert AssessmentConfig.model_validate_json(config.model_dump_json()) == config
    _, provenance_seed, _ = await _assess(config, monkeypatch)
    assert provenance_seed == config.seed


def test_a_resumed_run_keeps_the_seed_drawn_when_it_started(tmp_path: Path) -> None:
    config = {"families": ["static-routing"], "episodes": 3, "seed": None}
    journal, spec, _ = open_run("noop", config, tmp_path, None)
    journal.start(spec)
    _, resumed, _ = open_run(None, {}, tmp_path, tmp_path)
    assert resumed.config.seed == spec.config.seed
    assert schedule(resumed.config) == schedule(spec.config)


def test_skipping_slots_needs_the_seed_of_the_schedule_that_ran() -> None:
    drawn = AssessmentConfig(families=["static-routing"], episodes=3)
    with pytest.raises(ValidationError, match="give the config's seed"):
        AssessmentRequest(participants=AGENT, config=drawn, skip=[0])
    given = AssessmentConfig(families=["static-routing"], episodes=3, seed=drawn.seed)
    assert AssessmentRequest(participants=AGENT, config=given, skip=[0]).skip == [0]
    seeds = AssessmentConfig(families=["static-routing"], seeds=[1, 2])
    assert AssessmentRequest(participants=AGENT, config=seeds, skip=[1]).skip == [1]


def test_the_handoff_names_the_scenario_only_when_revealed() -> None:
    scenario = generate("bgp-policy", 2, 987654)
    extra = {"mode": "mcp", "mcp_url": "http://127.0.0.1:9/episodes/abc/mcp", "token": "t0k3n"}
    given = handoff(public_view(scenario, new_episode_id()), **extra)
    assert set(given) == {"episode_id", *extra}
    text = json.dumps(given)
    for identifying in (scenario.id, str(scenario.seed), scenario.family, "level", "scenario"):
        assert identifying not in text
    revealed = handoff(public_view(scenario, new_episode_id(), reveal=True), **extra)
    assert revealed["scenario"] == {"family": "bgp-policy", "level": 2, "seed": 987654}


def test_practice_names_the_scenario_only_as_the_user_chose_it() -> None:
    for model in (BriefView, Started, EndResult):
        assert "scenario_id" not in model.model_fields
    scenario = generate("static-routing", 1, 424242)
    episode: Any = SimpleNamespace(scenario=scenario)
    chosen = _brief(episode, seed_given=True)
    assert (chosen.family, chosen.level, chosen.seed) == ("static-routing", 1, 424242)
    drawn = _brief(episode, seed_given=False)
    assert drawn.seed is None and scenario.id not in drawn.model_dump_json()
    assert "424242" not in drawn.model_dump_json()
