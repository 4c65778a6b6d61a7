"""Episodes as training data: ATIF trajectories and chat-format JSONL for fine-tuning.

ATIF (the Agent Trajectory Interchange Format of Harbor, version 1.7): the brief as a user step,
each tool call as an agent step whose observation carries the result under the call's id, the
agent's final answer as a last agent step, and the verdict in `final_metrics`. SFT: one object
per episode, `{"messages": [...], "tools": [...], "metadata": {...}}`, with OpenAI-style tool
calls (arguments as a JSON string) and `tool` messages answering them by `tool_call_id`.

Episodes without a trajectory (the lab never came up) have nothing to learn from and are
skipped. Everything written passes through `redact.scrub`. The formats are described in
docs/export.md, with JSON Schemas in docs/schemas/.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any, Literal

from netdojo.reports.records import EpisodeRecord
from netdojo.reports.redact import scrub
from netdojo.reports.runs import Run
from netdojo.reports.summary import is_safe
from netdojo.tools.trajectory import Step, Trajectory

ATIF_VERSION = "ATIF-v1.7"
Format = Literal["sft", "atif"]
Only = Literal["solved-safe"]
BUILT_IN_PREFIX = "netdojo-"


def call_id(step: Step) -> str:
    return f"call_{step.index}"


def observation(step: Step) -> str:
    """What the agent got back from a call, as text: the structured result or the error."""
    if step.error is not None or step.result is None:
        return f"error: {step.error or step.summary}"
    return json.dumps(step.result, ensure_ascii=False)


def final_answer(record: EpisodeRecord, trajectory: Trajectory) -> str:
    detail = record.verdict.detail if record.verdict else ""
    return detail or trajectory.submitted or ""


def verdict_facts(record: EpisodeRecord) -> dict[str, Any]:
    verdict = record.verdict
    facts: dict[str, Any] = {"outcome": record.outcome, "reward": float(record.outcome == "solved")}
    if verdict is not None:
        facts |= {
            "correct": verdict.correct,
            "safe": is_safe(record),
            "targets_passed": verdict.targets_passed,
            "targets_passed_at_start": verdict.targets_passed_at_start,
            "tool_calls": verdict.effort.tool_calls,
            "state_changing_calls": verdict.effort.state_changing_calls,
            "wall_s": verdict.effort.wall_s,
        }
    return facts


def episode_facts(run: Run, record: EpisodeRecord) -> dict[str, Any]:
    return {
        "agent": run.agent,
        "episode_id": record.episode_id,
        "scenario_id": record.scenario_id,
        "family": record.family,
        "level": record.level,
        "seed": record.seed,
        "trial": record.trial,
        "kind": record.kind,
        "netdojo": run.result.provenance.netdojo,
    }


def _agent_version(run: Run) -> str:
    return run.result.provenance.netdojo if run.agent.startswith(BUILT_IN_PREFIX) else "unknown"


def atif(
    run: Run,
    record: EpisodeRecord,
    trajectory: Trajectory,
    tools: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """One episode as an ATIF trajectory."""
    agent: dict[str, Any] = {"name": run.agent, "version": _agent_version(run)}
    if tools:
        agent["tool_definitions"] = tools
    steps: list[dict[str, Any]] = [
        {"step_id": 1, "source": "user", "message": trajectory.brief or ""}
    ]
    for step in trajectory.steps:
        steps.append(
            {
                "step_id": len(steps) + 1,
                "timestamp": step.time,
                "source": "agent",
                "message": "",
                "tool_calls": [
                    {
                        "tool_call_id": call_id(step),
                        "function_name": step.tool,
                        "arguments": step.arguments,
                    }
                ],
                "observation": {
                    "results": [
                        {
                            "source_call_id": call_id(step),
                            "content": observation(step),
                            "extra": {
                                "ok": step.ok,
                                "summary": step.summary,
                                "changed_state": step.changed_state,
                                "refused": step.refused,
                                "duration_s": step.duration_s,
                            },
                        }
                    ]
                },
            }
        )
    answer = final_answer(record, trajectory)
    if answer:
        steps.append({"step_id": len(steps) + 1, "source": "agent", "message": answer})
    effort = record.verdict.effort if record.verdict else None
    metrics: dict[str, Any] = {"total_steps": len(steps), "extra": verdict_facts(record)}
    if effort is not None and effort.tokens_in is not None:
        metrics["total_prompt_tokens"] = effort.tokens_in
    if effort is not None and effort.tokens_out is not None:
        metrics["total_completion_tokens"] = effort.tokens_out
    document = {
        "schema_version": ATIF_VERSION,
        "session_id": record.episode_id,
        "trajectory_id": record.episode_id,
        "agent": agent,
        "steps": steps,
        "final_metrics": metrics,
        "extra": {
            **episode_facts(run, record),
            "tests": record.verdict.tests.model_dump(mode="json")
            if record.verdict and record.verdict.tests
            else None,
        },
    }
    return dict(scrub(document))


def sft(
    run: Run,
    record: EpisodeRecord,
    trajectory: Trajectory,
    system: str,
    tools: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """One episode as a chat for supervised fine-tuning, tool calls in the OpenAI style."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system},
        {"role": "user", "content": trajectory.brief or ""},
    ]
    for step in trajectory.steps:
        messages.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": call_id(step),
                        "type": "function",
                        "function": {
                            "name": step.tool,
                            "arguments": json.dumps(step.arguments, ensure_ascii=False),
                        },
                    }
                ],
            }
        )
        messages.append(
            {"role": "tool", "tool_call_id": call_id(step), "content": observation(step)}
        )
    answer = final_answer(record, trajectory)
    if answer:
        messages.append({"role": "assistant", "content": answer})
    line: dict[str, Any] = {"messages": messages}
    if tools:
        line["tools"] = tools
    line["metadata"] = episode_facts(run, record) | verdict_facts(record)
    return dict(scrub(line))


def selected(run: Run, only: Only | None) -> Iterator[tuple[EpisodeRecord, Trajectory]]:
    """The run's episodes that have a trajectory and pass the filter."""
    for record in run.result.episodes:
        trajectory = run.trajectory(record)
        if trajectory is None:
            continue
        if only == "solved-safe" and not (record.outcome == "solved" and is_safe(record)):
            continue
        yield record, trajectory


def export_lines(
    runs: Sequence[Run],
    fmt: Format,
    *,
    system: str,
    tools: list[dict[str, Any]] | None = None,
    only: Only | None = None,
) -> Iterator[str]:
    """One JSON line per selected episode of every run."""
    for run in runs:
        for record, trajectory in selected(run, only):
            document = (
                atif(run, record, trajectory, tools)
                if fmt == "atif"
                else sft(run, record, trajectory, system, tools)
            )
            yield json.dumps(document, ensure_ascii=False)
