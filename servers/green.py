"""The green agent: runs an assessment over A2A against one purple agent.

It takes ``{"participants": {"<role>": "<url>"}, "config": {…}}`` (as a data part, or as JSON
text; a participant that requires a bearer token is ``{"url": …, "token": …}``), rejects
anything else with the reason, and for each episode hands the purple agent the brief and an MCP
endpoint of its own (``mode: "mcp"``), or plays the tools by messages (``mode: "text"``). It
calls purple agents of A2A 1.0 or 0.3, as their cards offer (`netdojo.servers.purple_link`).
Each finished episode is streamed as a status update, and while episodes run a progress update
goes out whenever nothing else did for a couple of seconds (`netdojo.servers.progress`); the
task ends with a ``results`` artifact (the assessment result) and a ``trajectories`` artifact.
Neither the participant's token nor an episode's reaches them, nor the stored task. What the
purple agent is handed names no scenario: the episode id (also its A2A context and its MCP
endpoint's path) is random, and the scenario's identity is handed out only in a calibration run
(for the oracle).
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
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
from a2a.types import AgentSkill, Message, Role, TaskState
from mcp import Client
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from netdojo.errors import NetdojoError, describe
from netdojo.judges.assessment import (
    AssessmentConfig,
    Slot,
    config_keys,
    run_assessment,
    schedule,
)
from netdojo.reports.records import EpisodeRecord
from netdojo.reports.summary import summarized
from netdojo.scenarios.model import Scenario
from netdojo.servers.endpoints import EndpointHost
from netdojo.servers.mcp_server import episode_server
from netdojo.servers.progress import HEARTBEAT_S, Progress, beating
from netdojo.servers.purple_link import (
    Participant,
    PurpleAgent,
    a2a_client,
    action_of,
    code_of,
    read_card,
    report_of,
    send,
)
from netdojo.servers.withheld import MARK, hide, participant_tokens, without
from netdojo.tools.contract import (
    HANDOFF_KEY,
    RESULT_KEY,
    Agent,
    AgentReport,
    EpisodeView,
    Handoff,
    ListedTool,
)
from netdojo.tools.lab_tools import LabTools
from netdojo.tools.trajectory import scrubbed

Preflight = Callable[[], object]
"""Checks that labs can run where the green agent runs; raises `NetdojoError` saying why not."""
ORACLE_NAME = "netdojo-oracle"
MAX_BAD_REPLIES = 3
RESULT_TEXT_CAP = 12_000
SKILL = AgentSkill(
    id="network-assessment",
    name="Network operations assessment",
    description=(
        "Runs live network episodes (repair injected faults, build to an intent) against a "
        "purple agent and returns verdicts with confidence intervals. Config keys: "
        f"{config_keys()}."
    ),
    tags=["networking", "evaluation", "frr"],
    examples=[
        '{"participants": {"agent": "http://127.0.0.1:9010"}, "config": {"episodes": 4}}',
        '{"participants": {"agent": "http://127.0.0.1:9010"}, "config": {"seed": 7, '
        '"num_instances": 8, "shard_index": 0, "num_shards": 2}}',
    ],
)


class AssessmentRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    participants: dict[str, Participant] = Field(
        description='role -> the purple agent: its A2A URL, or {"url": …, "token": …}'
    )
    config: AssessmentConfig = Field(default_factory=AssessmentConfig)
    skip: list[int] = Field(
        default_factory=list,
        description="schedule slots already run (resuming an assessment): not run again",
    )

    @model_validator(mode="after")
    def _in_schedule(self) -> AssessmentRequest:
        drawn = self.config.seeds is None and "seed" not in self.config.model_fields_set
        if self.skip and drawn:
            raise ValueError("skip: give the config's seed, or the schedule is a new one")
        slots = {slot.index for slot in schedule(self.config)}
        outside = sorted(set(self.skip) - slots)
        if outside:
            config = self.config
            part = (
                f"shard {config.shard_index} of {config.num_shards} of "
                if config.num_shards > 1
                else ""
            )
            raise ValueError(
                f"skip: slots {outside} are not in {part}the schedule of "
                f"{config.slot_count} episodes"
            )
        return self

    @field_validator("participants", mode="before")
    @classmethod
    def _one(cls, participants: Any) -> Any:
        if not isinstance(participants, dict):
            return participants
        if len(participants) != 1:
            raise ValueError("name exactly one participant: the agent under assessment")
        return {
            role: {"url": given} if isinstance(given, str) else given
            for role, given in participants.items()
        }


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


def handoff(view: EpisodeView, **given: Any) -> dict[str, Any]:
    """The episode as the purple agent is handed it: its opaque id and ``given`` (mode,
    endpoint, tools); the instance's identity only when the view has it (calibration)."""
    if view.scenario is not None:
        given["scenario"] = view.scenario
    handed = Handoff(episode_id=view.episode_id, **given)
    return handed.model_dump(mode="json", exclude_unset=True)


