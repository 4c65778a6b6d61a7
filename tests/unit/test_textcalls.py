"""Tool calls written as text: each form, broken JSON, and mixtures."""

from __future__ import annotations

import json

import pytest

from netdojo.clients.textcalls import Parsed, format_results, is_answer, parse

KNOWN = {"topology", "show", "submit"}
SHOW = {"device": "r1", "command": "show ip route"}
SHOW_CALL = json.dumps({"name": "show", "arguments": SHOW})


def calls(parsed: Parsed) -> list[tuple[str, dict[str, object]]]:
    return [(call.name, call.arguments) for call in parsed.calls]


@pytest.mark.parametrize(
    ("text", "form"),
    [
        ('Let me look.\n```json\n{"name": "show", "arguments": %s}\n```', "fenced"),
        ('```\n{"name": "show", "arguments": %s}\n```', "fenced"),
        ('<tool_call>\n{"name": "show", "arguments": %s}\n</tool_call>', "tagged"),
        ('<tool_call>\n{"name": "show", "arguments": %s}', "tagged"),  # stopped before the tag
        ('{"name": "show", "arguments": %s}', "json"),
        ('{\n  "name": "show",\n  "arguments": %s\n}', "json"),
        ('{"name": "show", "parameters": %s}', "json"),  # Llama 3
        ('<|python_tag|>{"name": "show", "parameters": %s}<|eom_id|>', "python_tag"),
        ('[TOOL_CALLS] [{"name": "show", "arguments": %s}]', "mistral"),
        ("[TOOL_CALLS]show[ARGS]%s", "mistral"),
        ('{"type": "function", "function": {"name": "show", "arguments": %s}}', "json"),
        ('{"tool": "show", "arguments": %s}', "json"),
    ],
)
def test_each_form_gives_the_call(text: str, form: str) -> None:
    parsed = parse(text % json.dumps(SHOW), KNOWN)

    assert parsed.form == form
    assert calls(parsed) == [("show", SHOW)]
    assert parsed.malformed == []


def test_arguments_as_a_json_string_are_decoded() -> None:
    text = json.dumps({"name": "show", "arguments": json.dumps(SHOW)})
    assert calls(parse(text, KNOWN)) == [("show", SHOW)]
    assert calls(parse('{"name": "topology", "arguments": ""}', KNOWN)) == [("topology", {})]


def test_python_literals_are_read() -> None:
    parsed = parse("<tool_call>{'name': 'show', 'arguments': {'device': 'r1'}}</tool_call>")
    assert calls(parsed) == [("show", {"device": "r1"})]
    parsed = parse("{'name': 'topology', 'arguments': {}}", KNOWN)
    assert calls(parsed) == [("topology", {})]


def test_one_object_per_line_gives_each_call_in_order() -> None:
    text = '{"name": "topology", "arguments": {}}\n' + SHOW_CALL
    assert calls(parse(text, KNOWN)) == [("topology", {}), ("show", SHOW)]


def test_several_tags_and_a_mistral_list_give_every_call() -> None:
    tagged = (
        '<tool_call>{"name": "topology", "arguments": {}}</tool_call>'
        f"<tool_call>{SHOW_CALL}</tool_call>"
    )
    assert calls(parse(tagged)) == [("topology", {}), ("show", SHOW)]
    mistral = '[TOOL_CALLS] [{"name": "topology", "arguments": {}}, {"name": "submit"}]</s>'
    assert calls(parse(mistral)) == [("topology", {}), ("submit", {})]
    python_tag = '<|python_tag|>{"name": "topology", "parameters": {}}; {"name": "submit"}'
    assert calls(parse(python_tag)) == [("topology", {}), ("submit", {})]


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>{"name": "show", "arguments": {"device": </tool_call>',
        '```json\n{"name": "show", "arguments": {"device": "r1"}\n```',
        '{"name": "show", "arguments": {"device": "r1"}',
        'I will now run {"name": "show", "arguments": {"device": "r1",} and see.',
        '[TOOL_CALLS] [{"name": "show", "arguments": {]',
        '<|python_tag|>{"name": "show", "parameters": {"device"}}',
    ],
)
def test_broken_json_is_a_malformed_call_with_the_reason(text: str) -> None:
    parsed = parse(text, KNOWN)

    assert parsed.calls == []
    [malformed] = parsed.malformed
    assert malformed.error.startswith("not valid JSON (")
    assert "line 1 column" in malformed.error or "line 2 column" in malformed.error


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('<tool_call>{"arguments": {}}</tool_call>', 'the call has no "name"'),
        ('<tool_call>"topology"</tool_call>', "expected an object with a name and arguments"),
        (
            '<tool_call>{"name": "show", "arguments": [1]}</tool_call>',
            "must be an object, not list",
        ),
        ('{"name": "show", "arguments": "{device: r1}"}', "are not one JSON object"),
    ],
)
def test_a_call_that_decodes_but_is_not_a_call_is_malformed(text: str, error: str) -> None:
    [malformed] = parse(text, KNOWN).malformed
    assert error in malformed.error


