"""What the model did in an episode, turn by turn: kept by the agent, readable after the run
even when it raised."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

CallForm = Literal["native", "fenced", "tagged", "python_tag", "mistral", "json"]
Rejection = Literal["unknown_tool", "invalid_arguments", "malformed"]


class RawCall(BaseModel):
    """A call as the model wrote it: ``arguments`` is the raw JSON text of a native call, the
    decoded object of one found in the text."""

    name: str
    arguments: Any = None
    id: str | None = None


class RejectedCall(BaseModel):
    """A call that was not run, and the error the model was told."""

    name: str
    reason: Rejection
    error: str


class ModelTurn(BaseModel):
    """One reply of the model."""

    index: int
    text: str = ""
    tool_calls: list[RawCall] = Field(default_factory=list)
    form: CallForm | None = Field(default=None, description="how the calls were written")
    rejected: list[RejectedCall] = Field(default_factory=list)
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0


class Usage(BaseModel):
    """The totals over the turns."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    turns: int = 0


class ModelRecord(BaseModel):
    """Every turn of one run, the totals, and the one-line error the run ended with, if any."""

    turns: list[ModelTurn] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    error: str | None = None

    def add(self, turn: ModelTurn) -> None:
        self.turns.append(turn)
        self.usage.prompt_tokens += turn.prompt_tokens
        self.usage.completion_tokens += turn.completion_tokens
        self.usage.turns += 1

    @property
    def rejected(self) -> list[RejectedCall]:
        return [call for turn in self.turns for call in turn.rejected]
