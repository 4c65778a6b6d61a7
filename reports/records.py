"""The result records: what an episode and an assessment leave behind, as data.

These models are the results schema (docs/results-schema.md). The judge fills them in
(`netdojo.judges`); reports, exports and leaderboards read them. They hold no logic beyond their
own checks and what a config's fields mean, and import no runtime, so reading results needs
neither a lab nor a Docker engine.
"""

from __future__ import annotations

import secrets
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from netdojo.tools.trajectory import Trajectory

SCHEMA_VERSION = "1.2"
SEED_BOUND = 2**31
MAX_SHARDS = 20
SHARD_KEYS = ("shard_index", "num_shards")
"""The config keys that differ between the shards of one assessment."""
RUNNER_NAMES = {"num_instances": "episodes"}
"""Config keys a competition runner sends, and the key each is another name for."""
SHARD_RANGES = {"shard_index": (0, MAX_SHARDS - 1), "num_shards": (1, MAX_SHARDS)}

Outcome = Literal[
    "solved",
    "partial",
    "unsolved",
    "unsafe",
    "agent_error",
    "timeout",
    "infra_error",
    "judge_error",
    "environment_invalid",
]
NOT_THE_AGENTS = ("infra_error", "judge_error", "environment_invalid")
"""Outcomes that are not the agent's doing: retried once, then left out of every rate."""

Task = Literal["repair", "diagnose"]
"""What an assessment asks: repair the network (and, optionally, diagnose it), or diagnose it
only, with read-only tools."""

DeviationKind = Literal[
    "address",
    "translation",
    "route",
    "policy_routing",
    "proxy",
    "off_limits",
    "change",
    "allow_all",
    "deleted_policy",
]


def drawn_seed() -> int:
    """A fresh assessment seed, so that no schedule is known in advance."""
    return secrets.randbelow(SEED_BOUND)


def whole_number(name: str, value: Any, low: int, high: int | None = None) -> int:
    """``value`` as an int within [low, high]: a float without a fraction passes (A2A data parts
    carry every number as a double); booleans, strings and fractions do not."""
    bounds = f"from {low} to {high}" if high is not None else f"of at least {low}"
    whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if isinstance(value, bool) or not whole:
        raise ValueError(f"{name} must be a whole number {bounds}, got {value!r}")
    number = int(value)
    if number < low or (high is not None and number > high):
        raise ValueError(f"{name} must be a whole number {bounds}, got {number}")
    return number


class HiddenTestResult(BaseModel):
    id: str
    description: str
    passed: bool
    evidence: str


class Deviation(BaseModel):
    device: str
    kind: DeviationKind
    detail: str = Field(description="what the change does, in words")
    evidence: str = Field(description="the state item, as read on the device")


class IntegrityReport(BaseModel):
    fakes: list[Deviation] = Field(
        default_factory=list, description="changes that fake a symptom away (adherence failures)"
    )
    unexplained: list[Deviation] = Field(
        default_factory=list, description="changes on devices outside the task's scope"
    )
    changes: int = Field(0, description="the agent's other changes, on devices in scope")


class Grade(BaseModel):
    """Pass/fail per hidden test with its evidence; never the reference solution."""

    solved: bool = Field(
        description="every target passes, no guard or adherence check fails, nothing faked"
    )
    targets_passed: float = Field(description="the fraction of target tests that pass")
    targets: list[HiddenTestResult]
    guards: list[HiddenTestResult]
    adherence: list[HiddenTestResult]
    integrity: IntegrityReport = Field(
        default_factory=IntegrityReport, description="what the state audit found"
    )


class Outage(BaseModel):
    probe: str
    description: str
    started_s: float = Field(description="seconds into the agent's turn")
    lasted_s: float
    evidence: str


class MonitorReport(BaseModel):
    flows: int = Field(description="guard tests sampled")
    samples: int = 0
    outages: list[Outage] = Field(default_factory=list)


class Effort(BaseModel):
    wall_s: float = Field(description="the agent's turn, from handing over to its answer")
    tool_calls: int
    state_changing_calls: int
    turns: int | None = Field(default=None, description="agent turns, when the agent reports them")
    tokens_in: int | None = None
    tokens_out: int | None = None


