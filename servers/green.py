"""The green agent: runs an assessment over A2A against one purple agent.

It takes ``{"participants": {"<role>": "<url>"}, "config": {…}}`` (as a data part, or as JSON
text; a participant that requires a bearer token is ``{"url": …, "token": …}``), rejects
anything else with the reason, and for each episode hands the purple agent the brief and an MCP
endpoint of its own (``mode: "mcp"``), or plays the tools by messages (``mode: "text"``). Each
finished episode is streamed as a status update; the task ends with a ``results`` artifact (the
assessment result) and a ``trajectories`` artifact. Neither the participant's token nor an
episode's reaches them, nor the stored task. What the purple agent is handed names no scenario:
the episode id (also its A2A context and its MCP endpoint's path) is random, and the scenario's
identity is handed out only in a calibration run (for the oracle).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable
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
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

from netdojo.errors import describe
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
from netdojo.servers.bearer import check_token
from netdojo.servers.endpoints import EndpointHost
from netdojo.servers.mcp_server import episode_server
from netdojo.servers.withheld import MARK, hide, participant_tokens, without
from netdojo.tools.contract import (
    HANDOFF_KEY,
    RESULT_KEY,
    Agent,
    AgentReport,
    EpisodeView,
    Handoff,
    ListedTool,
    Reply,
    ReplyUsage,
)
from netdojo.tools.lab_tools import LabTools
from netdojo.tools.trajectory import scrubbed

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


class Participant(BaseModel):
    """A purple agent: its A2A URL and, if it asks for one, the bearer token to call it with."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(description="the purple agent's A2A URL")
    token: SecretStr | None = Field(
        default=None, description="sent as `Authorization: Bearer <token>`; never recorded"
    )

    @field_validator("url")
    @classmethod
    def _http(cls, url: str) -> str:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"participant URL {url!r} must be http(s)")
        return url

    @field_validator("token")
    @classmethod
    def _form(cls, token: SecretStr | None) -> SecretStr | None:
        if token is not None:
            check_token(token.get_secret_value())
        return token


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


@asynccontextmanager
async def _a2a_client(participant: Participant, timeout_s: float) -> AsyncIterator[Any]:
    url, token = participant.url, participant.token
    headers = {"Authorization": f"Bearer {token.get_secret_value()}"} if token else None
    timeout = httpx.Timeout(timeout_s, connect=10.0)
    async with httpx.AsyncClient(headers=headers, timeout=timeout) as http:
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


def _reply_data(reply: Message) -> Reply:
    """The reply's data part as the contract reads it: the first that reads; else empty."""
    for part in get_data_parts(list(reply.parts)):
        if isinstance(part, dict):
            try:
                data = Reply.model_validate(part)
            except ValidationError:
                continue
            if data.model_fields_set:
                return data
    return Reply()


def _report(reply: Message, turns: int) -> AgentReport:
    """The agent's report from its reply: its answer or error, its effort (``turns`` counted
    here unless it counts them) and its model's record."""
    data = _reply_data(reply)
    usage = data.usage or ReplyUsage()
    given: dict[str, Any] = {
        "status": "error" if data.error else "done",
        "detail": data.error or get_message_text(reply)[:2000],
        "turns": usage.turns or turns,
    }
    if usage.prompt_tokens:
        given["tokens_in"] = usage.prompt_tokens
    if usage.completion_tokens:
        given["tokens_out"] = usage.completion_tokens
    return AgentReport.of(data.model, **given)


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


def _secrets(participant: Participant) -> list[str]:
    return [participant.token.get_secret_value()] if participant.token else []


def mcp_agent(participant: Participant, endpoints: EndpointHost, config: AssessmentConfig) -> Agent:
    """The purple agent ``participant``, handed an MCP endpoint of its own for the episode."""

    async def turn(view: EpisodeView, url: str, token: str) -> AgentReport:
        given = handoff(view, mode="mcp", mcp_url=url, token=token)
        message = new_message(
            [new_text_part(view.brief), new_data_part({HANDOFF_KEY: given})],
            context_id=view.episode_id,
            role=Role.ROLE_USER,
        )
        async with _a2a_client(participant, config.time_budget_s + 30) as client:
            return _report(await _send(client, message), turns=1)

    async def agent(view: EpisodeView) -> AgentReport:
        key = view.episode_id
        endpoint = await endpoints.add(key, episode_server(view))
        try:
            work = turn(view, endpoint.url, endpoint.token)
            return await _keeping_secrets(view, [endpoint.token, *_secrets(participant)], work)
        finally:
            endpoints.remove(key)

    return agent


