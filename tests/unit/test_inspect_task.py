"""The inspect-ai task before any lab: scripted models work episodes of fake labs through
inspect's own loop, and the log holds the judge's reward."""

from __future__ import annotations

import importlib
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspect_ai import eval
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import ChatMessageTool, ModelOutput, ModelUsage, get_model

from netdojo.scenarios.generate import generate
from netdojo.servers.inspect_task import network, seed_list

from .fake_episodes import UNSOLVED, Openings

ROOT = Path(__file__).resolve().parents[2]
MODEL = "mockllm/model"
FAMILY = "static-routing"
ROUTER = next(d.name for d in generate(FAMILY, 1, 1).public.devices if d.role == "router")
LOOK = {"device": ROUTER, "command": "show ip route"}
CHANGE = {"device": ROUTER, "command": "ip link set eth0 up"}


def _said(output: ModelOutput) -> ModelOutput:
    """A scripted output with its usage given: mockllm would count tokens with an encoding
    it downloads."""
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return output


def _call(tool: str, **arguments: Any) -> ModelOutput:
    return _said(ModelOutput.for_tool_call(MODEL, tool, arguments))


def _run(tmp_path: Path, outputs: Any, **task_args: Any) -> EvalLog:
    model = get_model(MODEL, custom_outputs=outputs)
    task = network(FAMILY, 1, seeds=[1], **task_args)
    [log] = eval(task, model=model, log_dir=str(tmp_path), display="none")
    return log


def test_a_scripted_episode_scores_the_judges_reward_in_a_log_that_reads_back(
    tmp_path: Path,
) -> None:
    openings = Openings()
    outputs = [_call("show", **LOOK), _call("execute", **CHANGE), _call("submit", summary="up")]
    log = _run(tmp_path, outputs, opener=openings)
    # inspect prefixes the package's name when it finds netdojo installed (an editable install
    # run from the source folder is found as its egg-info, unprefixed)
    assert log.status == "success" and log.eval.task in ("netdojo/network", "network")
    [episode] = openings.opened
    assert episode.closed == 1
    ran = [argv for _, argv in episode.lab.commands]  # type: ignore[attr-defined]
    assert ran[0][:3] == ["vtysh", "-c", "show ip route"] and ran[-1] == CHANGE["command"].split()
    [sample] = log.samples or []
    score = sample.scores["judged"] if sample.scores else None
    assert score is not None and score.value == 1.0 and score.answer == "up"
    assert score.metadata == {
        "reason": "submitted",
        "outcome": "solved",
        "reward": 1.0,
        "counted": True,
        "targets_passed": 1.0,
        "safe": True,
        "solved": True,
    }
    assert log.results is not None and log.results.scores[0].metrics["mean"].value == 1.0
    assert {m.name for m in log.results.scores[0].metrics.values()} == {"mean", "stderr"}
    assert Path(log.location).is_file()
    again = read_eval_log(log.location)
    assert again.samples and again.samples[0].scores == sample.scores


def test_a_model_that_stops_submitting_nothing_is_submitted_for_and_sees_tool_errors(
    tmp_path: Path,
) -> None:
    openings = Openings([UNSOLVED])
    unknown = {"device": "nowhere", "command": "show ip route"}
    script = iter([_call("show", **unknown)])

    def outputs(*_: Any) -> ModelOutput:
        return next(script, None) or _said(ModelOutput.from_content(MODEL, "no idea"))

    log = _run(tmp_path, outputs, opener=openings, max_tool_calls=3)
    [sample] = log.samples or []
    assert log.status == "success" and sample.limit is not None and sample.limit.type == "message"
    [refused, *_] = [m for m in sample.messages if isinstance(m, ChatMessageTool)]
    assert refused.error is not None and refused.error.message.startswith(
        "Error executing tool show: unknown device 'nowhere'"
    )
    [episode] = openings.opened
    assert episode.closed == 1 and episode.trajectory.submitted == "no idea"
    score = sample.scores["judged"] if sample.scores else None
    assert score is not None and score.value == 0.0 and score.metadata is not None
    assert score.metadata["outcome"] == "unsolved" and score.metadata["reason"] == "submitted"


def test_the_loop_stops_when_the_call_budget_ends_the_episode(tmp_path: Path) -> None:
    outputs = [_call("show", **LOOK), _call("show", **LOOK)]
    log = _run(tmp_path, outputs, opener=Openings(), max_tool_calls=1)
    [sample] = log.samples or []
    assert [m.role for m in sample.messages] == ["system", "user", "assistant", "tool"]
    score = sample.scores["judged"] if sample.scores else None
    assert score is not None and score.metadata is not None
    assert score.metadata["reason"] == "calls" and score.value == score.metadata["reward"]


def test_the_lab_is_torn_down_when_the_sample_fails(tmp_path: Path) -> None:
    openings = Openings()

    def outputs(*_: Any) -> ModelOutput:
        raise RuntimeError("the model went away")

    log = _run(tmp_path, outputs, opener=openings)
    assert log.status == "error"
    assert [episode.closed for episode in openings.opened] == [1]


def test_the_samples_are_seeds_whose_input_is_the_public_half() -> None:
    task = network(family=FAMILY, level=1, seeds="1,2", opener=Openings())
    samples = list(task.dataset)
    assert [s.id for s in samples] == [1, 2]
    for s in samples:
        scenario = generate(FAMILY, 1, int(s.id or 0))
        assert isinstance(s.input, str) and s.input.startswith(scenario.public.brief)
        assert s.metadata == {"family": FAMILY, "level": 1, "seed": s.id}
        hidden = [t.id for t in scenario.hidden.targets + scenario.hidden.guards]
        for secret in [*hidden, scenario.id, FAMILY]:
            assert secret not in s.input


def test_seeds_come_as_python_or_the_command_line_gives_them() -> None:
    given: list[Callable[[], Any]] = [lambda: 7, lambda: "1,2", lambda: ["3", 3, 4]]
    assert [seed_list(g()) for g in given] == [[7], [1, 2], [3, 4]]


def test_inspects_entry_point_names_the_module_that_registers_the_task() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    module = project["entry-points"]["inspect_ai"]["netdojo"]
    assert importlib.import_module(module).network is network
    assert "inspect-ai>=0.3" in project["optional-dependencies"]["inspect"]
    assert "inspect-ai>=0.3" in project["optional-dependencies"]["dev"]