class Safety(BaseModel):
    safe: bool
    guards_failed: list[str] = Field(description="guard tests failing at the end")
    outages: MonitorReport
    refused_changes: int = Field(description="state-changing commands the allowlist refused")
    out_of_scope_changes: int = Field(
        description="state-changing calls on devices the task does not involve"
    )
    unexplained_changes: int = Field(
        0, description="changes the state audit found on devices the task does not involve"
    )
    healthy_changes: int = Field(
        0, description="state-changing calls on a healthy control, where nothing was wrong"
    )


class Verdict(BaseModel):
    outcome: Outcome
    correct: bool = Field(description="every target test passes")
    targets_passed: float
    targets_passed_at_start: float
    safety: Safety
    effort: Effort
    tests: Grade | None = Field(default=None, description="each hidden test with its evidence")
    detail: str = ""


class Scores(BaseModel):
    """Precision, recall and F1 of one set named against the true set."""

    precision: float
    recall: float
    f1: float


class DiagnosisScore(BaseModel):
    """A submitted root cause against the injected faults (red herrings aside): localisation
    by device, root cause by class of the published taxonomy (`docs/scenarios.md`)."""

    submitted: bool = Field(description="the agent gave a structured diagnosis at submit")
    locations: list[str] = Field(default_factory=list, description="the devices it named")
    classes: list[str] = Field(default_factory=list, description="the classes it named")
    true_devices: list[str] = Field(description="the devices of the injected faults")
    true_classes: list[str] = Field(description="their classes; ['none'] on a healthy control")
    localisation: Scores
    root_cause: Scores

    @property
    def exact(self) -> bool:
        """Both the places and the classes named exactly."""
        return self.localisation.f1 == 1.0 and self.root_cause.f1 == 1.0

    @property
    def claims_fault(self) -> bool:
        """A submitted diagnosis that says something is wrong: a place, or a class not none."""
        return self.submitted and (bool(self.locations) or bool(set(self.classes) - {"none"}))


class Budgets(BaseModel):
    max_tool_calls: int = Field(default=60, ge=1)
    time_budget_s: float = Field(default=600.0, gt=0)


class Timings(BaseModel):
    ready_s: float = 0.0
    agent_s: float = 0.0
    judge_s: float = 0.0
    teardown_s: float = 0.0


class EpisodeRecord(BaseModel):
    episode_id: str
    scenario_id: str
    family: str
    level: int
    seed: int
    trial: int = 0
    kind: str
    outcome: Outcome
    healthy: bool = Field(default=False, description="a healthy control: nothing was wrong")
    cascade: bool = Field(
        default=False, description="a level-3 cascade: one fault masked another at the start"
    )
    false_alarm: bool | None = Field(
        default=None,
        description="a judged healthy control: the agent changed state or claimed a fault",
    )
    diagnosis: DiagnosisScore | None = Field(
        default=None, description="the structured root cause at submit, scored"
    )
    verdict: Verdict | None = None
    timings: Timings = Field(default_factory=Timings)
    slot: int | None = Field(default=None, description="position in the assessment's schedule")
    attempts: int = 1
    retried_because: str | None = Field(
        default=None, description="the first attempt's outcome and error, when it was rerun"
    )
    error: str | None = None
    trajectory: Trajectory | None = Field(default=None, exclude=True)


class Rate(BaseModel):
    """A proportion or mean with its confidence interval."""

    value: float = Field(description="the point estimate")
    ci_low: float = Field(description="the lower bound of the confidence interval")
    ci_high: float = Field(description="the upper bound of the confidence interval")
    n: int = Field(description="the number of observations behind the estimate")


class GroupRates(BaseModel):
    """The three rates over one group of counted episodes."""

    counted: int
    solved: Rate
    correct: Rate
    safe: Rate


class ScoreRates(BaseModel):
    """Mean precision, recall and F1 over the episodes with a diagnosis score."""

    precision: Rate
    recall: Rate
    f1: Rate


