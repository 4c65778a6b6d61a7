"""The trajectory of an episode: every tool call with its arguments, result and timing."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

MARK = "[redacted]"
"""What stands in a record where a secret was."""


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
        """Replace every occurrence of ``secret`` in the recorded calls, results and summary."""
        dumped, escaped = self.model_dump_json(), json.dumps(secret)[1:-1]
        if not secret or escaped not in dumped:
            return
        clean = Trajectory.model_validate_json(dumped.replace(escaped, mark))
        self.steps[:] = clean.steps
        self.submitted = clean.submitted

    @property
    def state_changes(self) -> int:
        return sum(step.changed_state for step in self.steps)

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.model_dump_json(indent=1) + "\n")
