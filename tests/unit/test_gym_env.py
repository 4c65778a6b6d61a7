"""The Gymnasium adapter before any lab: registration, spaces, actions as JSON text, seeding,
and Gymnasium's own checker over episodes that need no lab."""

from __future__ import annotations

import json
import subprocess
import sys

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

from netdojo.errors import NetdojoError
from netdojo.judges.environment import NetworkEnvironment
from netdojo.scenarios.generate import generate
from netdojo.scenarios.model import ToolCall
from netdojo.servers.gym_env import (
    ENV_ID,
    MAX_OBSERVATION,
    ActionError,
    NetworkEnv,
    as_text,
    parse_action,
)

from .fake_episodes import Openings

SUBMIT = json.dumps({"tool": "submit", "arguments": {"summary": "done"}})


def _env(**options: object) -> NetworkEnv:
    env = NetworkEnv(**options)  # type: ignore[arg-type]
    env.environment = NetworkEnvironment(env.environment.budgets, opener=Openings())
    return env


def test_the_environment_is_registered_with_its_family_and_level_as_arguments() -> None:
    spec = gymnasium.spec(ENV_ID)
    assert spec.entry_point == "netdojo.servers.gym_env:NetworkEnv" and spec.nondeterministic
    env = gymnasium.make(ENV_ID, family="host-config", level=2, max_tool_calls=5)
    assert isinstance(env.unwrapped, NetworkEnv)
    assert (env.unwrapped.family, env.unwrapped.level) == ("host-config", 2)
    assert env.unwrapped.environment.budgets.max_tool_calls == 5
    env.close()
    env.close()


@pytest.mark.parametrize(
    ("action", "call"),
    [
        ('{"tool": "topology", "arguments": {}}', ToolCall(tool="topology", arguments={})),
        ('{"tool": "topology"}', ToolCall(tool="topology", arguments={})),
        ('{"tool": "topology", "arguments": null}', ToolCall(tool="topology", arguments={})),
        (
            '\n{"tool": "show",\n "arguments": {"device": "r1", "command": "show ip route"}}\n',
            ToolCall(tool="show", arguments={"device": "r1", "command": "show ip route"}),
        ),
    ],
)
def test_an_action_is_a_json_tool_call(action: str, call: ToolCall) -> None:
    assert parse_action(action) == call


@pytest.mark.parametrize(
    ("action", "said"),
    [
        ("show ip route", "the action is not JSON"),
        ("", "the action is not JSON"),
        ("[1, 2]", "a JSON object naming a tool"),
        ('{"arguments": {}}', "a JSON object naming a tool"),
        ('{"tool": 7}', "a JSON object naming a tool"),
        ('{"tool": "show", "arguments": ["r1"]}', "the arguments must be a JSON object"),
        ("[" * 100_000, "the action is not JSON"),
    ],
)
def test_an_action_that_is_no_tool_call_is_refused_in_words(action: str, said: str) -> None:
    with pytest.raises(ActionError, match=said):
        parse_action(action)


def test_observations_are_json_text_of_the_observation_space() -> None:
    space = NetworkEnv().observation_space
    text = as_text({"result": {"text": "Ürün\n\ttab \x7f", "n": 1}})
    assert text in space and json.loads(text)["result"]["text"] == "Ürün\n\ttab \x7f"
    huge = as_text({"result": {"text": "x" * MAX_OBSERVATION}})
    assert huge in space and "narrow the call" in json.loads(huge)["error"]


def test_a_bad_action_is_an_error_observation_and_nothing_runs() -> None:
    env = _env()
    env.reset(seed=3)
    observation, reward, terminated, truncated, info = env.step("configure r1 please")
    assert json.loads(observation) == {
        "error": "the action is not JSON (Expecting value: line 1 column 1 (char 0)); "
        'send {"tool": "<name>", "arguments": {...}}'
    }
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info["is_error"] and info["tool_calls"] == 0
    env.close()


def test_seeds_choose_the_instance_and_unseeded_resets_follow_the_generator() -> None:
    env = _env()
    first, info = env.reset(seed=11)
    assert json.loads(first)["brief"] == generate("static-routing", 1, 11).public.brief
    assert "episode_id" not in json.loads(first) and info["episode_id"]
    drawn = env.reset()[0]
    assert env.reset(seed=11)[0] == first and env.reset()[0] == drawn
    other = env.reset(seed=11, options={"family": "host-config"})[0]
    assert json.loads(other)["brief"] == generate("host-config", 1, 11).public.brief
    with pytest.raises(NetdojoError, match=r"unknown reset options \['levle'\]"):
        env.reset(options={"levle": 2})
    env.close()


def test_submit_terminates_with_the_final_reward() -> None:
    env = _env()
    env.reset(seed=1)
    observation, reward, terminated, truncated, info = env.step(SUBMIT)
    assert json.loads(observation)["result"]["accepted"] is True
    assert (terminated, truncated) == (True, False) and info["ending"]["reason"] == "submitted"
    assert reward == info["ending"]["reward"]
    observation, reward, terminated, truncated, info = env.step("not json")
    assert terminated and not truncated and info["ending"]["reason"] == "submitted"
    env.close()


def test_gymnasiums_checker_passes_over_episodes_without_a_lab() -> None:
    env = _env()
    check_env(env, skip_render_check=True)
    env.close()


def test_the_core_never_imports_gymnasium() -> None:
    check = (
        "import sys, netdojo.judges.environment; "
        "print([m for m in sys.modules if m.startswith('gymnasium')])"
    )
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
