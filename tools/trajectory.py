"""The trajectory of an episode: every tool call with its arguments, result and timing, and,
for an agent driven by a model, what the model did turn by turn (kept by the agent, readable
after its run even when the run failed)."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field

MARK = "[redacted]"
"""What stands in a record where a secret was."""

Record = TypeVar("Record", bound=BaseModel)


def storable(value: Any) -> Any:
    """``value`` with text that UTF-8 cannot encode (lone surrogates, which Python's json
    accepts) replaced, so a hostile argument cannot make the trajectory unwritable."""
    if isinstance(value, str):
        return value.encode(errors="replace").decode()
    if isinstance(value, dict):
        return {storable(k): storable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [storable(v) for v in value]
    return value


def scrubbed(record: Record, secret: str, mark: str = MARK) -> Record:
    """``record`` with every occurrence of ``secret`` replaced by ``mark`` (``record`` itself
    when it holds none)."""
    dumped, escaped = record.model_dump_json(), json.dumps(secret)[1:-1]
    if not secret or escaped not in dumped:
        return record
    return type(record).model_validate_json(dumped.replace(escaped, mark))


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


class Step(BaseModel):
    index: int
    time: str = Field(description="UTC time the call started, ISO 8601")
    tool: str
    arguments: dict[str, Any]
    ok: bool
    summary: str = Field(description="a one-line account of the result")
    result: dict[str, Any] | None = Field(default=None, description="the structured result")
    error: str | None = None
    duration_s: float
    changed_state: bool = Field(description="the call could change a device's state")
    refused: bool = Field(default=False, description="an allowlist refused the command")


class Trajectory(BaseModel):
    episode: str
    brief: str | None = Field(default=None, description="the task as handed to the agent")
    steps: list[Step] = Field(default_factory=list)
    submitted: str | None = Field(default=None, description="the agent's summary at submit")
    diagnosis: dict[str, Any] | None = Field(
        default=None, description="the structured root cause given at submit, as given"
    )
    model: ModelRecord | None = Field(
        default=None, description="the model's turns and totals, when the agent reports them"
    )

    def record(
        self,
        tool: str,
        arguments: dict[str, Any],
        started: float,
        *,
        ok: bool,
        summary: str,
        result: dict[str, Any] | None = None,
        error: str | None = None,
        changed_state: bool = False,
        refused: bool = False,
    ) -> Step:
        """Append one call; ``started`` is its `time.monotonic()` start."""
        duration = time.monotonic() - started
        wall = datetime.now(UTC).timestamp() - duration
        step = Step(
            index=len(self.steps),
            time=datetime.fromtimestamp(wall, UTC).isoformat(timespec="milliseconds"),
            tool=tool,
            arguments=storable(arguments),
            ok=ok,
            summary=summary,
            result=result,
            error=error,
            duration_s=round(duration, 4),
            changed_state=changed_state,
            refused=refused,
        )
        self.steps.append(step)
        return step

    def redact(self, secret: str, mark: str = MARK) -> None:
        """Replace every occurrence of ``secret`` in the recorded calls, results, summary and
        model turns."""
        clean = scrubbed(self, secret, mark)
        if clean is self:
            return
        self.steps[:] = clean.steps
        self.submitted = clean.submitted
        self.diagnosis = clean.diagnosis
        self.model = clean.model

    @property
    def state_changes(self) -> int:
        return sum(step.changed_state for step in self.steps)

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.model_dump_json(indent=1) + "\n")
