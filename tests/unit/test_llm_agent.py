"""The LLM agent loop against a scripted OpenAI-compatible server over real HTTP and an
in-process MCP server: native calls, calls written as text, replies that are neither, errors."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from mcp import Client

from netdojo.clients import llm, llm_endpoint
from netdojo.clients.llm import LLMAgent, LLMConfig, LLMError
from netdojo.clients.session import ToolSession
from netdojo.tools.contract import EpisodeView
from netdojo.tools.trajectory import Usage
from tests.llm_fakes import (
    HOLD,
    TOPOLOGY,
    TRICKLE,
    ScriptedLLM,
    Step,
    completion,
    fake_lab,
    free_port,
    serving,
    tool_call,
)

pytestmark = pytest.mark.anyio

BRIEF = "h1 cannot reach h2; find and fix the fault."


@dataclass
class Run:
    summary: str | None
    error: LLMError | None
    agent: LLMAgent
    fake: ScriptedLLM
    lab_calls: list[str]


async def run_agent(script: Sequence[Step], **config: Any) -> Run:
    """One episode; an `LLMError` is returned, not raised, to keep it out of exception groups."""
    fake, lab_calls = ScriptedLLM(script), list[str]()
    summary, error = None, None
    async with serving(fake) as base_url, Client(fake_lab(lab_calls)) as client:
        agent = LLMAgent(LLMConfig(base_url=base_url, model="test-model", **config))
        try:
            summary = await agent(ToolSession(client), EpisodeView(brief=BRIEF))
        except LLMError as exc:
            error = exc
    return Run(summary, error, agent, fake, lab_calls)


def text_reply(content: str) -> Step:
    return completion(content=content, usage=(10, 5))


async def test_loop_runs_tools_sends_results_back_and_returns_the_submit_summary() -> None:
    script = [
        completion([tool_call("call_topo", "topology", "{}")], usage=(100, 10)),
        completion([tool_call("call_show", "show", '{"device": "r1",')], usage=(200, 20)),
        completion([tool_call("call_done", "submit", '{"summary": "fixed r1"}')], usage=(300, 30)),
    ]
    run = await run_agent(script, api_key="sk-test", max_tokens=300)
    fake = run.fake

    assert run.summary == "fixed r1"
    assert run.lab_calls == ["topology"]  # the bad call never ran; submit is left to the caller
    assert len(fake.requests) == 3
    first = fake.requests[0]
    assert first["model"] == "test-model"
    assert (first["temperature"], first["max_tokens"], first["tool_choice"]) == (0.0, 300, "auto")
    assert fake.messages(0, "user") == [{"role": "user", "content": BRIEF}]
    assert "submit" in fake.messages(0, "system")[0]["content"]
    functions = {tool["function"]["name"]: tool for tool in first["tools"]}
    assert set(functions) == {"topology", "show", "ping", "submit"}
    assert functions["show"]["type"] == "function"
    assert functions["show"]["function"]["description"] == "Read state."
    parameters = functions["show"]["function"]["parameters"]
    assert parameters["required"] == ["device", "command"]
    assert "title" not in json.dumps(parameters)

    [topology_result] = fake.messages(1, "tool")
    assert topology_result["tool_call_id"] == "call_topo"
    assert json.loads(topology_result["content"]) == TOPOLOGY
    assistant = fake.messages(1, "assistant")[0]
    assert assistant["tool_calls"][0]["id"] == "call_topo"

    bad_arguments = fake.messages(2, "tool")[-1]
    assert bad_arguments["tool_call_id"] == "call_show"
    assert "not valid JSON" in bad_arguments["content"]
    assert '"device"' in bad_arguments["content"]  # the schema to follow

    assert run.agent.usage == Usage(prompt_tokens=600, completion_tokens=60, turns=3)
    assert all(h["authorization"] == "Bearer sk-test" for h in fake.headers)
    record = run.agent.record
    assert [turn.form for turn in record.turns] == ["native"] * 3
    assert record.turns[1].tool_calls[0].arguments == '{"device": "r1",'
    assert [(r.name, r.reason) for r in record.rejected] == [("show", "malformed")]


async def test_an_answer_in_prose_is_the_summary_and_no_key_sends_no_header() -> None:
    run = await run_agent([completion(content="nothing to fix", usage=(5, 1))])

    assert run.summary == "nothing to fix"
    assert run.agent.usage == Usage(prompt_tokens=5, completion_tokens=1, turns=1)
    assert "authorization" not in run.fake.headers[0]


FORMS = {
    "fenced": (
        'I will look at the topology first.\n```json\n{"name": "topology", "arguments": {}}\n```',
        '```json\n{"name": "submit", "arguments": {"summary": "fixed r1"}}\n```',
    ),
    "tagged": (
        '<tool_call>\n{"name": "topology", "arguments": {}}\n</tool_call>',
        '<tool_call>\n{"name": "submit", "arguments": {"summary": "fixed r1"}}\n</tool_call>',
    ),
    "json": (
        '{"name": "topology", "arguments": {}}',
        '{"name": "submit", "parameters": {"summary": "fixed r1"}}',
    ),
    "python_tag": (
        '<|python_tag|>{"name": "topology", "parameters": {}}',
        '<|python_tag|>{"name": "submit", "parameters": {"summary": "fixed r1"}}',
    ),
    "mistral": (
        '[TOOL_CALLS] [{"name": "topology", "arguments": {}}]',
        '[TOOL_CALLS] [{"name": "submit", "arguments": {"summary": "fixed r1"}}]',
    ),
}
RESULT_SHAPES = {
    "fenced": "```json\n",
    "tagged": "<tool_response>\n",
    "json": '{"name": "topology"',
    "python_tag": '{"name": "topology"',
    "mistral": "[TOOL_RESULTS] [",
}


@pytest.mark.parametrize("form", list(FORMS))
async def test_calls_written_as_text_run_and_are_answered_in_their_shape(form: str) -> None:
    call, submit = FORMS[form]
    run = await run_agent([text_reply(call), text_reply(submit)])

    assert run.summary == "fixed r1"
    assert run.lab_calls == ["topology"]
    history = run.fake.requests[1]["messages"]
    assert history[-2] == {"role": "assistant", "content": call}
    answer = history[-1]
    assert answer["role"] == "user"
    assert answer["content"].startswith(RESULT_SHAPES[form])
    assert json.dumps(TOPOLOGY) in answer["content"]
    record = run.agent.record
    assert [turn.form for turn in record.turns] == [form, form]
    assert [call.name for call in record.turns[0].tool_calls] == ["topology"]
    assert record.usage == Usage(prompt_tokens=20, completion_tokens=10, turns=2)


async def test_several_text_calls_in_one_reply_run_in_order() -> None:
    reply = (
        '<tool_call>{"name": "topology", "arguments": {}}</tool_call>\n'
        '<tool_call>{"name": "show", "arguments": {"device": "r1", "command": "show ip route"}}'
        "</tool_call>"
    )
    run = await run_agent([text_reply(reply), text_reply("The route on r1 was missing; added.")])

    assert run.lab_calls == ["topology", "show"]
    answer = run.fake.requests[1]["messages"][-1]["content"]
    assert answer.count("<tool_response>") == 2
    assert run.summary == "The route on r1 was missing; added."


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("", "Your reply was empty."),
        ('{"status": "done"}', "Your reply called no tool"),
        ("```json\n[1, 2, 3]\n```", "Your reply called no tool"),
    ],
)
async def test_a_reply_that_is_neither_call_nor_answer_is_not_submitted(
    reply: str, problem: str
) -> None:
    run = await run_agent([text_reply(reply), text_reply("Nothing was wrong.")])

    assert run.summary == "Nothing was wrong."
    hint = run.fake.requests[1]["messages"][-1]
    assert hint["role"] == "user"
    assert problem in hint["content"]
    assert '{"name": "submit", "arguments": {"summary":' in hint["content"]
    assert "topology, show, ping, submit" in hint["content"]


async def test_a_reply_cut_at_max_tokens_is_not_the_summary() -> None:
    cut = completion(content="The problem is that r1 has", finish_reason="length")
    run = await run_agent([cut, text_reply("r1 had eth1 down; brought it up.")], max_tokens=7)

    assert run.summary == "r1 had eth1 down; brought it up."
    assert "cut off at 7 tokens" in run.fake.requests[1]["messages"][-1]["content"]


async def test_malformed_text_calls_get_an_error_and_the_valid_ones_run() -> None:
    reply = (
        '<tool_call>{"name": "show", "arguments": {"device": </tool_call>\n'
        '<tool_call>{"name": "topology", "arguments": {}}</tool_call>'
    )
    run = await run_agent([text_reply(reply), text_reply("done: nothing to fix")])

    assert run.lab_calls == ["topology"]
    answer = run.fake.requests[1]["messages"][-1]["content"]
    assert "could not be read: not valid JSON" in answer
    assert [r.reason for r in run.agent.record.rejected] == ["malformed"]
    assert run.summary == "done: nothing to fix"


async def test_an_unknown_tool_is_answered_with_the_valid_ones() -> None:
    script = [
        completion([tool_call("call_1", "ping_all", "{}")]),
        text_reply('{"name": "check_everything", "arguments": {}}'),
        text_reply("gave up"),
    ]
    run = await run_agent(script)

    assert run.lab_calls == []
    [native] = run.fake.messages(1, "tool")
    assert native["content"] == (
        "error: unknown tool 'ping_all'; the tools are: topology, show, ping, submit"
    )
    assert "unknown tool 'check_everything'" in run.fake.requests[2]["messages"][-1]["content"]
    rejected = run.agent.record.rejected
    assert [(r.name, r.reason) for r in rejected] == [
        ("ping_all", "unknown_tool"),
        ("check_everything", "unknown_tool"),
    ]


async def test_unknown_missing_and_mistyped_arguments_are_named_with_the_schema() -> None:
    arguments = json.dumps({"topologyArguments": {}, "source": "h1", "count": "many"})
    script = [
        completion([tool_call("call_1", "ping", arguments)]),
        completion([tool_call("call_2", "submit", '{"summary": "  "}')]),
        completion([tool_call("call_3", "ping", '{"source": "h1", "destination": "h2"}')]),
        completion([tool_call("call_4", "submit", '{"summary": "h2 answers"}')]),
    ]
    run = await run_agent(script)

    assert run.lab_calls == ["ping"]
    error = run.fake.messages(1, "tool")[0]["content"]
    assert "unknown argument 'topologyArguments'" in error
    assert "missing required argument 'destination'" in error
    assert "'count' must be integer" in error
    assert 'Expected arguments: {"properties":' in error
    empty = run.fake.messages(2, "tool")[-1]["content"]
    assert "'summary' must say what you found and changed" in empty
    assert run.summary == "h2 answers"
    reasons = [r.reason for r in run.agent.record.rejected]
    assert reasons == ["invalid_arguments", "invalid_arguments"]


async def test_tool_errors_reach_the_model_and_long_results_are_truncated() -> None:
    script = [
        completion(
            [
                tool_call("call_bad", "show", '{"device": "r9", "command": "show ip route"}'),
                tool_call("call_log", "show", '{"device": "r1", "command": "show log"}'),
            ]
        ),
        completion(content="done"),
    ]
    run = await run_agent(script)

    assert run.summary == "done"
    assert run.lab_calls == ["show", "show"]
    error, log = run.fake.messages(1, "tool")
    assert error["tool_call_id"] == "call_bad"
    assert "unknown device 'r9'; devices: r1, h1" in error["content"]
    assert log["tool_call_id"] == "call_log"
    assert len(log["content"]) < llm.MAX_RESULT_CHARS + 200
    assert "[truncated: 12000 of" in log["content"]


async def test_the_loop_stops_after_max_turns() -> None:
    script = [completion([tool_call(f"call_{i}", "topology", "{}")]) for i in range(3)]
    run = await run_agent(script, max_turns=2)

    assert run.summary == "stopped after 2 turns without calling submit"
    assert len(run.fake.requests) == 2
    assert run.lab_calls == ["topology", "topology"]
    assert run.agent.usage.turns == 2


async def test_an_endpoint_without_tool_support_is_asked_again_with_the_tools_as_text() -> None:
    refused = (400, {"error": {"message": "model llama2 does not support tools"}})
    script = [refused, text_reply('{"name": "topology", "arguments": {}}'), text_reply("ok.")]
    run = await run_agent(script)

    assert run.summary == "ok."
    assert run.lab_calls == ["topology"]
    second = run.fake.requests[1]
    assert "tools" not in second and "tool_choice" not in second
    system = second["messages"][0]["content"]
    assert '{"name": "<tool>", "arguments": {...}}' in system
    assert "- show: Read state." in system


async def test_a_5xx_is_retried_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llm_endpoint, "RETRY_DELAY_S", 0.0)
    overloaded = (503, {"error": {"message": "overloaded"}})

    run = await run_agent([overloaded, completion(content="ok")])
    assert (run.summary, len(run.fake.requests)) == ("ok", 2)

    run = await run_agent([overloaded, overloaded, completion(content="too late")])
    assert "HTTP 503: overloaded" in str(run.error)
    assert len(run.fake.requests) == 2


async def test_a_401_raises_llm_error_with_the_server_message() -> None:
    unauthorized = (401, {"error": {"message": "Incorrect API key provided", "type": "auth"}})
    run = await run_agent([unauthorized, completion(content="never")], api_key="wrong")
    assert run.summary is None
    assert "/v1/chat/completions answered HTTP 401: Incorrect API key provided" in str(run.error)
    assert len(run.fake.requests) == 1  # a 4xx is not retried
    assert run.fake.headers[0]["authorization"] == "Bearer wrong"


@pytest.mark.parametrize("step", [HOLD, TRICKLE])
async def test_a_reply_that_never_ends_times_out_once_and_the_record_stays(step: str) -> None:
    script: list[Step] = [
        completion([tool_call("call_1", "topology", "{}")], usage=(50, 5)),
        step,
        step,
    ]
    run = await run_agent(script, request_timeout_s=1.0)

    assert run.summary is None
    assert "gave no answer within 1 s" in str(run.error)
    assert "\n" not in str(run.error)
    assert len(run.fake.requests) == 2  # not retried into a busy server
    record = run.agent.record
    assert record.usage == Usage(prompt_tokens=50, completion_tokens=5, turns=1)
    assert record.error is not None and "gave no answer within 1 s" in record.error


async def test_an_unreachable_endpoint_raises_llm_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llm_endpoint, "RETRY_DELAY_S", 0.0)
    url = f"http://127.0.0.1:{free_port()}/v1"
    agent = LLMAgent(LLMConfig(base_url=url, model="m"))
    async with Client(fake_lab([])) as client:
        with pytest.raises(LLMError, match=f"cannot reach {url}/chat/completions"):
            await agent(ToolSession(client), EpisodeView(brief=BRIEF))
    assert agent.record.error is not None and "connection refused" in agent.record.error
    assert agent.usage.turns == 0


@pytest.mark.parametrize(
    ("message", "dropped", "added"),
    [
        ('"auto" tool choice requires --enable-auto-tool-choice', "tool_choice", None),
        (
            "Use 'max_completion_tokens' instead of 'max_tokens'",
            "max_tokens",
            "max_completion_tokens",
        ),
    ],
)
async def test_a_refused_request_option_is_dropped_or_renamed(
    message: str, dropped: str, added: str | None
) -> None:
    run = await run_agent([(400, {"error": {"message": message}}), text_reply("fine.")])

    assert run.summary == "fine."
    first, second = run.fake.requests
    assert dropped in first and dropped not in second
    assert "tools" in second
    if added:
        assert second[added] == first[dropped]


async def test_any_other_400_is_an_error_at_once() -> None:
    invalid = (400, {"error": {"message": "Invalid 'messages[1].tool_call_id'"}})
    run = await run_agent([invalid, text_reply("never")])

    assert "HTTP 400: Invalid 'messages[1].tool_call_id'" in str(run.error)
    assert len(run.fake.requests) == 1