def text_agent(participant: Participant, config: AssessmentConfig) -> Agent:
    """The purple agent ``participant`` working by messages: one JSON action per reply."""

    async def agent(view: EpisodeView) -> AgentReport:
        return await _keeping_secrets(view, _secrets(participant), turn(view))

    async def turn(view: EpisodeView) -> AgentReport:
        key = view.episode_id
        async with (
            Client(episode_server(view)) as tools,
            _a2a_client(participant, config.time_budget_s + 30) as client,
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
            given = handoff(view, mode="text", tools=listed)
            message = new_message(
                [new_text_part(instructions), new_data_part({HANDOFF_KEY: given})],
                context_id=key,
                role=Role.ROLE_USER,
            )
            bad, turns = 0, 0
            while True:
                reply = await _send(client, message)
                turns += 1
                report = _report(reply, turns)
                if report.status == "error":
                    return report
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


def _action(reply: Message) -> tuple[str, dict[str, Any]] | None:
    action: Any = _reply_data(reply).action
    if action is None:
        try:
            action = json.loads(get_message_text(reply).strip())
        except json.JSONDecodeError:
            return None
    if not isinstance(action, dict) or not isinstance(action.get("tool"), str):
        return None
    arguments = action.get("arguments") or {}
    return (action["tool"], arguments) if isinstance(arguments, dict) else None


def _asks_for_credentials(card: dict[str, Any]) -> bool:
    """Whether every way the card offers to call the agent names a security scheme."""
    requirements = card.get("securityRequirements")
    if not isinstance(requirements, list) or not requirements:
        return False
    return all(isinstance(r, dict) and r.get("schemes") for r in requirements)


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
        stored = without(message, participant_tokens(message))  # tasks are readable by callers
        task = context.current_task or new_task_from_user_message(stored)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)

        def say(text: str) -> Message:
            return new_text_message(text, context_id=task.context_id, task_id=task.id)

        try:
            request = parse_request(message)
            role, participant = next(iter(request.participants.items()))
            name = await self._admit(participant, request.config)
        except (ValidationError, ValueError) as exc:
            await updater.reject(message=say(f"bad assessment request: {_problems(exc)}"))
            return
        config = request.config
        agent = text_agent if config.mode == "text" else None
        total = [0]

        def agent_for(slot: Slot, scenario: Scenario) -> Agent:
            if agent is not None:
                return agent(participant, config)
            return mcp_agent(participant, self.endpoints, config)

        async def on_record(slot: Slot, record: EpisodeRecord) -> None:
            total[0] += 1
            await updater.update_status(
                TaskState.TASK_STATE_WORKING,
                message=say(_episode_line(slot, record, total[0])),
                metadata=_episode_metadata(record),
            )

        url = participant.url
        await updater.start_work(message=say(f"assessing {role} at {url}"))
        assessed = await run_assessment(
            config, f"{name} ({url})", agent_for, on_record, skip=set(request.skip)
        )
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

    async def _admit(self, participant: Participant, config: AssessmentConfig) -> str:
        """The agent's name from its card; the oracle reads the answers, so it may only take
        part in a calibration run, and an agent whose card asks for a token needs one."""
        url = participant.url
        async with httpx.AsyncClient(timeout=10.0) as http:
            try:
                card = (await http.get(f"{url.rstrip('/')}/.well-known/agent-card.json")).json()
            except (httpx.HTTPError, json.JSONDecodeError) as exc:
                raise ValueError(f"cannot read the agent card at {url}: {exc}") from None
        if not isinstance(card, dict):
            raise ValueError(f"the agent card at {url} is not a JSON object")
        if card.get("name") == ORACLE_NAME and not config.calibration:
            raise ValueError("the oracle takes part only when config.calibration is true")
        if _asks_for_credentials(card) and participant.token is None:
            raise ValueError(
                f"the agent at {url} requires credentials (its card's securityRequirements): "
                'give the participant as {"url": …, "token": …}'
            )
        return str(card.get("name") or "agent")

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id or "", context.context_id or "").cancel()
