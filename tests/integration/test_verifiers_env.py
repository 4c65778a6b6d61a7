"""netdojo's verifiers environment run by verifiers' own `vf-eval`, in the environment that holds
the library (`tests/verifiers_env/env.py`), with a scripted OpenAI-compatible model: the chat
harness lists the episode's tools, calls them on a live lab, and the trace's reward is the final
reward of the episode's verdict."""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any

import anyio
import pytest

from netdojo.judges.reward import final_reward
from netdojo.reports.records import EpisodeRecord
from netdojo.scenarios.generate import generate
from netdojo.servers.briefing import instance_briefing
from tests.llm_fakes import ScriptedLLM, completion, serving, tool_call
from tests.verifiers_env import env as vf_env

pytestmark = pytest.mark.anyio
FAMILY = "capacity-planning"
LEVEL = 1
KEY_VAR = "NETDOJO_SCRIPTED_KEY"


async def _vf_eval(base_url: str, seed: int, out: Path) -> list[dict[str, Any]]:
    """One rollout of the instance by `vf-eval`; the traces of its episodes."""
    python = vf_env.python()
    environ = vf_env.clean_env() | {
        KEY_VAR: "scripted",
        "PATH": f"{python.parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    argv = [
        str(python.parent / "vf-eval"),
        "netdojo-verifiers",
        *("--env.taskset.family", FAMILY, "--env.taskset.level", str(LEVEL)),
        *("--env.taskset.seeds", str(seed), "--env.taskset.records", str(out / "records")),
        *("--model", "scripted", "--client.base-url", base_url, "--client.api-key-var", KEY_VAR),
        *("--output-dir", str(out), "--run.dir", "run", "--no-rich", "--no-push"),
    ]
    with anyio.fail_after(300):
        done = await anyio.run_process(argv, env=environ, check=False, cwd=out)
    assert done.returncode == 0, done.stderr.decode()[-4000:]
    lines = (out / "run" / "traces.jsonl").read_text().splitlines()
    episodes = [json.loads(line) for line in lines if line.strip()]
    return [trace for episode in episodes for trace in episode["traces"]]


def _record(out: Path, trace: dict[str, Any]) -> EpisodeRecord:
    return EpisodeRecord.model_validate_json((out / "records" / f"{trace['id']}.json").read_text())


async def test_a_scripted_model_solves_an_instance_and_earns_the_verdicts_reward(
    tmp_path: Path,
) -> None:
    seed = 1 + secrets.randbelow(10_000)
    solution = generate(FAMILY, LEVEL, seed).hidden.solution
    calls = [
        completion([tool_call(f"c{i}", f"netdojo_{c.tool}", json.dumps(c.arguments))])
        for i, c in enumerate(solution)
    ]
    submit = tool_call("s", "netdojo_submit", json.dumps({"summary": "moved it"}))
    fake = ScriptedLLM([*calls, completion([submit]), completion(content="Submitted.")])
    async with serving(fake) as base_url:
        [trace] = await _vf_eval(base_url, seed, tmp_path)
    offered = {tool["function"]["name"] for tool in fake.requests[0]["tools"]}
    assert {"netdojo_python", "netdojo_submit"} <= offered, offered
    record = _record(tmp_path, trace)
    assert record.outcome == "solved", (seed, record.error)
    assert trace["ok"], trace["errors"]
    assert trace["rewards"]["netdojo"]["score"] == final_reward(record) == 1.0
    assert trace["info"]["netdojo"]["reason"] == "submitted"
    assert len(fake.messages(len(fake.requests) - 1, "tool")) == len(solution) + 1


async def test_a_model_that_stops_without_submitting_is_judged_on_its_last_reply(
    tmp_path: Path,
) -> None:
    seed = 1 + secrets.randbelow(10_000)
    fake = ScriptedLLM([completion(content="I would rather not.")])
    async with serving(fake) as base_url:
        [trace] = await _vf_eval(base_url, seed, tmp_path)
    record = _record(tmp_path, trace)
    assert record.verdict is not None
    assert record.verdict.effort.tool_calls == 1  # the submit made on the model's behalf
    assert trace["info"]["netdojo"]["reason"] == "submitted"
    assert trace["ok"], trace["errors"]
    assert trace["rewards"]["netdojo"]["score"] == final_reward(record)
    assert trace["info"]["netdojo"]["outcome"] == record.outcome
    [user] = fake.messages(0, "user")
    assert instance_briefing(FAMILY, LEVEL, seed) in str(user["content"])
