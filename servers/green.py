"""The green agent: runs an assessment over A2A against one purple agent.

It takes ``{"participants": {"<role>": "<url>"}, "config": {…}}`` (as a data part, or as JSON
text), rejects anything else with the reason, and for each episode hands the purple agent the
brief and an MCP endpoint of its own (``mode: "mcp"``), or plays the tools by messages
(``mode: "text"``). Each finished episode is streamed as a status update; the task ends with a
``results`` artifact (the assessment result) and a ``trajectories`` artifact.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from a2a.client import ClientConfig, create_client
from a2a.helpers import (
    get_data_parts,
    get_message_text,
    new_data_part,
    new_message,
    new_task_from_user_message,
    new_text_message,
    new_text_part,
)
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import AgentSkill, Message, Role, SendMessageRequest, TaskState
from mcp import Client
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from netdojo.judges.assessment import AssessmentConfig, Slot, run_assessment, schedule
from netdojo.judges.episode import Episode
from netdojo.judges.runner import Agent, AgentReport, EpisodeRecord
from netdojo.scenarios.model import Scenario
from netdojo.servers.endpoints import EndpointHost
from netdojo.servers.mcp_server import evaluation_server

HANDOFF_KEY = "netdojo_episode"
RESULT_KEY = "netdojo_result"
ORACLE_NAME = "netdojo-oracle"
MAX_BAD_REPLIES = 3
RESULT_TEXT_CAP = 12_000
SKILL = AgentSkill(
    id="network-assessment",
    name="Network operations assessment",
    description=(
        "Runs live network episodes (repair injected faults, build to an intent) against a "
        "purple agent and returns verdicts with confidence intervals."
    ),
    tags=["networking", "evaluation", "frr"],
    examples=['{"participants": {"agent": "http://127.0.0.1:9010"}, "config": {"episodes": 4}}'],
)


class AssessmentRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    participants: dict[str, str] = Field(description="role -> the purple agent's A2A URL")
    config: AssessmentConfig = Field(default_factory=AssessmentConfig)
    skip: list[int] = Field(
        default_factory=list,
        description="schedule slots already run (resuming an assessment): not run again",
    )

    @model_validator(mode="after")
    def _in_schedule(self) -> AssessmentRequest:
        slots = len(schedule(self.config))
        outside = sorted({i for i in self.skip if not 0 <= i < slots})
        if outside:
            raise ValueError(f"skip: slots {outside} are not in the schedule of {slots} episodes")
        return self

    @field_validator("participants")
    @classmethod
    def _one(cls, participants: dict[str, str]) -> dict[str, str]:
        if len(participants) != 1:
            raise ValueError("name exactly one participant: the agent under assessment")
        for url in participants.values():
            if not url.startswith(("http://", "https://")):
                raise ValueError(f"participant URL {url!r} must be http(s)")
        return participants


def parse_request(message: Message) -> AssessmentRequest:
    """The request from a data part, else from the message text as JSON."""
    for part in get_data_parts(list(message.parts)):
        if isinstance(part, dict) and "participants" in part:
            return AssessmentRequest.model_validate(part)
    text = get_message_text(message).strip()
    try:
        payload = json.loads(text)
    except json.JSONDecodeError:
        raise ValueError(
            'send {"participants": {"<role>": "<url>"}, "config": {...}} as JSON'
        ) from None
    return AssessmentRequest.model_validate(payload)


def _problems(exc: ValidationError | ValueError) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'request'}: {e['msg']}" for e in exc.errors()
        )
    return str(exc)


@asynccontextmanager
async def _a2a_client(url: str, timeout_s: float) -> AsyncIterator[Any]:
    async with httpx.AsyncClient(timeout=httpx.Timeout(timeout_s, connect=10.0)) as http:
        config = ClientConfig(streaming=False, httpx_client=http)
        async with await create_client(url, client_config=config) as client:
            yield client


async def _send(client: Any, message: Message) -> Message:
    """One request, one reply; a failed purple task raises."""
    reply: Message | None = None
    async for response in client.send_message(SendMessageRequest(message=message)):
        kind = response.WhichOneof("payload")
        if kind == "message":
            reply = response.message
        elif kind == "task":
            task = response.task
            if task.status.state != TaskState.TASK_STATE_COMPLETED:
                state = TaskState.Name(task.status.state)
                raise RuntimeError(f"the purple agent's task ended {state}")
            reply = task.status.message
    if reply is None:
        raise RuntimeError("the purple agent sent no reply")
    return reply


def _data(message: Message, key: str) -> Any:
    for part in get_data_parts(list(message.parts)):
        if isinstance(part, dict) and key in part:
            return part[key]
    return None


def _report(reply: Message, turns: int) -> AgentReport:
    usage = _data(reply, "usage") or {}
    tokens_in, tokens_out = usage.get("prompt_tokens"), usage.get("completion_tokens")
    return AgentReport(
        detail=get_message_text(reply)[:2000],
        turns=int(usage.get("turns") or turns),
        tokens_in=int(tokens_in) if tokens_in else None,
        tokens_out=int(tokens_out) if tokens_out else None,
    )


def _handoff(episode: Episode, calibration: bool, **extra: Any) -> dict[str, Any]:
    scenario = episode.scenario
    handoff: dict[str, Any] = {"episode_id": episode.trajectory.episode, **extra}
    if calibration:
        handoff["scenario"] = {
            "family": scenario.family,
            "level": scenario.level,
            "seed": scenario.seed,
        }
    return handoff


def mcp_agent(url: str, endpoints: EndpointHost, config: AssessmentConfig) -> Agent:
    """The purple agent at ``url``, handed an MCP endpoint of its own for the episode."""

    async def agent(episode: Episode) -> AgentReport:
        key = episode.trajectory.episode
        endpoint = await endpoints.add(key, evaluation_server(episode.tools))
        try:
            handoff = _handoff(
                episode, config.calibration, mode="mcp", mcp_url=endpoint.url, token=endpoint.token
            )
            message = new_message(
                [
                    new_text_part(episode.scenario.public.brief),
                    new_data_part({HANDOFF_KEY: handoff}),
                ],
                context_id=key,
                role=Role.ROLE_USER,
            )
            async with _a2a_client(url, config.time_budget_s + 30) as client:
                report = _report(await _send(client, message), turns=1)
        finally:
            endpoints.remove(key)
            episode.trajectory.redact(endpoint.token)  # secrets never reach a record
        report.detail = report.detail.replace(endpoint.token, "[redacted]")
        return report

    return agent


def text_agent(url: str, config: AssessmentConfig) -> Agent:
    """The purple agent at ``url`` working by messages: one JSON action per reply."""

    async def agent(episode: Episode) -> AgentReport:
        key = episode.trajectory.episode
        async with (
            Client(evaluation_server(episode.tools)) as tools,
            _a2a_client(url, config.time_budget_s + 30) as client,
        ):
            listed = [
                {"name": t.name, "description": t.description, "input_schema": t.input_schema}
                for t in (await tools.list_tools()).tools
            ]
            instructions = (
                f"{episode.scenario.public.brief}\n\nReply with exactly one JSON action per "
                'message: {"tool": "<name>", "arguments": {...}}. Tools: '
                + ", ".join(str(t["name"]) for t in listed)
                + '. Finish with {"tool": "submit", "arguments": {"summary": "..."}}.'
            )
            handoff = _handoff(episode, config.calibration, mode="text", tools=listed)
            message = new_message(
                [new_text_part(instructions), new_data_part({HANDOFF_KEY: handoff})],
                context_id=key,
                role=Role.ROLE_USER,
            )
            bad, turns = 0, 0
            while True:
                reply = await _send(client, message)
                turns += 1
                action = _action(reply)
                if action is None:
                    bad += 1
                    if bad > MAX_BAD_REPLIES:
                        return AgentReport(status="error", detail="replies were not actions")
                    result: dict[str, Any] = {"error": 'reply with {"tool": …, "arguments": …}'}
                else:
                    tool, arguments = action
                    called = await tools.call_tool(tool, arguments)
                    if tool == "submit" and not called.is_error:
                        return _report(reply, turns)
                    text = "".join(getattr(p, "text", "") for p in called.content)
                    result = (
                        {"error": text}
                        if called.is_error
                        else {"result": called.structured_content or {"text": text}}
                    )
                shown = json.dumps(result)[:RESULT_TEXT_CAP]
                message = new_message(
                    [new_text_part(shown), new_data_part({RESULT_KEY: result})],
                    context_id=key,
                    role=Role.ROLE_USER,
                )

    return agent


def _action(reply: Message) -> tuple[str, dict[str, Any]] | None:
    action = _data(reply, "action")
    if action is None:
        try:
            action = json.loads(get_message_text(reply).strip())
        except json.JSONDecodeError:
            return None
    if not isinstance(action, dict) or not isinstance(action.get("tool"), str):
        return None
    arguments = action.get("arguments") or {}
    return (action["tool"], arguments) if isinstance(arguments, dict) else None


def _episode_line(slot: Slot, record: EpisodeRecord, total: int) -> str:
    return (
        f"episode {slot.index + 1}/{total}: {record.family} L{record.level} seed {record.seed}"
        f" trial {record.trial} -> {record.outcome}"
    )


def _episode_metadata(record: EpisodeRecord) -> dict[str, Any]:
    """A finished episode as its status update carries it: the record and its trajectory, so a
    client can keep each episode as it ends."""
    trajectory = record.trajectory.model_dump(mode="json") if record.trajectory else None
    return {"episode": record.model_dump(mode="json"), "trajectory": trajectory}


class GreenExecutor(AgentExecutor):
    def __init__(self, endpoints: EndpointHost) -> None:
        self.endpoints = endpoints

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        assert message is not None
        task = context.current_task or new_task_from_user_message(message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)

        def say(text: str) -> Message:
            return new_text_message(text, context_id=task.context_id, task_id=task.id)

        try:
            request = parse_request(message)
            role, url = next(iter(request.participants.items()))
            name = await self._admit(url, request.config)
        except (ValidationError, ValueError) as exc:
            await updater.reject(message=say(f"bad assessment request: {_problems(exc)}"))
            return
        config = request.config
        agent = text_agent if config.mode == "text" else None
        total = [0]

        def agent_for(slot: Slot, scenario: Scenario) -> Agent:
            if agent is not None:
                return agent(url, config)
            return mcp_agent(url, self.endpoints, config)

        async def on_record(slot: Slot, record: EpisodeRecord) -> None:
            total[0] += 1
            await updater.update_status(
                TaskState.TASK_STATE_WORKING,
                message=say(_episode_line(slot, record, total[0])),
                metadata=_episode_metadata(record),
            )

        await updater.start_work(message=say(f"assessing {role} at {url}"))
        result = await run_assessment(
            config, f"{name} ({url})", agent_for, on_record, skip=set(request.skip)
        )
        trajectories = [
            {"episode_id": r.episode_id, "trajectory": r.trajectory.model_dump(mode="json")}
            for r in result.episodes
            if r.trajectory is not None
        ]
        await updater.add_artifact(
            [new_data_part(result.model_dump(mode="json"))], name="results", last_chunk=True
        )
        await updater.add_artifact(
            [new_data_part({"trajectories": trajectories})], name="trajectories", last_chunk=True
        )
        summary = result.summary
        await updater.complete(
            message=say(
                f"{summary.counted} episodes counted: solved {summary.solved.value:.0%}, "
                f"safe {summary.safe.value:.0%}"
            )
        )

    async def _admit(self, url: str, config: AssessmentConfig) -> str:
        """The agent's name from its card; the oracle reads the answers, so it may only take
        part in a calibration run."""
        async with httpx.AsyncClient(timeout=10.0) as http:
            try:
                card = (await http.get(f"{url.rstrip('/')}/.well-known/agent-card.json")).json()
            except (httpx.HTTPError, json.JSONDecodeError) as exc:
                raise ValueError(f"cannot read the agent card at {url}: {exc}") from None
        if not isinstance(card, dict):
            raise ValueError(f"the agent card at {url} is not a JSON object")
        if card.get("name") == ORACLE_NAME and not config.calibration:
            raise ValueError("the oracle takes part only when config.calibration is true")
        return str(card.get("name") or "agent")

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id or "", context.context_id or "").cancel()
