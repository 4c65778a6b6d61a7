"""netdojo as an inspect-ai task, `netdojo/network`: one live lab per sample.

Installed with the ``inspect`` extra, the task is found through inspect's entry point::

    inspect eval netdojo/network -T family=static-routing -T level=1 --model openai/gpt-4.1

Each sample is one seed of the family and level; its input is the public brief (and the
constraints the brief does not already state). The task's setup opens the sample's episode with
`NetworkEnvironment`; the model works with the episode's own tools, built from the observation's
list, in inspect's `react` loop, whose submit tool is the episode's `submit`. The scorer takes
the judge's final reward, submitting the model's last message as the summary when the loop
stopped without a submit. The lab is torn down when the sample ends, however it ends.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from inspect_ai import Task, task
from inspect_ai.agent import AgentPrompt, AgentState, AgentSubmit, as_solver, react
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool, ToolDef, ToolError, ToolParams
from pydantic import BaseModel, ConfigDict

from netdojo.errors import NetdojoError
from netdojo.judges.environment import Ending, NetworkEnvironment, Opener
from netdojo.judges.episode import open_episode
from netdojo.reports.records import Budgets
from netdojo.scenarios.model import ToolCall
from netdojo.servers.briefing import instance_briefing
from netdojo.tools.contract import ListedTool

SUBMIT = "submit"
SEEDS = (1, 2, 3)
SUMMARY_CHARS = 4000
"""How much of the last message becomes the summary of a submit made on the model's behalf."""
INSTRUCTIONS = (
    "You work on a live network through the tools you are given; each answers with JSON or "
    "an error. The episode ends when you call submit, or when its budget of tool calls or "
    "time is spent."
)


class Instance(BaseModel):
    """Which instance a sample is: in its metadata, for the log; never shown to the model."""

    model_config = ConfigDict(frozen=True)

    family: str
    level: int
    seed: int


def seed_list(seeds: int | str | Sequence[int | str]) -> list[int]:
    """The seeds as given in Python or on inspect's command line (``-T seeds=1,2``)."""
    if isinstance(seeds, int | str):
        seeds = str(seeds).split(",")
    return list(dict.fromkeys(int(seed) for seed in seeds))


def sample(family: str, level: int, seed: int) -> Sample:
    """One instance as a sample: its input is of the public half alone."""
    instance = Instance(family=family, level=level, seed=seed)
    text = instance_briefing(family, level, seed)
    return Sample(id=seed, input=text, metadata=instance.model_dump())


def episode_tool(env: NetworkEnvironment, listed: ListedTool) -> Tool:
    """An episode's tool as an inspect tool: each call is a step; a tool-level error comes
    back to the model as inspect's tool error."""

    async def call(**arguments: Any) -> str:
        step = await env.step(ToolCall(tool=listed.name, arguments=arguments))
        if step.is_error:
            raise ToolError(step.error or f"{listed.name} failed")
        return json.dumps(step.result)

    parameters = ToolParams.model_validate(listed.input_schema)
    for name, schema in parameters.properties.items():
        schema.description = schema.description or name  # inspect asks for one on each
    described = listed.description or listed.name
    return ToolDef(call, name=listed.name, description=described, parameters=parameters).as_tool()


class Episodes:
    """Each running sample's environment, by the sample's uuid, from setup to cleanup."""

    def __init__(self, budgets: Budgets, opener: Opener) -> None:
        self.budgets = budgets
        self.opener = opener
        self._open: dict[str, NetworkEnvironment] = {}

    def open(self, state: TaskState) -> NetworkEnvironment:
        env = NetworkEnvironment(self.budgets, opener=self.opener)
        self._open[state.uuid] = env
        return env

    def of(self, state: TaskState) -> NetworkEnvironment:
        return self._open[state.uuid]

    async def close(self, state: TaskState) -> None:
        """Tear the sample's lab down (inspect's cleanup: after scoring, or an error)."""
        env = self._open.pop(state.uuid, None)
        if env is not None:
            await env.close()


@solver
def open_lab(episodes: Episodes) -> Solver:
    """Open the sample's episode and hand its tools to the model."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        instance = state.metadata_as(Instance)
        env = episodes.open(state)
        observation = await env.reset(instance.family, instance.level, instance.seed)
        state.tools = [episode_tool(env, listed) for listed in observation.tools]
        return state

    return solve


@solver
def episode_agent(episodes: Episodes) -> Solver:
    """inspect's `react` loop on the episode's tools, the episode's `submit` as its submit;
    it stops too when a budget ends the episode."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        env = episodes.of(state)
        submit = next(tool for tool in state.tools if ToolDef(tool).name == SUBMIT)
        others = [tool for tool in state.tools if tool is not submit]

        async def going_on(_: AgentState) -> bool:
            return not env.state().done

        agent = react(
            prompt=AgentPrompt(instructions=INSTRUCTIONS),
            tools=others,
            submit=AgentSubmit(tool=submit, answer_only=True, keep_in_messages=True),
            on_continue=going_on,
        )
        return await as_solver(agent)(state, generate)

    return solve


@scorer(metrics=[mean(), stderr()])
def judged(episodes: Episodes) -> Scorer:
    """The judge's final reward; when the episode is still open, the model's last message
    is submitted as its summary first."""

    async def score(state: TaskState, target: Target) -> Score:
        env = episodes.of(state)
        ending = env.state().ending
        if ending is None:
            summary = state.output.completion[:SUMMARY_CHARS]
            step = await env.step(ToolCall(tool=SUBMIT, arguments={"summary": summary}))
            ending = step.info.ending
            if ending is None:
                raise NetdojoError(f"submitting on the model's behalf failed: {step.error}")
        return Score(
            value=ending.reward,
            answer=_submitted(env),
            explanation=_explained(ending),
            metadata={**ending.model_dump(mode="json"), "solved": ending.outcome == "solved"},
        )

    return score


def _submitted(env: NetworkEnvironment) -> str | None:
    record = env.record
    return record.trajectory.submitted if record and record.trajectory else None


def _explained(ending: Ending) -> str:
    passing = "unknown" if ending.targets_passed is None else f"{ending.targets_passed:.0%}"
    safe = {True: "safe", False: "unsafe", None: "safety unknown"}[ending.safe]
    return f"{ending.outcome} (ended by {ending.reason}): target tests passing {passing}, {safe}"


@task
def network(
    family: str = "static-routing",
    level: int = 1,
    seeds: int | str | Sequence[int | str] = SEEDS,
    max_tool_calls: int = 60,
    time_budget_s: float = 600.0,
    *,
    opener: Opener = open_episode,
) -> Task:
    """Episodes of ``family`` at ``level``, one sample per seed, each on a live lab;
    ``opener`` opens an episode (`open_episode` unless a test gives another)."""
    budgets = Budgets(max_tool_calls=max_tool_calls, time_budget_s=time_budget_s)
    episodes = Episodes(budgets, opener)
    return Task(
        dataset=[sample(family, int(level), seed) for seed in seed_list(seeds)],
        setup=open_lab(episodes),
        solver=episode_agent(episodes),
        cleanup=episodes.close,
        scorer=judged(episodes),
        # the system message, the input, each call of the budget and as many turns without one
        message_limit=2 + 4 * max_tool_calls,
    )