class TrialStats(BaseModel):
    """Several trials per instance: pass@k (any of k solves) and pass^k (all k solve)."""

    trials: int = Field(description="the most trials any instance has")
    instances: int
    pass_at_k: dict[str, Rate] = Field(description="k -> mean over instances with >= k trials")
    pass_hat_k: dict[str, Rate] = Field(description="k -> mean over instances with >= k trials")


class Summary(BaseModel):
    episodes: int
    counted: int = Field(
        description="episodes that count: infra, judge and environment failures excluded"
    )
    excluded: dict[str, int] = Field(
        default_factory=dict, description="episodes left out of every rate, by outcome"
    )
    outcomes: dict[str, int]
    solved: Rate
    safe: Rate
    correct: Rate
    by_family: dict[str, Rate] = Field(description="solve rate per family")
    by_level: dict[str, Rate] = Field(description="solve rate per level")
    breakdown: dict[str, dict[str, GroupRates]] = Field(
        default_factory=dict, description="family, level and kind -> group -> rates"
    )
    trials: TrialStats | None = Field(default=None, description="when instances ran >1 trial")
    tool_calls: Rate = Field(description="mean tool calls per counted episode")
    wall_s: Rate = Field(description="mean seconds of the agent's turn")
    state_changing_calls: Rate | None = Field(
        default=None, description="mean state-changing calls per counted episode"
    )
    turns: int | None = Field(
        default=None, description="agent turns over every judged episode, when it reports them"
    )
    tokens_in: int | None = Field(
        default=None, description="prompt tokens over every judged episode, when reported"
    )
    tokens_out: int | None = Field(
        default=None, description="completion tokens over every judged episode, when reported"
    )
    healthy_controls: int = Field(0, description="counted episodes that were healthy controls")
    false_alarms: Rate | None = Field(
        default=None,
        description="share of counted healthy controls where the agent changed state or "
        "claimed a fault",
    )
    localisation: ScoreRates | None = Field(
        default=None, description="devices named against the devices at fault, when scored"
    )
    root_cause: ScoreRates | None = Field(
        default=None, description="classes named against the classes of the faults, when scored"
    )


class Instance(BaseModel):
    """One task instance: (family, level, seed) and the hash of the whole generated scenario."""

    scenario_id: str
    family: str
    level: int
    seed: int
    digest: str = Field(description="sha256 prefix of the scenario, public and hidden halves")


class Provenance(BaseModel):
    netdojo: str
    kathara: str
    mcp: str
    python: str
    host: str = Field(description="operating system, kernel release and machine")
    device_image: str | None = Field(default=None, description="tag (image id)")
    device_image_id: str | None = None
    frr: str | None = Field(default=None, description="the FRR package version in the image")
    docker: str | None = Field(default=None, description="the Docker engine version")
    cpus: int | None = None
    memory_mib: int | None = Field(default=None, description="the host's total memory")
    assessment_seed: int | None = Field(
        default=None, description="the seed of the schedule, as given or drawn at random"
    )
    budgets: Budgets | None = None
    instances: list[Instance] = Field(default_factory=list, description="in schedule order")
    shards: list[Provenance] = Field(
        default_factory=list,
        description="a result merged from shards: each shard's own provenance, in shard order",
    )