def _tools_of(view: EpisodeView) -> LabTools:
    if view.handle is None:
        raise ValueError(f"episode {view.episode_id!r} has no tools in this process")
    return view.handle


async def _keeping_secrets(
    view: EpisodeView, secrets: list[str], turn: Awaitable[AgentReport]
) -> AgentReport:
    """The agent's ``turn``, with ``secrets`` taken out of its trajectory, its answer or the
    error it failed with, and its model's turns (an agent may echo a token anywhere)."""
    try:
        report = await turn
    except Exception as exc:  # recorded as the runner records a crash, without the secrets
        report = AgentReport(status="error", detail=describe(exc))
    finally:
        for secret in secrets:
            _tools_of(view).trajectory.redact(secret, MARK)
    report.detail = hide(report.detail, secrets)
    if report.model is not None:
        for secret in secrets:
            report.model = scrubbed(report.model, secret, MARK)
    return report


def mcp_agent(purple: PurpleAgent, endpoints: EndpointHost, config: AssessmentConfig) -> Agent:
    """The purple agent ``purple``, handed an MCP endpoint of its own for the episode."""

    async def turn(view: EpisodeView, url: str, token: str) -> AgentReport:
        given = handoff(view, mode="mcp", mcp_url=url, token=token)
        message = new_message(
            [new_text_part(view.brief), new_data_part({HANDOFF_KEY: given})],
            context_id=view.episode_id,
            role=Role.ROLE_USER,
        )
        async with a2a_client(purple, config.time_budget_s + 30) as client:
            return report_of(await send(client, message), turns=1)

    async def agent(view: EpisodeView) -> AgentReport:
        key = view.episode_id
        endpoint = await endpoints.add(key, episode_server(view))
        try:
            work = turn(view, endpoint.url, endpoint.token)
            secrets = [endpoint.token, *purple.participant.secrets()]
            return await _keeping_secrets(view, secrets, work)
        finally:
            endpoints.remove(key)

    return agent


SINGLE_REPLY = (
    " Or reply once with the whole program in a ```python block: it is run once, and the last"
    " line it prints, if JSON, is submitted as the answer."
)


def text_agent(purple: PurpleAgent, config: AssessmentConfig) -> Agent:
    """The purple agent ``purple`` working by messages: one JSON action per reply."""

    async def agent(view: EpisodeView) -> AgentReport:
        return await _keeping_secrets(view, purple.participant.secrets(), turn(view))

    async def turn(view: EpisodeView) -> AgentReport:
        key = view.episode_id
        async with (
            Client(episode_server(view)) as tools,
            a2a_client(purple, config.time_budget_s + 30) as client,
        ):
            listed = [
                ListedTool(name=t.name, description=t.description, input_schema=t.input_schema)
                for t in (await tools.list_tools()).tools
            ]
            instructions = (
                f"{view.brief}\n\nReply with exactly one JSON action per "
                'message: {"tool": "<name>", "arguments": {...}}. Tools: '
                + ", ".join(t.name for t in listed)
                + '. Finish with {"tool": "submit", "arguments": {"summary": "..."}}.'
            )
            names = {t.name for t in listed}
            if "python" in names:
                instructions += SINGLE_REPLY
            given = handoff(view, mode="text", tools=listed)
            message = new_message(
                [new_text_part(instructions), new_data_part({HANDOFF_KEY: given})],
                context_id=key,
                role=Role.ROLE_USER,
            )
            bad, turns = 0, 0
            while True:
                reply = await send(client, message)
                turns += 1
                report = report_of(reply, turns)
                if report.status == "error":
                    return report
                action = action_of(reply)
                code = code_of(reply) if action is None and "python" in names else None
                if code is not None:
                    return await _run_reply_code(tools, code, report)
                if action is None:
                    bad += 1
                    if bad > MAX_BAD_REPLIES:
                        return AgentReport(status="error", detail="replies were not actions")
                    result: dict[str, Any] = {"error": 'reply with {"tool": …, "arguments": …}'}
                else:
                    tool, arguments = action
                    called = await tools.call_tool(tool, arguments)
                    if tool == "submit" and not called.is_error:
                        return report
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


