"""What the step environment (`netdojo.judges.environment`) answers: the observation an agent
is handed, each step's result, how an episode ended and where it stands."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from netdojo.reports.records import Outcome
from netdojo.tools.contract import ListedTool
from netdojo.tools.topology import TopologyView

EndReason = Literal["submitted", "calls", "time"]


class Observation(BaseModel):
    """What an agent is handed when an episode opens; never the instance's name, its seed or
    anything of its hidden half."""

    episode_id: str = Field(description="random, never derived from the instance")
    brief: str
    constraints: list[str]
    topology: TopologyView
    tools: list[ListedTool] = Field(description="as an MCP server lists them")


class Ending(BaseModel):
    """How an episode ended: why, its verdict's outcome and its final reward."""

    reason: EndReason
    outcome: Outcome
    reward: float = Field(description="the final reward, by `netdojo.judges.reward`")
    counted: bool = Field(description="False when the outcome was not the agent's doing")
    targets_passed: float | None = Field(description="the fraction of targets passing at the end")
    safe: bool | None


class StepInfo(BaseModel):
    tool_calls: int = Field(description="the calls the tool budget has counted")
    changed_state: bool = Field(description="this call could change a device's state")
    ending: Ending | None = Field(default=None, description="once the episode has ended")


class StepResult(BaseModel):
    """A tool's answer to one step, as an MCP client would read it, and where the episode is."""

    result: dict[str, Any] | None = Field(default=None, description="the structured result")
    error: str | None = Field(default=None, description="the tool-level error text")
    is_error: bool = False
    done: bool = False
    truncated: bool = Field(default=False, description="ended by a budget, not by submit")
    reward: float = 0.0
    info: StepInfo


class EpisodeState(BaseModel):
    episode_id: str | None = Field(description="none before the first reset and after close")
    steps: int = 0
    tool_calls: int = Field(0, description="the calls the tool budget has counted")
    elapsed_s: float = Field(0.0, description="since the episode was handed over, until it ended")
    warm: bool = Field(False, description="the episode was ready in the pool when reset asked")
    reset_s: float = Field(0.0, description="how long the reset that opened it took")
    done: bool = False
    submitted: bool = False
    ending: Ending | None = Field(default=None, description="once the episode has ended")