class ConfigRecord(BaseModel):
    """An assessment config as recorded with its result. The judge's `AssessmentConfig` adds
    the defaults and checks that need the scenario registry."""

    # A result given the judge's config keeps it as a record, equal to the one read back.
    model_config = ConfigDict(extra="forbid", revalidate_instances="subclass-instances")

    families: list[str] = Field(description="the scenario families to draw instances from")
    levels: list[int] = Field(
        default_factory=lambda: [1], description="the difficulty levels (1 to 3) of every family"
    )
    episodes: int | None = Field(
        default=None,
        ge=1,
        description="instances drawn from the seed, over every family and level in turn "
        "(default: one per family and level)",
    )
    seeds: list[int] | None = Field(
        default=None, description="instance seeds, for every family and level (not with episodes)"
    )
    trials: int = Field(default=1, ge=1, le=20, description="trials per instance")
    seed: int = Field(
        default_factory=drawn_seed,
        ge=0,
        description="the assessment seed: the whole schedule; drawn at random when not given",
    )
    max_tool_calls: int = Field(default=60, ge=1, le=1000, description="tool calls per episode")
    time_budget_s: float = Field(
        default=600.0, gt=0, le=7200, description="seconds of the agent's turn per episode"
    )
    concurrency: int = Field(default=1, ge=1, le=16, description="episodes at once")
    mode: Literal["mcp", "text"] = Field(
        default="mcp",
        description="mcp: the agent gets an MCP endpoint; text: one JSON action per message",
    )
    calibration: bool = Field(default=False, description="allow the oracle (judge calibration)")
    task: Task = Field(
        default="repair",
        description="repair: repair the network (a structured diagnosis at submit is scored "
        "too); diagnose: read-only tools, judged on the submitted diagnosis alone",
    )
    shard_index: int = Field(
        default=0,
        ge=0,
        le=MAX_SHARDS - 1,
        description="which shard this run is (0-based): the schedule's slots whose index modulo "
        "num_shards is shard_index",
    )
    num_shards: int = Field(
        default=1,
        ge=1,
        le=MAX_SHARDS,
        description="how many shards the schedule is split into, each run apart and merged "
        "with `netdojo merge`; more than one needs the seed (or seeds)",
    )

    @model_validator(mode="before")
    @classmethod
    def _runner_names(cls, data: Any) -> Any:
        """``num_instances``, the runner's name for ``episodes``: either, or both if equal."""
        if not isinstance(data, dict):
            return data
        given = {k: v for k, v in data.items() if k not in RUNNER_NAMES}
        for name, key in RUNNER_NAMES.items():
            if data.get(name) is None:
                continue
            value = whole_number(name, data[name], 1)
            if given.get(key) is not None and given[key] != value:
                raise ValueError(
                    f"{name} is another name for {key}: give one, or both equal "
                    f"({key}={given[key]!r}, {name}={value})"
                )
            given[key] = value
        return given

    @model_validator(mode="before")
    @classmethod
    def _one_schedule(cls, data: Any) -> Any:
        """Shards run apart must draw the same schedule, so they must be given its seed."""
        if not isinstance(data, dict):
            return data
        shards = data.get("num_shards")
        split = isinstance(shards, int | float) and not isinstance(shards, bool) and shards > 1
        if split and data.get("seed") is None and data.get("seeds") is None:
            raise ValueError(
                f"num_shards={shards:g} needs the assessment seed (or explicit seeds): shards "
                "run apart must draw the same schedule, and a seed drawn at random differs in each"
            )
        return data

    @field_validator("seed", mode="before")
    @classmethod
    def _draw(cls, seed: Any) -> Any:
        return drawn_seed() if seed is None else seed

    @field_validator("shard_index", "num_shards", mode="before")
    @classmethod
    def _whole(cls, value: Any, info: ValidationInfo) -> int:
        name = info.field_name or ""
        return whole_number(name, value, *SHARD_RANGES[name])

    @model_validator(mode="after")
    def _in_range(self) -> ConfigRecord:
        if self.shard_index >= self.num_shards:
            raise ValueError(
                f"shard_index must be below num_shards (0 to {self.num_shards - 1} for "
                f"num_shards={self.num_shards}), got {self.shard_index}"
            )
        return self

    @property
    def slot_count(self) -> int:
        """The episodes of the whole schedule, every shard's: instances times trials."""
        pairs = len(self.families) * len(self.levels)
        instances = pairs * len(self.seeds) if self.seeds is not None else self.episodes or pairs
        return instances * self.trials

    def in_shard(self, slot: int) -> bool:
        """Whether schedule slot ``slot`` is this run's: slots are dealt to shards in turn."""
        return slot % self.num_shards == self.shard_index


class Assessment(BaseModel):
    """What the judge records of an assessment: who, under which config, and every episode."""

    schema_version: str = SCHEMA_VERSION
    participant: str
    config: ConfigRecord
    provenance: Provenance
    episodes: list[EpisodeRecord]


class AssessmentResult(Assessment):
    """The results document: an assessment with the summary of its episodes."""

    summary: Summary
