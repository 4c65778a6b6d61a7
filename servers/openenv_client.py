"""A client of netdojo's OpenEnv server (`netdojo.servers.openenv_env`): OpenEnv's own
`EnvClient`, on one WebSocket session (one episode's lab) per client::

    async with NetdojoEnvClient(base_url="http://127.0.0.1:8000") as env:
        opened = await env.reset(family="static-routing", level=1, seed=7)
        step = await env.call_tool("topology", {})

``.sync()`` gives OpenEnv's synchronous wrapper of it. An error of the server (an unknown
family, a lab that did not come up, a step before any reset) raises `RuntimeError`, as it does
in every OpenEnv client; whatever an agent calls comes back as an observation.
"""

from __future__ import annotations

from typing import Any, TypeAlias

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server.mcp_types import (
    CallToolAction,
    ListToolsAction,
    ListToolsObservation,
    Tool,
)
from openenv.core.env_server.types import Observation

from netdojo.servers.openenv_env import EpisodeObservation, NetdojoState, ToolCallObservation

NetdojoAction: TypeAlias = CallToolAction | ListToolsAction


class NetdojoEnvClient(EnvClient[NetdojoAction, Observation, NetdojoState]):
    """Reset to an `EpisodeObservation`; step to a `ToolCallObservation` (a `CallToolAction`)
    or a `ListToolsObservation` (a `ListToolsAction`); the state is a `NetdojoState`."""

    def _step_payload(self, action: NetdojoAction) -> dict[str, Any]:
        return action.model_dump(mode="json", exclude={"metadata"})

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[Observation]:
        shown = {**payload.get("observation", {}), "done": payload.get("done", False)}
        shown["reward"] = payload.get("reward")
        kind = (
            EpisodeObservation
            if "brief" in shown
            else ToolCallObservation
            if "tool_name" in shown
            else ListToolsObservation
        )
        observation = kind.model_validate(shown)
        return StepResult(observation=observation, reward=observation.reward, done=observation.done)

    def _parse_state(self, payload: dict[str, Any]) -> NetdojoState:
        return NetdojoState.model_validate(payload)

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None = None
    ) -> StepResult[Observation]:
        """Step with a call of tool ``name``."""
        return await self.step(CallToolAction(tool_name=name, arguments=arguments or {}))

    async def list_tools(self) -> list[Tool]:
        """The tools of the open episode's family (of the server's, before any reset)."""
        listed = (await self.step(ListToolsAction())).observation
        assert isinstance(listed, ListToolsObservation)
        return list(listed.tools)
