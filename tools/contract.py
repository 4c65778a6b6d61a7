"""The episode contract: what a purple agent is given, what it answers, and the keys an episode
travels under between the green agent and a purple agent. Both sides take it from here.

An agent is given an `EpisodeView`: the episode's public half (its brief, topology and
constraints), where its tools are (an MCP endpoint and its bearer token, or in process a handle
an MCP server is built from), the names of those tools, and, in a calibration run only, the
identity of the instance (for the oracle, which replays the reference fix). Never the hidden
half. It answers with an `AgentReport`: its summary, its effort and, for an agent driven by a
model, the model's record (`netdojo.tools.trajectory.ModelRecord`), also when it failed.

Over A2A the green agent sends the brief as text and a `Handoff` under `HANDOFF_KEY`; in text
mode it answers each call with the tool's result under `RESULT_KEY`. A purple agent's reply
carries a `Reply` as its data part: the next call (text mode), its effort so far, and, when it
is done or failed, the error in one line and the model's record.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from netdojo.scenarios.model import PublicHalf
from netdojo.tools.trajectory import ModelRecord

if TYPE_CHECKING:
    from netdojo.tools.lab_tools import LabTools

HANDOFF_KEY = "netdojo_episode"
RESULT_KEY = "netdojo_result"

Mode = Literal["mcp", "text"]
AgentStatus = Literal["done", "error", "timeout"]


class ScenarioRef(BaseModel):
    """An instance's identity: handed out in a calibration run only, for the oracle."""

    family: str
    level: int
    seed: int


class ListedTool(BaseModel):
    """A tool as an episode lists it: its name, what it does and its arguments' JSON schema."""

    name: str
    description: str | None = None
    input_schema: dict[str, Any] = Field(default_factory=dict)


class Handoff(BaseModel):
    """The episode as the green agent hands it over A2A, beside the brief as text."""

    episode_id: str = Field(description="random; also the A2A context and the endpoint's path")
    mode: Mode = "mcp"
    mcp_url: str | None = Field(default=None, description="MCP mode: the episode's endpoint")
    token: str | None = Field(default=None, description="MCP mode: the endpoint's bearer token")
    tools: list[ListedTool] = Field(
        default_factory=list, description="text mode: the tools, called by message"
    )
    scenario: ScenarioRef | None = Field(default=None, description="calibration runs only")


@dataclass(frozen=True, kw_only=True)
class EpisodeView:
    """What a purple agent is given for one episode.

    Over MCP it works on ``mcp_url`` with ``token``; in process, on an MCP server built from
    ``handle`` (the episode's tools); in text mode, by messages. ``tool_names`` are the tools
    the episode offers when they are known before connecting (in process, in text mode);
    otherwise the session lists them. ``public`` (the topology and constraints) is given in
    process; over A2A the `topology` tool and resource give it.
    """

    brief: str
    episode_id: str = ""
    public: PublicHalf | None = None
    tool_names: tuple[str, ...] = ()
    mode: Mode = "mcp"
    mcp_url: str | None = None
    token: str | None = field(default=None, repr=False)
    scenario: ScenarioRef | None = None
    handle: LabTools | None = field(default=None, repr=False, compare=False)

    @classmethod
    def handed(cls, brief: str, handoff: Handoff) -> EpisodeView:
        """The view a purple agent builds from the green agent's message."""
        return cls(
            brief=brief,
            episode_id=handoff.episode_id,
            tool_names=tuple(tool.name for tool in handoff.tools),
            mode=handoff.mode,
            mcp_url=handoff.mcp_url,
            token=handoff.token,
            scenario=handoff.scenario,
        )


class AgentReport(BaseModel):
    """What the agent side says of its turn: how it ended, its summary (or its error, in one
    line), the effort it counted and, for an agent driven by a model, the model's record."""

    status: AgentStatus = "done"
    detail: str = ""
    turns: int | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    model: ModelRecord | None = None

    @classmethod
    def of(cls, model: ModelRecord | None, **given: Any) -> AgentReport:
        """A report whose turns and tokens, unless given, are the model record's."""
        if model is not None:
            usage = model.usage
            counted = {
                "turns": usage.turns,
                "tokens_in": usage.prompt_tokens,
                "tokens_out": usage.completion_tokens,
            }
            given = {**counted, **given}
        return cls(model=model, **given)


Agent = Callable[[EpisodeView], Awaitable[AgentReport]]
"""An episode's agent: given the view of its episode, it works until it answers."""


class ReplyUsage(BaseModel):
    """The effort a purple agent counts: its tool calls and, for a model, turns and tokens."""

    tool_calls: int | None = None
    turns: int | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class Reply(BaseModel):
    """The data part of a purple agent's reply."""

    action: dict[str, Any] | None = Field(
        default=None, description='text mode: the next call, {"tool": …, "arguments": …}'
    )
    usage: ReplyUsage | None = None
    error: str | None = Field(default=None, description="why it failed, in one line")
    model: ModelRecord | None = Field(
        default=None, description="the model's turns, sent once the agent is done or failed"
    )

    def data(self) -> dict[str, Any]:
        """The reply as its data part carries it."""
        return self.model_dump(mode="json", exclude_none=True)
