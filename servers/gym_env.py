"""netdojo as a Gymnasium environment, `netdojo/Network-v0`: one live lab per episode.

Importing this module registers the environment::

    import gymnasium
    import netdojo.servers.gym_env

    env = gymnasium.make("netdojo/Network-v0", family="static-routing", level=1)

Observations and actions are JSON text. The first observation is the episode's brief,
constraints, topology and tools; each step's is the tool's answer, ``{"result": {...}}`` or
``{"error": "..."}``, as the green agent's text mode answers. An action is
``{"tool": "<name>", "arguments": {...}}``; one that is not gets an error observation. The seed
given to `reset` is the instance's seed; without one, the instance is drawn from the
environment's generator (with ``warm``, from the warm pool's, seeded from the environment's
at the first reset). The asynchronous `NetworkEnvironment` runs on an event loop of this
environment's own, in a thread.
"""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
from gymnasium import spaces

from netdojo.errors import NetdojoError
from netdojo.judges.environment import NetworkEnvironment
from netdojo.reports.records import SEED_BOUND, Budgets
from netdojo.scenarios.model import ToolCall
from netdojo.servers.blocking import BlockingEnvironment

ENV_ID = "netdojo/Network-v0"
JSON_TEXT = "".join(map(chr, range(0x20, 0x7F)))
"""The characters of JSON written with every other character escaped (`json.dumps`' default)."""
ACTION_TEXT = JSON_TEXT + "\t\n\r"
MAX_OBSERVATION = 1 << 20
MAX_ACTION = 1 << 17
ACTION_FORM = '{"tool": "<name>", "arguments": {...}}'
OPTIONS = ("family", "level")

Step = tuple[str, float, bool, bool, dict[str, Any]]


class ActionError(NetdojoError):
    """An action that is not a JSON tool call."""


def parse_action(action: str) -> ToolCall:
    """The tool call an action's JSON text asks for; `ActionError` says what is wrong."""
    try:
        given = json.loads(action)
    except (ValueError, RecursionError) as exc:
        raise ActionError(f"the action is not JSON ({exc}); send {ACTION_FORM}") from None
    if not isinstance(given, dict) or not isinstance(given.get("tool"), str):
        raise ActionError(f"the action must be a JSON object naming a tool: {ACTION_FORM}")
    arguments = given.get("arguments")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ActionError(f"the arguments must be a JSON object: {ACTION_FORM}")
    return ToolCall(tool=given["tool"], arguments=arguments)


def as_text(value: Any) -> str:
    """An observation as text of the observation space: JSON, within its length."""
    text = json.dumps(value, separators=(",", ":"))
    if len(text) > MAX_OBSERVATION:
        error = f"the answer has {len(text)} characters, over {MAX_OBSERVATION}; narrow the call"
        text = json.dumps({"error": error})
    return text


class NetworkEnv(gym.Env[str, str]):
    """A live network task as a Gymnasium environment.

    ``family`` and ``level`` choose the instances (``reset(options={"family": ..., "level":
    ...})`` chooses another for one episode); ``max_tool_calls`` and ``time_budget_s`` are the
    episode's budgets, ``shaped`` turns on the shaped reward (`netdojo.judges.reward`) and
    ``warm`` keeps that many episodes opening ahead (`netdojo.judges.pool`).
    An episode terminates when the agent submits and is truncated when a budget is spent.
    """

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012  (Gymnasium's own attribute)

    def __init__(
        self,
        family: str = "static-routing",
        level: int = 1,
        *,
        max_tool_calls: int = 60,
        time_budget_s: float = 600.0,
        shaped: bool = False,
        warm: int = 0,
    ) -> None:
        self.family = family
        self.level = level
        self.observation_space = spaces.Text(MAX_OBSERVATION, charset=JSON_TEXT)
        self.action_space = spaces.Text(MAX_ACTION, charset=ACTION_TEXT)
        budgets = Budgets(max_tool_calls=max_tool_calls, time_budget_s=time_budget_s)
        self.environment = NetworkEnvironment(budgets, shaped=shaped, warm=warm)
        self._blocking = BlockingEnvironment(lambda: self.environment, on_start=self._seed_pool)
        self._run = self._blocking.run

    def _seed_pool(self) -> None:
        if self.environment.warm:  # the pool draws the instances, seeded from this generator
            self.environment.warm_seed = int(self.np_random.integers(SEED_BOUND))

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        chosen = options or {}
        unknown = sorted(set(chosen) - set(OPTIONS))
        if unknown:
            raise NetdojoError(f"unknown reset options {unknown}; options are family and level")
        family = chosen.get("family", self.family)
        level = chosen.get("level", self.level)
        instance = self._instance(seed)
        observation = self._run(self.environment.reset, family, level, instance)
        shown = observation.model_dump(mode="json", exclude={"episode_id"})
        warm = self.environment.state().warm
        return as_text(shown), {"episode_id": observation.episode_id, "warm": warm}

    def _instance(self, seed: int | None) -> int | None:
        """The instance's seed: given, or drawn here; drawn by the warm pool when warm."""
        if seed is not None:
            return seed
        if self.environment.warm:
            return None
        return int(self.np_random.integers(SEED_BOUND))

    def step(self, action: str) -> Step:
        try:
            call = parse_action(action)
        except ActionError as exc:
            return self._refused(str(exc))
        done = self._run(self.environment.step, call)
        answer = {"error": done.error} if done.is_error else {"result": done.result}
        info = {"is_error": done.is_error, **done.info.model_dump(mode="json")}
        return as_text(answer), done.reward, done.done and not done.truncated, done.truncated, info

    def _refused(self, error: str) -> Step:
        """The step of an action that is no tool call: nothing runs, the episode is as it was."""
        state = self.environment.state()
        ending = state.ending
        info = {
            "is_error": True,
            "tool_calls": state.tool_calls,
            "changed_state": False,
            "ending": ending.model_dump(mode="json") if ending else None,
        }
        submitted = ending is not None and ending.reason == "submitted"
        truncated = ending is not None and not submitted
        return as_text({"error": error}), 0.0, submitted, truncated, info

    def close(self) -> None:
        """Tear the lab down and stop the event loop; closing again does nothing."""
        self._blocking.close()
        super().close()


if ENV_ID not in gym.registry:
    gym.register(id=ENV_ID, entry_point=f"{__name__}:NetworkEnv", nondeterministic=True)
