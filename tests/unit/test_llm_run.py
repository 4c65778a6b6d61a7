"""The llm agent in an assessment: its endpoint checked before any lab, its model's record kept
in process and over A2A also when it fails, and the run's turn and token totals."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from a2a.types import Message

from netdojo.cli import main
from netdojo.clients.inprocess import in_process
from netdojo.clients.llm import LLMAgent, LLMConfig
from netdojo.clients.purple import PurpleExecutor
from netdojo.labs import provision, reaper
from netdojo.reports.markdown import summary_markdown
from netdojo.reports.summary import failed_for_the_agent, summarize
from netdojo.servers.purple_link import report_of
from netdojo.tools.contract import HANDOFF_KEY, RESULT_KEY, EpisodeView, Reply
from netdojo.tools.trajectory import ModelRecord, ModelTurn, Trajectory
from tests.llm_fakes import ScriptedLLM, completion, fake_lab, free_port, serving, tool_call
from tests.unit.episodes import record, run
from tests.unit.test_llm_text_mode import Replies, user_message

pytestmark = pytest.mark.anyio
EPISODE = "ep-text-1"
LLM_VARIABLES = ("NETDOJO_LLM_BASE_URL", "NETDOJO_LLM_MODEL", "NETDOJO_LLM_API_KEY")


@pytest.fixture
def no_lab(monkeypatch: pytest.MonkeyPatch) -> None:
    """Preparing a lab (the engine, the image, leftovers) fails the test."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a lab was prepared")

    monkeypatch.setattr(provision, "require", refuse)
    monkeypatch.setattr(reaper, "reap", refuse)


