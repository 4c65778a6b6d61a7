"""netdojo as an OpenEnv environment: one live lab per session, a tool call per step.

`NetdojoEnvironment` is an OpenEnv `Environment` over `NetworkEnvironment`: ``reset(family=...,
level=..., seed=...)`` opens an episode and returns an `EpisodeObservation` (the brief,
constraints, topology and tools); a step is OpenEnv's own `CallToolAction`, answered by a
`ToolCallObservation` with the tool's result or its tool-level error, ``done`` and ``reward``,
or its `ListToolsAction`, answered by the tools. The hidden half never reaches an observation
or the state. The asynchronous `NetworkEnvironment` runs on an event loop of this
environment's own, in a thread, as in `netdojo.servers.gym_env`.

`openenv_app` serves it with OpenEnv's `HTTPEnvServer`. An episode lives on a WebSocket
session (``/ws``), one environment and one lab per connection, torn down when the connection
closes; that is how OpenEnv's clients (`netdojo.servers.openenv_client`) use a server. The
stateless ``/reset``, ``/step`` and ``/state`` routes, which make an environment for one request
and close it at once, are left out (OpenEnv's production mode): each would deploy a lab only
to tear it down.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI
from openenv.core.env_server.http_server import HTTPEnvServer
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.mcp_types import (
    CallToolAction,
    CallToolObservation,
    ListToolsAction,
    ListToolsObservation,
    Tool,
    ToolError,
    ToolErrorType,
)
from openenv.core.env_server.types import (
    Action,
    EnvironmentMetadata,
    Observation,
    ServerMode,
    State,
)
from pydantic import Field
from starlette.websockets import WebSocket, WebSocketDisconnect

from netdojo import __version__
from netdojo.errors import NetdojoError
from netdojo.judges.environment import Ending, NetworkEnvironment, Opener, StepInfo, StepResult
from netdojo.judges.episode import open_episode
from netdojo.reports.records import Budgets
from netdojo.scenarios import registry
from netdojo.scenarios.model import ToolCall
from netdojo.servers.blocking import BlockingEnvironment
from netdojo.tools.calls import listed_tools, unknown
from netdojo.tools.contract import ListedTool
from netdojo.tools.topology import TopologyView

RESET_ARGUMENTS = ("family", "level", "seed")


class EpisodeObservation(Observation):
    """What an agent is handed when an episode opens, as `netdojo.judges.environment`
    hands it: never the instance's name, its seed or anything of its hidden half."""

    episode_id: str = Field(description="random, never derived from the instance")
    brief: str
    constraints: list[str]
    topology: TopologyView
    tools: list[Tool] = Field(description="as an MCP server lists them")


class ToolCallObservation(CallToolObservation):
    """A tool's answer: ``result`` (its structured result) or ``error`` (the tool-level error
    text an MCP client reads, `tool_not_found` for a tool the episode does not offer,
    `execution_error` otherwise), with ``done`` and ``reward``."""

    truncated: bool = Field(default=False, description="ended by a budget, not by submit")
    info: StepInfo


class NetdojoState(State):
    """The open episode's state; ``step_count`` counts the tool-call steps."""

    tool_calls: int = Field(0, description="the calls the tool budget has counted")
    elapsed_s: float = Field(0.0, description="since the episode was handed over, until it ended")
    done: bool = False
    submitted: bool = False
    ending: Ending | None = Field(default=None, description="once the episode has ended")


