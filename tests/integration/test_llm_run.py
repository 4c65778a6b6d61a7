"""`netdojo run --agent llm` on a live lab against a scripted model server that writes its tool
calls as text, the way open models without a tool parser do: the calls run, are recorded, and
the model's turns and tokens reach the results."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from netdojo.scenarios.generate import generate
from tests.llm_fakes import ScriptedLLM, completion, serving

pytestmark = pytest.mark.anyio
TOPOLOGY_AS_JSON_BLOCK = '```json\n{"name": "topology", "arguments": {}}\n```'
INSTANCE = ("ospf-adjacency", 1, 3)
ROUTER = next(d.name for d in generate(*INSTANCE).public.devices if d.role == "router")
SHOW_IN_TAGS = (
    f'<tool_call>\n{{"name": "show", "arguments": {{"device": "{ROUTER}", '
    f'"command": "show ip route"}}}}\n</tool_call>'
)
ANSWER = "Read the topology and the routes of one router; changed nothing."


def _script() -> list[Any]:
    """The preflight's short completion, then a call in a fenced block, a call in tags, and the
    final answer."""
    return [
        completion(content="ok", usage=(5, 1)),
        completion(content=TOPOLOGY_AS_JSON_BLOCK, usage=(300, 20)),
        completion(content=SHOW_IN_TAGS, usage=(400, 30)),
        completion(content=ANSWER, usage=(500, 15)),
    ]


async def _netdojo_run(base_url: str, mode: str, out: Path) -> tuple[int, str]:
    env = {**os.environ, "NETDOJO_LLM_BASE_URL": base_url, "NETDOJO_LLM_MODEL": "scripted"}
    family, level, seed = INSTANCE
    argv = [sys.executable, "-m", "netdojo.cli", "run", "--agent", "llm", "--families", family,
            "--levels", str(level), "--seeds", str(seed), "--mode", mode,
            "--out", str(out)]  # fmt: skip
    done = await anyio.run_process(argv, env=env, check=False)
    return done.returncode, (done.stdout + done.stderr).decode(errors="replace")


@pytest.mark.parametrize("mode", ["mcp", "text"])
async def test_text_written_tool_calls_run_and_are_recorded(mode: str, tmp_path: Path) -> None:
    fake = ScriptedLLM(_script(), models=["scripted"])
    async with serving(fake) as base_url:
        code, output = await _netdojo_run(base_url, mode, tmp_path)
    assert code == 0, output
    results = json.loads((tmp_path / "results.json").read_text())
    (episode,) = results["episodes"]
    assert episode["outcome"] == "unsolved", episode
    effort = episode["verdict"]["effort"]
    assert effort["tool_calls"] >= 3 and effort["turns"] == 3
    assert effort["tokens_in"] == 1200 and effort["tokens_out"] == 65
    (path,) = (tmp_path / "trajectories").glob("*.json")
    trajectory = json.loads(path.read_text())
    tools = [step["tool"] for step in trajectory["steps"]]
    assert tools[:2] == ["topology", "show"] and tools[-1] == "submit"
    assert ANSWER in json.dumps(trajectory)