def _netdojo(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[Any, list[str]]:
    """Run the `netdojo` command in this process: its exit code and its lines of stderr."""
    monkeypatch.setattr(sys, "argv", ["netdojo", *args])
    with pytest.raises(SystemExit) as ended:
        main()
    return ended.value.code, capsys.readouterr().err.strip().splitlines()


@pytest.mark.usefixtures("no_lab")
def test_a_missing_setting_is_one_line_and_no_lab(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    for variable in LLM_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    out = tmp_path / "run"
    code, lines = _netdojo(monkeypatch, capsys, "run", "--agent", "llm", "--out", str(out))
    assert code == 2
    assert len(lines) == 1 and "NETDOJO_LLM_BASE_URL" in lines[0], lines
    assert not out.exists(), "nothing is started for an agent that cannot run"


@pytest.mark.usefixtures("no_lab")
@pytest.mark.parametrize("command", [["run", "--agent", "llm"], ["purple", "llm"]])
def test_an_unreachable_endpoint_is_one_line_and_no_lab(
    command: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("NETDOJO_LLM_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")
    monkeypatch.setenv("NETDOJO_LLM_MODEL", "test-model")
    monkeypatch.setenv("NETDOJO_LLM_TIMEOUT_S", "5")
    out = tmp_path / "run"
    extra = ["--out", str(out)] if command[0] == "run" else ["--port", str(free_port())]
    code, lines = _netdojo(monkeypatch, capsys, *command, *extra)
    assert code == 2
    assert len(lines) == 1 and "cannot reach" in lines[0] and "refused" in lines[0], lines
    assert not out.exists()


async def test_in_process_the_record_and_effort_survive_an_endpoint_that_fails() -> None:
    script = [
        completion([tool_call("c1", "topology", "{}")], usage=(11, 3)),
        (500, {"error": {"message": "model crashed"}}),
        (500, {"error": {"message": "model crashed"}}),
    ]
    calls: list[str] = []
    async with serving(ScriptedLLM(script)) as base_url:
        agent = in_process(
            LLMAgent(LLMConfig(base_url=base_url, model="test-model")),
            lambda view: fake_lab(calls),
        )
        report = await agent(EpisodeView(brief="h1 cannot reach h2."))
    assert report.status == "error" and "\n" not in report.detail
    assert report.detail.startswith("LLMError:") and "model crashed" in report.detail
    assert (report.turns, report.tokens_in, report.tokens_out) == (1, 11, 3)
    assert report.model is not None and report.model.error == report.detail
    assert [t.tool_calls[0].name for t in report.model.turns] == ["topology"]
    assert calls == ["topology"], "nothing is submitted for a run that failed"


async def _send(executor: PurpleExecutor, message: Message) -> Message:
    from a2a.server.agent_execution import RequestContext
    from a2a.server.context import ServerCallContext
    from a2a.types import SendMessageRequest

    context = RequestContext(
        ServerCallContext(), SendMessageRequest(message=message), context_id=EPISODE
    )
    replies = Replies()
    await executor.execute(context, replies)  # type: ignore[arg-type]
    [reply] = replies.events
    return reply


async def test_over_a2a_a_failed_run_replies_with_its_error_and_record() -> None:
    script = [
        completion([tool_call("c1", "topology", "{}")], usage=(7, 2)),
        (500, {"error": {"message": "out of memory"}}),
        (500, {"error": {"message": "out of memory"}}),
    ]
    tools = [{"name": "topology", "description": "Devices and links.", "input_schema": {}}]
    async with serving(ScriptedLLM(script)) as base_url:
        config = LLMConfig(base_url=base_url, model="test-model")
        executor = PurpleExecutor(lambda: LLMAgent(config))
        handoff = {HANDOFF_KEY: {"episode_id": EPISODE, "mode": "text", "tools": tools}}
        first = await _send(executor, user_message("h1 cannot reach h2.", handoff))
        result: dict[str, Any] = {"result": {"devices": []}}
        failed = await _send(executor, user_message("{}", {RESULT_KEY: result}))
    assert report_of(first, 1).status == "done"
    report = report_of(failed, 2)
    assert report.status == "error" and "out of memory" in report.detail
    assert "\n" not in report.detail
    assert (report.turns, report.tokens_in, report.tokens_out) == (1, 7, 2)
    assert report.model is not None and len(report.model.turns) == 1


async def test_over_a2a_an_unreachable_tool_endpoint_is_the_agents_error() -> None:
    async with serving(ScriptedLLM([])) as base_url:
        executor = PurpleExecutor(lambda: LLMAgent(LLMConfig(base_url=base_url, model="m")))
        handoff = {
            "episode_id": EPISODE,
            "mode": "mcp",
            "mcp_url": f"http://127.0.0.1:{free_port()}/episodes/x/mcp",
            "token": "a-token-for-a-closed-port",
        }
        with anyio.fail_after(30):
            reply = await _send(executor, user_message("brief", {HANDOFF_KEY: handoff}))
    report = report_of(reply, 1)
    assert report.status == "error" and report.detail and "\n" not in report.detail
    assert "TaskGroup" not in report.detail, "the cause, not its wrapping"


def test_a_reply_reads_back_as_it_was_written() -> None:
    model = ModelRecord()
    model.add(ModelTurn(index=0, text="looking", prompt_tokens=4, completion_tokens=1))
    reply = Reply(error="LLMError: gone", model=model)
    assert Reply.model_validate(reply.data()) == reply


def test_a_trajectory_keeps_the_model_turns_and_redacts_them() -> None:
    model = ModelRecord()
    model.add(ModelTurn(index=0, text="my token is s3cr3t-t0ken"))
    trajectory = Trajectory(episode="e", model=model)
    trajectory.redact("s3cr3t-t0ken")
    assert trajectory.model is not None
    assert trajectory.model.turns[0].text == "my token is [redacted]"
    assert Trajectory.model_validate_json(trajectory.model_dump_json()) == trajectory


def test_the_summary_totals_turns_and_tokens_over_every_judged_episode() -> None:
    spent = [record("a", "solved"), record("b", "agent_error"), record("c", "infra_error")]
    for one, (turns, tokens_in, tokens_out) in zip(
        spent[:2], [(3, 100, 20), (2, 50, 5)], strict=True
    ):
        assert one.verdict is not None
        one.verdict.effort.turns = turns
        one.verdict.effort.tokens_in = tokens_in
        one.verdict.effort.tokens_out = tokens_out
    summary = summarize(spent)
    assert (summary.turns, summary.tokens_in, summary.tokens_out) == (5, 150, 25)
    assert summarize([record("d", "solved")]).tokens_in is None
    markdown = summary_markdown([run("llm", spent)])
    assert "5 turns, 150 tokens in, 25 tokens out" in markdown


def test_a_run_fails_when_every_episode_is_the_agents_error() -> None:
    failed = [record("a", "agent_error"), record("b", "agent_error")]
    assert failed_for_the_agent(failed) == "answer of a"
    assert failed_for_the_agent([*failed, record("c", "unsolved")]) is None
    assert failed_for_the_agent([]) is None