def test_mixtures_keep_the_order_written_and_the_first_form() -> None:
    text = (
        'First the map:\n```json\n{"name": "topology", "arguments": {}}\n```\n'
        f"<tool_call>{SHOW_CALL}</tool_call>\n"
        '<tool_call>{"name": "show", "arguments": {"device": </tool_call>\n'
        '{"name": "submit", "arguments": {"summary": "done"}}'
    )
    parsed = parse(text, KNOWN)

    assert parsed.form == "fenced"
    assert calls(parsed) == [("topology", {}), ("show", SHOW), ("submit", {"summary": "done"})]
    assert len(parsed.malformed) == 1


def test_a_fence_inside_a_tag_counts_once() -> None:
    text = '<tool_call>\n```json\n{"name": "topology", "arguments": {}}\n```\n</tool_call>'
    parsed = parse(text, KNOWN)
    assert parsed.form == "tagged"
    assert len(parsed.malformed) == 1  # the fence is not JSON; the model is told so


@pytest.mark.parametrize(
    "text",
    [
        "The fault was on r1: eth1 was down. I brought it up.",
        'r1 lists {"name": "r1", "role": "router"} among its neighbours.',
        "```bash\nip link set eth1 up\n```\nThat fixed it.",
        '```json\n{"routes": 3}\n```\nThree routes are in place.',
        '<think>{"name": "topology", "arguments": {}}</think>Nothing to do.',
        "Use [1] and {braces} freely.",
    ],
)
def test_prose_and_data_that_call_nothing_give_no_call(text: str) -> None:
    parsed = parse(text, KNOWN)
    assert not parsed.found
    assert is_answer(text)


def test_a_bare_object_counts_if_it_names_a_known_tool_or_carries_arguments() -> None:
    assert calls(parse('{"name": "topology"}', KNOWN)) == [("topology", {})]
    assert calls(parse('{"name": "invented", "arguments": {}}', KNOWN)) == [("invented", {})]
    assert not parse('{"name": "invented"}', KNOWN).found


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   \n",
        '{"status": "done"}',
        "[1, 2]",
        "```json\n{}\n```",
        '<tool_call>{"name": "x"}',
        "[TOOL_CALLS]",
        "<think>all fine</think>",
        "...",
    ],
)
def test_empty_json_looking_or_marked_text_is_not_an_answer(text: str) -> None:
    assert not is_answer(text)


def test_results_go_back_in_the_shape_of_the_calls() -> None:
    results = [("topology", {"devices": []}), ("show", "error: unknown device")]
    lines = ['{"name": "topology", "content": {"devices": []}}']
    lines.append('{"name": "show", "content": "error: unknown device"}')

    assert format_results("tagged", results) == "\n".join(
        f"<tool_response>\n{line}\n</tool_response>" for line in lines
    )
    assert format_results("fenced", results) == "```json\n" + "\n".join(lines) + "\n```"
    assert format_results("json", results) == "\n".join(lines)
    assert format_results("python_tag", results) == "\n".join(lines)
    mistral = format_results("mistral", results)
    assert mistral.startswith("[TOOL_RESULTS] [") and mistral.endswith("] [/TOOL_RESULTS]")
    assert json.loads(mistral[len("[TOOL_RESULTS] ") : -len(" [/TOOL_RESULTS]")]) == [
        {"name": name, "content": content} for name, content in results
    ]
