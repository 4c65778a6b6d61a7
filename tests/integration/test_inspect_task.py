"""The inspect-ai task on live labs: the registered task through inspect's command line, and a
scripted model replaying the reference solution through inspect's Python API.

A planning model's lab deploys in well under a second, so the family whose labs are quickest
carries them (the task knows no family)."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

from inspect_ai import eval
from inspect_ai.log import read_eval_log
from inspect_ai.model import ChatMessageTool, ModelOutput, ModelUsage, get_model

import netdojo.servers.inspect_task  # noqa: F401  (registers netdojo/network)
from netdojo.scenarios.generate import generate
from netdojo.scenarios.model import ToolCall
from netdojo.servers.inspect_task import network

INSPECT = str(Path(sys.executable).parent / "inspect")
MODEL = "mockllm/model"
FAMILY = "capacity-planning"


def test_inspect_eval_finds_the_task_and_logs_the_judges_score(tmp_path: Path) -> None:
    found = [ep.value for ep in entry_points(group="inspect_ai") if ep.name == "netdojo"]
    assert found, "inspect's entry point is missing: reinstall netdojo (pip install -e '.[dev]')"
    # Two messages (the instructions and the brief) are the limit: the sample reaches it at the
    # model's first turn, so it is submitted for with an empty summary and judged. mockllm's own
    # answer would need a tokenizer it downloads.
    arguments = ["-T", f"family={FAMILY}", "-T", "level=1", "-T", "seeds=1"]
    options = ["--message-limit", "2", "--log-dir", str(tmp_path), "--display", "none"]
    command = [INSPECT, "eval", "netdojo/network", *arguments, "--model", MODEL, *options]
    # outside the source folder, whose egg-info would hide the editable install from inspect
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    [path] = tmp_path.glob("*.eval")
    log = read_eval_log(str(path))
    assert log.status == "success" and log.eval.task == "netdojo/network"
    [sample] = log.samples or []
    score = sample.scores["judged"] if sample.scores else None
    assert score is not None and score.value == 0.0 and score.metadata is not None
    assert score.metadata["reason"] == "submitted" and score.metadata["outcome"] == "unsolved"


def test_a_model_replaying_the_reference_solution_scores_one(tmp_path: Path) -> None:
    solution = generate(FAMILY, 1, 1).hidden.solution
    calls = [*solution, ToolCall(tool="submit", arguments={"summary": "applied the plan"})]
    outputs = [ModelOutput.for_tool_call(MODEL, c.tool, c.arguments) for c in calls]
    for output in outputs:  # given, so that mockllm counts no tokens with a downloaded encoding
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    model = get_model(MODEL, custom_outputs=outputs)
    task = network(FAMILY, 1, seeds=[1])
    [log] = eval(task, model=model, log_dir=str(tmp_path), display="none")
    assert log.status == "success" and Path(log.location).is_file()
    [sample] = log.samples or []
    answers = [m for m in sample.messages if isinstance(m, ChatMessageTool)]
    assert len(answers) == len(calls) and not [m.error for m in answers if m.error]
    score = sample.scores["judged"] if sample.scores else None
    assert score is not None and score.value == 1.0 and score.metadata is not None
    assert score.metadata["outcome"] == "solved" and score.metadata["solved"] is True