async def _run_reply_code(tools: Client, code: str, report: AgentReport) -> AgentReport:
    """A reply made of Python code: the code is the work, run once, and the last line it
    prints, when that is JSON, is submitted as the answer."""
    ran = await tools.call_tool("python", {"code": code})
    printed = str((ran.structured_content or {}).get("stdout", "")).strip().splitlines()
    submission: dict[str, Any] = {"summary": "the code of the reply, run once"}
    with contextlib.suppress(IndexError, json.JSONDecodeError):
        submission["answer"] = json.loads(printed[-1])
    await tools.call_tool("submit", submission)
    return report


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
    def __init__(
        self,
        endpoints: EndpointHost,
        heartbeat_s: float = HEARTBEAT_S,
        preflight: Preflight | None = None,
    ) -> None:
        self.endpoints = endpoints
        self.heartbeat_s = heartbeat_s
        self._preflight = preflight
        self._ready = preflight is None
        self._checking = threading.Lock()

    def _check_ready(self) -> None:
        """Run the preflight until it passes once (one at a time): a green agent started
        before its engine could answer works as soon as it does."""
        with self._checking:
            if not self._ready and self._preflight is not None:
                self._preflight()
                self._ready = True

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        assert message is not None
        stored = without(message, participant_tokens(message))  # tasks are readable by callers
        task = context.current_task or new_task_from_user_message(stored)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)

        def say(text: str) -> Message:
            return new_text_message(text, context_id=task.context_id, task_id=task.id)

        try:
            request = parse_request(message)
        except (ValidationError, ValueError) as exc:
            await updater.reject(message=say(f"bad assessment request: {_problems(exc)}"))
            return
        try:
            await anyio.to_thread.run_sync(self._check_ready)
        except NetdojoError as exc:
            await updater.failed(message=say(f"labs cannot run where this green agent runs: {exc}"))
            return
        role, participant = next(iter(request.participants.items()))
        try:
            purple = await self._admit(participant, request.config)
        except ValueError as exc:
            await updater.reject(message=say(f"bad assessment request: {_problems(exc)}"))
            return
        config = request.config
        agent = text_agent if config.mode == "text" else None
        skip = set(request.skip)
        progress = Progress(sum(1 for slot in schedule(config) if slot.index not in skip))

        def agent_for(slot: Slot, scenario: Scenario) -> Agent:
            progress.episode_started()
            if agent is not None:
                return agent(purple, config)
            return mcp_agent(purple, self.endpoints, config)

        async def on_record(slot: Slot, record: EpisodeRecord) -> None:
            progress.episode_done()
            await updater.update_status(
                TaskState.TASK_STATE_WORKING,
                message=say(_episode_line(slot, record, progress.total)),
                metadata=_episode_metadata(record),
            )
            progress.sent()

        async def beat() -> None:
            await updater.update_status(
                TaskState.TASK_STATE_WORKING,
                message=say(progress.line()),
                metadata=progress.metadata(),
            )

        url = participant.url
        await updater.start_work(message=say(f"assessing {role} at {url} (A2A {purple.protocol})"))
        progress.sent()
        work = run_assessment(config, f"{purple.name} ({url})", agent_for, on_record, skip=skip)
        assessed = await beating(progress, beat, work, self.heartbeat_s)
        result = summarized(assessed)
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

    async def _admit(self, participant: Participant, config: AssessmentConfig) -> PurpleAgent:
        """The agent with its card; the oracle reads the answers, so it may only take part in
        a calibration run, and an agent whose card asks for a token needs one."""
        purple = PurpleAgent(participant, await read_card(participant))
        if purple.name == ORACLE_NAME and not config.calibration:
            raise ValueError("the oracle takes part only when config.calibration is true")
        if purple.asks_for_credentials() and participant.token is None:
            raise ValueError(
                f"the agent at {participant.url} requires credentials (its card's security "
                'requirements): give the participant as {"url": …, "token": …}'
            )
        return purple

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id or "", context.context_id or "").cancel()
