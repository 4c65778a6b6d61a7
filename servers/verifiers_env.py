"""netdojo as a Prime Intellect `verifiers` environment: a taskset of instances and the env that
runs each on a live lab, for multi-turn tool use.

Installed with the ``verifiers`` extra, verifiers finds both by the taskset id
``netdojo-verifiers``, the top-level module `netdojo_verifiers` that exports them::

    vf-eval netdojo-verifiers --env.taskset.family static-routing --env.taskset.level 1 ...

A task is one seed of the family and level; its prompt is the public briefing, and the family,
level and seed ride in its data, which the model never sees. `NetdojoEnv` opens the task's
episode with `NetworkEnvironment`, serves the episode's own tools to the agent as an MCP server
on a loopback port (every call a step), runs the agent, and records the judge's final reward on
the trace as ``netdojo``, submitting the agent's last reply as its summary when the agent
stopped without a submit. The lab is torn down when the episode ends, however it ends.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import verifiers.v1 as vf
from mcp.server import MCPServer
from mcp.types import CallToolResult, TextContent
from mcp.types import Tool as MCPTool
from pydantic import Field
from verifiers.v1.envs.single_agent import SingleAgentEnvConfig
from verifiers.v1.harnesses.null import NullHarnessConfig
from verifiers.v1.mcp.launch import SharedToolServer
from verifiers.v1.runtimes import SubprocessConfig

from netdojo.errors import NetdojoError
from netdojo.judges.environment import Ending, NetworkEnvironment
from netdojo.reports.records import Budgets
from netdojo.scenarios.model import ToolCall
from netdojo.servers.briefing import instance_briefing
from netdojo.servers.serving import free_port, serve_uvicorn
from netdojo.tools.contract import ListedTool

SERVER = "netdojo"
"""The tool server's name: the agent's tools are ``netdojo_<tool>`` (``netdojo_submit``)."""
REWARD = "netdojo"
SUBMIT = "submit"
SUMMARY_CHARS = 4000
"""How much of the last reply becomes the summary of a submit made on the agent's behalf."""
SYSTEM_PROMPT = (
    "You work on a live network through the tools you are given; each answers with JSON or "
    "an error. The episode ends when you call netdojo_submit, or when its budget of tool "
    "calls or time is spent."
)


class InstanceData(vf.TaskData):
    """One instance: the prompt is its briefing; family, level and seed are never shown."""

    family: str
    level: int
    seed: int


class NetdojoTask(vf.Task[InstanceData]):
    """An instance of a family; its reward is recorded by `NetdojoEnv` from the verdict."""


class NetdojoConfig(vf.TasksetConfig):
    family: str = "static-routing"
    """Any family of the catalogue."""
    level: int = 1
    seeds: list[int] = Field(default_factory=lambda: [1, 2, 3])
    """The instances, one task each."""
    max_tool_calls: int = 60
    time_budget_s: float = 600.0
    records: Path | None = None
    """A folder for each ended episode's record (verdict and timings, as in ``results.json``), as
    ``<trace id>.json``: for evaluation, never for the agent."""


class NetdojoTaskset(vf.Taskset[NetdojoTask, NetdojoConfig]):
    def load(self) -> Iterator[NetdojoTask]:
        config = self.config
        for idx, seed in enumerate(dict.fromkeys(config.seeds)):
            data = InstanceData(
                idx=idx,
                name=f"{config.family}/{config.level}/{seed}",
                prompt=instance_briefing(config.family, config.level, seed),
                system_prompt=SYSTEM_PROMPT,
                family=config.family,
                level=config.level,
                seed=seed,
            )
            yield NetdojoTask(data, config.task)


class NetdojoEnvConfig(SingleAgentEnvConfig):
    agent: vf.AgentConfig = vf.AgentConfig(
        harness=NullHarnessConfig(id="null"), runtime=SubprocessConfig()
    )
    """The one seat: verifiers' plain chat loop with the episode's tools, on this machine (the
    tools listen on loopback)."""


class EpisodeTools(MCPServer):
    """The episode's tools as an MCP server: listed as the observation lists them, each call
    one step, answered with the structured result or the tool-level error."""

    def __init__(self, env: NetworkEnvironment, tools: list[ListedTool]) -> None:
        super().__init__(SERVER)
        self.env = env
        self.tools = tools

    async def list_tools(self) -> list[MCPTool]:
        return [
            MCPTool(name=tool.name, description=tool.description, input_schema=tool.input_schema)
            for tool in self.tools
        ]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Any = None
    ) -> CallToolResult:
        step = await self.env.step(ToolCall(tool=name, arguments=arguments))
        if step.is_error:
            text = step.error or f"{name} failed"
            return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
        result = step.result or {}
        text = json.dumps(result)
        return CallToolResult(
            content=[TextContent(type="text", text=text)], structured_content=result
        )


@asynccontextmanager
async def served(tools: EpisodeTools) -> AsyncIterator[str]:
    """Serve the tools on a free loopback port, under a random path; yields their MCP URL."""
    path = f"/{secrets.token_urlsafe(16)}/mcp"
    app = tools.streamable_http_app(
        streamable_http_path=path, json_response=True, stateless_http=True
    )
    port = free_port()
    async with serve_uvicorn(app, "127.0.0.1", port):
        yield f"http://127.0.0.1:{port}{path}"


async def ended(env: NetworkEnvironment, reply: str) -> Ending:
    """How the episode ended; when the agent stopped without a submit, its last reply is
    submitted as the summary on its behalf first."""
    ending = env.state().ending
    if ending is not None:
        return ending
    step = await env.step(ToolCall(tool=SUBMIT, arguments={"summary": reply[:SUMMARY_CHARS]}))
    if step.info.ending is None:
        raise NetdojoError(f"submitting on the agent's behalf failed: {step.error}")
    return step.info.ending


class NetdojoEnv(vf.Env[NetdojoEnvConfig]):
    """Each task on a fresh live lab: the agent works with the episode's tools over MCP, and
    the trace's reward is the judge's final reward."""

    async def run(self, task: vf.Task, agents: vf.Agents) -> None:
        data = task.data
        if not isinstance(data, InstanceData):
            raise TypeError(f"a netdojo task carries InstanceData, not {type(data).__name__}")
        config = self.taskset.config
        if not isinstance(config, NetdojoConfig):
            raise TypeError(f"NetdojoEnv plays a NetdojoTaskset, not {type(self.taskset)}")
        budgets = Budgets(max_tool_calls=config.max_tool_calls, time_budget_s=config.time_budget_s)
        async with NetworkEnvironment(budgets) as env:
            observation = await env.reset(data.family, data.level, data.seed)
            async with served(EpisodeTools(env, observation.tools)) as url:
                tools = {SERVER: SharedToolServer(url=url, local=True, external=True)}
                trace = await agents.agent.run(task, tools=tools)
            ending = await ended(env, trace.last_reply or "")
            trace.record_reward(REWARD, ending.reward)
            trace.info[REWARD] = ending.model_dump(mode="json")
            if config.records is not None and env.record is not None:
                config.records.mkdir(parents=True, exist_ok=True)
                path = config.records / f"{trace.id}.json"
                path.write_text(env.record.model_dump_json())