class NetdojoEnvironment(Environment):
    """One episode at a time on a live lab, as an OpenEnv environment.

    ``family`` and ``level`` are the instances `reset` opens unless it is given others;
    ``budgets`` and ``shaped`` are as for `NetworkEnvironment`, and so is ``opener``.
    Sessions share nothing (each has its own lab), so a server may run several at once.
    """

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(
        self,
        family: str = "static-routing",
        level: int = 1,
        *,
        budgets: Budgets | None = None,
        shaped: bool = False,
        opener: Opener = open_episode,
    ) -> None:
        super().__init__()
        self.family = family
        self.level = level
        self._listed = family  # whose tools a ListToolsAction lists: the last episode's family
        self.environment = NetworkEnvironment(budgets, shaped=shaped, opener=opener)
        self._blocking = BlockingEnvironment(lambda: self.environment)
        self._run = self._blocking.run

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        family: str | None = None,
        level: int | None = None,
        **kwargs: Any,
    ) -> EpisodeObservation:
        """Open a fresh instance of ``family`` at ``level`` (the environment's unless given),
        seed ``seed`` (drawn when None). ``episode_id`` is not used: an episode's id is random,
        given in the observation."""
        if kwargs:
            raise NetdojoError(
                f"unknown reset arguments {sorted(kwargs)}; they are {', '.join(RESET_ARGUMENTS)}"
            )
        chosen = self.family if family is None else family
        opened = self._run(
            self.environment.reset, chosen, self.level if level is None else level, seed
        )
        self._listed = chosen
        return EpisodeObservation(
            episode_id=opened.episode_id,
            brief=opened.brief,
            constraints=opened.constraints,
            topology=opened.topology,
            tools=[_tool(listed) for listed in opened.tools],
        )

    def step(
        self, action: Action, timeout_s: float | None = None, **kwargs: Any
    ) -> ToolCallObservation | ListToolsObservation:
        """Call one tool, or list the tools. Whatever the call, the answer is a result or a
        tool-level error. ``timeout_s`` is not used: the episode's time budget bounds a step."""
        if isinstance(action, ListToolsAction):
            tools = [_tool(listed) for listed in listed_tools(registry.family(self._listed).tools)]
            return ListToolsObservation(tools=tools, done=self.environment.state().done)
        if not isinstance(action, CallToolAction):
            raise NetdojoError(f"an action calls or lists tools, not {type(action).__name__}")
        call = ToolCall(tool=action.tool_name, arguments=action.arguments)
        return _answer(call, self._run(self.environment.step, call))

    @property
    def state(self) -> NetdojoState:
        now = self.environment.state()
        return NetdojoState(
            episode_id=now.episode_id,
            step_count=now.steps,
            tool_calls=now.tool_calls,
            elapsed_s=now.elapsed_s,
            done=now.done,
            submitted=now.submitted,
            ending=now.ending,
        )

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name="netdojo",
            description="Live emulated networks to configure and repair, graded by hidden tests.",
            version=__version__,
        )

    def close(self) -> None:
        """Tear the lab down and stop the event loop; closing again does nothing."""
        self._blocking.close()


def _tool(listed: ListedTool) -> Tool:
    return Tool(
        name=listed.name, description=listed.description or "", input_schema=listed.input_schema
    )


def _answer(call: ToolCall, done: StepResult) -> ToolCallObservation:
    error = None
    if done.is_error:
        kind = (
            ToolErrorType.TOOL_NOT_FOUND
            if done.error == unknown(call.tool)
            else ToolErrorType.EXECUTION_ERROR
        )
        error = ToolError(error_type=kind, message=done.error or "")
    return ToolCallObservation(
        tool_name=call.tool,
        result=done.result,
        error=error,
        done=done.done,
        reward=done.reward,
        truncated=done.truncated,
        info=done.info,
    )


def openenv_app(
    environment: Callable[[], NetdojoEnvironment] = NetdojoEnvironment, sessions: int = 1
) -> FastAPI:
    """The OpenEnv server of ``environment`` (a factory: one environment per session), with at
    most ``sessions`` sessions (labs) at once."""
    app = FastAPI(title="netdojo", version=__version__)
    server = HTTPEnvServer(
        environment, CallToolAction, ToolCallObservation, max_concurrent_envs=sessions
    )
    server.register_routes(app, ServerMode.PRODUCTION)
    app.add_exception_handler(WebSocketDisconnect, _closed_by_the_client)
    return app


async def _closed_by_the_client(websocket: WebSocket, exc: Exception) -> None:
    """The session is over: OpenEnv 0.3 closes a connection its client has already closed,
    and the `WebSocketDisconnect` that raises would be logged as an error of the server."""
