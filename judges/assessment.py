"""An assessment: families, levels, seeds and trials, each a fresh episode.

The seed schedule comes from one assessment seed, so an assessment is replayed exactly by its
config; a config that names no seed gets one drawn at random, recorded with it. A config may
name one shard of the schedule (``shard_index`` of ``num_shards``): its slots are dealt in turn,
keep their indices in the whole schedule, and are run apart and merged afterwards. Episode ids
are random too: nothing a purple agent is shown can be traced back to the scenario or its seed.
Episodes run a few at a time (bounded by the memory their labs need); an episode that
fails for reasons not the agent's is retried once and, if it fails again, reported apart and
left out of every rate.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import Any

import anyio
from pydantic import BaseModel, Field, model_validator
from pydantic.fields import FieldInfo

from netdojo.judges.episode import new_episode_id
from netdojo.judges.provenance import provenance
from netdojo.judges.runner import run_episode_with_retry
from netdojo.reports.records import (
    RUNNER_NAMES,
    Assessment,
    Budgets,
    ConfigRecord,
    EpisodeRecord,
)
from netdojo.scenarios import registry
from netdojo.scenarios.generate import generate
from netdojo.scenarios.model import Scenario
from netdojo.tools.contract import Agent

LAB_MIB_PER_ROUTER = 24
LAB_MIB_PER_HOST = 4
LIMIT_WORDS = {"ge": "at least", "gt": "above", "le": "at most"}


class AssessmentConfig(ConfigRecord):
    """The config of an assessment to run: families default to every registered one, and
    families and levels must be known."""

    families: list[str] = Field(
        default_factory=lambda: list(registry.families()),
        description="the scenario families to draw instances from (default: every one)",
    )

    @model_validator(mode="before")
    @classmethod
    def _diagnosable(cls, data: Any) -> Any:
        """A diagnosis task that names no families draws from every reactive one."""
        if isinstance(data, dict) and data.get("task") == "diagnose" and not data.get("families"):
            reactive = [f.name for f in registry.families().values() if f.kind == "reactive"]
            return {**data, "families": reactive}
        return data

    @model_validator(mode="after")
    def _known(self) -> AssessmentConfig:
        known = registry.families()
        unknown = [f for f in self.families if f not in known]
        if unknown:
            raise ValueError(f"unknown families {unknown}; families are: {', '.join(known)}")
        if not self.families:
            raise ValueError("families must not be empty")
        bad = [level for level in self.levels if level not in registry.LEVELS]
        if bad or not self.levels:
            raise ValueError(f"levels must be among {list(registry.LEVELS)}, got {self.levels}")
        built = [f for f in self.families if known[f].kind != "reactive"]
        if self.task == "diagnose" and built:
            raise ValueError(f"a diagnosis task needs reactive families; these build: {built}")
        if self.episodes is not None and self.seeds is not None:
            raise ValueError("give either episodes (num_instances) or seeds, not both")
        return self

    @property
    def budgets(self) -> Budgets:
        return Budgets(max_tool_calls=self.max_tool_calls, time_budget_s=self.time_budget_s)


class Slot(BaseModel):
    """One scheduled episode."""

    index: int
    family: str
    level: int
    seed: int
    trial: int


def config_keys() -> str:
    """Each key an assessment config takes, with its limits and meaning, read from the model
    itself so that a description built from it cannot fall behind."""
    keys = [
        f"{name}{_limits(field)}: {field.description}"
        for name, field in AssessmentConfig.model_fields.items()
    ]
    keys += [f"{name}: another name for {key}" for name, key in RUNNER_NAMES.items()]
    return "; ".join(keys)


def _limits(field: FieldInfo) -> str:
    said = [
        f"{word} {getattr(bound, key)}"
        for bound in field.metadata
        for key, word in LIMIT_WORDS.items()
        if hasattr(bound, key)
    ]
    return f" ({', '.join(said)})" if said else ""


def full_schedule(config: AssessmentConfig) -> list[Slot]:
    """Every (family, level) pair in turn, with seeds given or drawn from the assessment seed:
    the slots of every shard."""
    pairs = [(f, level) for level in config.levels for f in config.families]
    instances: list[tuple[str, int, int]]
    if config.seeds is not None:
        instances = [(f, level, s) for f, level in pairs for s in config.seeds]
    else:
        rng = random.Random(f"assessment/{config.seed}")
        count = config.episodes or len(pairs)
        instances = [(*pairs[i % len(pairs)], rng.randrange(1, 2**31)) for i in range(count)]
    slots = [
        (family, level, seed, trial)
        for family, level, seed in instances
        for trial in range(config.trials)
    ]
    return [
        Slot(index=i, family=f, level=level, seed=s, trial=t)
        for i, (f, level, s, t) in enumerate(slots)
    ]


def schedule(config: AssessmentConfig) -> list[Slot]:
    """The slots this config runs: the whole schedule, or its shard's share of it."""
    return [slot for slot in full_schedule(config) if config.in_shard(slot.index)]


def memory_bound(requested: int, scenarios: Sequence[Scenario], available_mib: int) -> int:
    """How many episodes may run at once: the request, capped by memory for the largest lab."""
    largest = max(
        (
            sum(
                LAB_MIB_PER_ROUTER if d.role == "router" else LAB_MIB_PER_HOST
                for d in s.hidden.lab.devices
            )
            for s in scenarios
        ),
        default=1,
    )
    return max(1, min(requested, available_mib // (2 * largest)))


def available_memory_mib() -> int:
    with open("/proc/meminfo") as meminfo:
        for line in meminfo:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) // 1024
    return 1024


AgentFor = Callable[[Slot, Scenario], Agent]
OnRecord = Callable[[Slot, EpisodeRecord], Awaitable[None]]


async def run_assessment(
    config: AssessmentConfig,
    participant: str,
    agent_for: AgentFor,
    on_record: OnRecord,
    skip: Collection[int] = (),
) -> Assessment:
    """Run the schedule of ``config``, but for the slots in ``skip`` (run before: a resumed
    assessment); the result holds the episodes run here, and `summarized` (in
    `netdojo.reports.summary`) makes it a results document."""
    slots = schedule(config)
    scenarios = [generate(s.family, s.level, s.seed) for s in slots]
    todo = [(s, sc) for s, sc in zip(slots, scenarios, strict=True) if s.index not in skip]
    bound = memory_bound(config.concurrency, [sc for _, sc in todo], available_memory_mib())
    limit = anyio.Semaphore(bound)
    records: dict[int, EpisodeRecord] = {}

    async def one(slot: Slot, scenario: Scenario) -> None:
        async with limit:
            record = await run_episode_with_retry(
                scenario,
                agent_for(slot, scenario),
                config.budgets,
                new_episode_id(),
                slot.trial,
                config.calibration,
                config.task,
            )
        record.slot = slot.index
        records[slot.index] = record
        await on_record(slot, record)

    async with anyio.create_task_group() as group:
        for slot, scenario in todo:
            group.start_soon(one, slot, scenario)
    finished = [records[index] for index in sorted(records)]
    return Assessment(
        participant=participant,
        config=config,
        provenance=provenance(scenarios, config.budgets, config.seed),
        episodes=finished,
    )
