"""Tool calls a model wrote in its text instead of the API's `tool_calls`.

Many open models, or servers without a tool parser for a model's chat template, return the call
as text, in the shape the model was trained on:

- ``fenced``: a Markdown block, ```` ```json {"name": …, "arguments": {…}} ``` ````
- ``tagged`` (Hermes, Qwen): ``<tool_call>{"name": …, "arguments": {…}}</tool_call>``
- ``python_tag`` (Llama 3): ``<|python_tag|>{"name": …, "parameters": {…}}``
- ``mistral``: ``[TOOL_CALLS] [{"name": …, "arguments": {…}}]`` or ``[TOOL_CALLS]name[ARGS]{…}``
- ``json``: bare objects in the text, one per line or pretty-printed (Llama 3 without its tag)

`parse` finds them (and the attempts whose JSON is broken); `format_results` answers in the
shape the model used; `is_answer` tells a final answer in prose from a reply that is not one.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Collection, Iterator
from typing import Any, Literal

from pydantic import BaseModel, Field

Form = Literal["fenced", "tagged", "python_tag", "mistral", "json"]

NAME_KEYS = ("name", "tool", "tool_name")
ARGUMENT_KEYS = ("arguments", "parameters", "args", "input")
CALL_LANGUAGES = {"", "json", "json5", "tool_call", "tool_calls", "tool_code"}
MARKERS = ("<tool_call>", "</tool_call>", "<|python_tag|>", "[TOOL_CALLS]", "<function")

THINKING = re.compile(r"<think>.*?(?:</think>|$)", re.S)
TAGGED = re.compile(r"<tool_call>(.*?)(?:</tool_call>|(?=<tool_call>)|$)", re.S)
FENCED = re.compile(r"```[ \t]*([\w-]*)[^\n]*\n(.*?)(?:```|$)", re.S)
PYTHON_TAG = re.compile(r"<\|python_tag\|>(.*?)(?:<\|eom_id\|>|<\|eot_id\|>|$)", re.S)
MISTRAL = re.compile(r"\[TOOL_CALLS\](.*?)(?=\[TOOL_CALLS\]|$)", re.S)
MISTRAL_NAMED = re.compile(r"\s*([\w.-]+)\s*\[ARGS\]")
CALL_START = re.compile(r"""\{\s*["'](?:name|tool|tool_name|function)["']\s*:""")


class TextCall(BaseModel):
    """A call found in the text: its tool, its decoded arguments and the text it came from."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    raw: str


class Malformed(BaseModel):
    """An attempt at a call that could not be read, and why."""

    raw: str
    error: str


class Parsed(BaseModel):
    """What a reply's text holds; ``form`` is the shape of the first call or attempt."""

    form: Form | None = None
    calls: list[TextCall] = Field(default_factory=list)
    malformed: list[Malformed] = Field(default_factory=list)

    @property
    def found(self) -> bool:
        return bool(self.calls or self.malformed)


class _Hit(BaseModel):
    start: int
    form: Form
    call: TextCall | None = None
    malformed: Malformed | None = None


def without_thinking(text: str) -> str:
    """The text without the ``<think>`` blocks of reasoning models (drafts are not calls)."""
    return THINKING.sub("", text)


def parse(text: str, known: Collection[str] = ()) -> Parsed:
    """The calls in ``text``, in the order written. A bare JSON object counts as a call if it
    names a tool in ``known`` or carries arguments; inside a call marker every object counts."""
    text = without_thinking(text)
    hits: list[_Hit] = []
    spans: list[tuple[int, int]] = []
    marked: list[tuple[Form, re.Pattern[str]]] = [
        ("mistral", MISTRAL),
        ("python_tag", PYTHON_TAG),
        ("tagged", TAGGED),
    ]
    for form, pattern in marked:
        for match in pattern.finditer(text):
            if _inside(match.start(), spans):
                continue
            spans.append(match.span())
            body = match.group(1)
            decoded = _mistral(body) if form == "mistral" else _decode_all(body)
            hits += _hits(match.start(), form, body, decoded, strict=True, known=known)
    for match in FENCED.finditer(text):
        language, body = match.group(1).lower(), match.group(2).strip()
        if _inside(match.start(), spans) or language not in CALL_LANGUAGES:
            continue
        if not body.startswith(("{", "[")):
            continue
        spans.append(match.span())
        hits += _hits(match.start(), "fenced", body, _decode_all(body), strict=False, known=known)
    hits += _bare(text, spans, known)
    hits.sort(key=lambda hit: hit.start)
    return Parsed(
        form=hits[0].form if hits else None,
        calls=[hit.call for hit in hits if hit.call],
        malformed=[hit.malformed for hit in hits if hit.malformed],
    )


def _inside(position: int, spans: list[tuple[int, int]]) -> bool:
    return any(start <= position < end for start, end in spans)


Decoded = tuple[list[Any], str | None]


def _hits(
    start: int, form: Form, body: str, decoded: Decoded, strict: bool, known: Collection[str]
) -> list[_Hit]:
    """The calls among ``decoded``; with ``strict`` (inside a call marker) anything else is a
    malformed call, otherwise it is ignored."""
    values, error = decoded
    raw = body.strip()
    if error is not None and (strict or not values):
        return [_Hit(start=start, form=form, malformed=Malformed(raw=raw, error=error))]
    hits = []
    for value in _flatten(values):
        call = _call(value, raw, known, strict)
        if isinstance(call, TextCall):
            hits.append(_Hit(start=start, form=form, call=call))
        elif call is not None:
            hits.append(_Hit(start=start, form=form, malformed=Malformed(raw=raw, error=call)))
    return hits


def _bare(text: str, spans: list[tuple[int, int]], known: Collection[str]) -> list[_Hit]:
    """Call objects written straight into the text, outside every marker and fence; an object
    that starts like a call but does not decode is a malformed call."""
    hits: list[_Hit] = []
    decoder = json.JSONDecoder()
    position = 0
    while (position := _next_open(text, position)) >= 0:
        if _inside(position, spans):
            position += 1
            continue
        try:
            value, end = decoder.raw_decode(text, position)
            values: list[Any] = [value]
        except json.JSONDecodeError:
            if not CALL_START.match(text, position):
                position += 1
                continue
            end = _balanced_end(text, position)
            values, error = _decode_all(text[position:end])
            if error is not None:
                raw = text[position:end]
                hits.append(
                    _Hit(start=position, form="json", malformed=Malformed(raw=raw, error=error))
                )
                position = end
                continue
        hits += _hits(position, "json", text[position:end], (values, None), False, known)
        position = end
    stripped = text.strip()
    if not hits and not spans and stripped.startswith("{"):
        _, error = _decode_all(stripped)
        if error is not None:
            hits.append(_Hit(start=0, form="json", malformed=Malformed(raw=stripped, error=error)))
    return hits


def _balanced_end(text: str, start: int) -> int:
    """Where the object opened at ``start`` closes (quotes respected), or the end of the text."""
    depth, quote, escaped = 0, "", False
    for index in range(start, len(text)):
        character = text[index]
        if quote:
            if escaped:
                escaped = False
            elif character == "\\":
                escaped = True
            elif character == quote:
                quote = ""
        elif character in "\"'":
            quote = character
        elif character in "{[":
            depth += 1
        elif character in "}]":
            depth -= 1
            if depth == 0:
                return index + 1
    return len(text)


def _next_open(text: str, start: int) -> int:
    found = [i for i in (text.find("{", start), text.find("[", start)) if i >= 0]
    return min(found) if found else -1


def _flatten(values: list[Any]) -> Iterator[Any]:
    for value in values:
        if isinstance(value, list):
            yield from value
        else:
            yield value


def _call(value: Any, raw: str, known: Collection[str], strict: bool) -> TextCall | str | None:
    """``value`` as a call; an error text for a call that cannot be read; None for anything
    that is not a call (only outside a marker)."""
    if isinstance(value, dict) and isinstance(value.get("function"), dict):
        value = value["function"]  # the OpenAI shape, written out
    if not isinstance(value, dict):
        return "expected an object with a name and arguments" if strict else None
    name = next((value[k] for k in NAME_KEYS if isinstance(value.get(k), str)), None)
    if name is None and isinstance(value.get("function"), str):
        name = value["function"]
    has_arguments = any(k in value for k in ARGUMENT_KEYS)
    if name is None:
        return 'the call has no "name"' if strict else None
    if not (strict or has_arguments or name in known):
        return None
    arguments = next((value[k] for k in ARGUMENT_KEYS if k in value), None)
    if isinstance(arguments, str):
        decoded, error = _decode_all(arguments) if arguments.strip() else ([{}], None)
        if error is not None or len(decoded) != 1:
            return f"the arguments of {name} are not one JSON object: {error or arguments[:200]}"
        arguments = decoded[0]
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return f"the arguments of {name} must be an object, not {type(arguments).__name__}"
    return TextCall(name=name, arguments=arguments, raw=raw)


def _decode_all(body: str) -> Decoded:
    """Every JSON value in ``body`` (one, or several separated by blanks, commas or semicolons);
    a Python literal (single quotes, True/None) when it is not JSON; else the JSON error."""
    decoder = json.JSONDecoder()
    values: list[Any] = []
    position, end = 0, len(body)
    try:
        while True:
            while position < end and body[position] in " \t\r\n,;":
                position += 1
            if position >= end:
                return values, None
            value, position = decoder.raw_decode(body, position)
            values.append(value)
    except json.JSONDecodeError as exc:
        if values and not body[position:].lstrip().startswith(("{", "[")):
            return values, None  # text after the calls, not another call
        error = f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
    try:
        literal = ast.literal_eval(body.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return values, error
    return (
        ([literal], None)
        if isinstance(literal, dict | list) and _json_like(literal)
        else (values, error)
    )


def _json_like(value: Any) -> bool:
    """Whether a Python literal holds only what JSON can (no sets, tuples or bytes)."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_like(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_json_like(item) for item in value)
    return value is None or isinstance(value, str | int | float | bool)


def _mistral(body: str) -> Decoded:
    """A Mistral call list: a JSON array, or ``name[ARGS]{…}`` pairs."""
    named = MISTRAL_NAMED.match(body)
    if named is None:
        return _decode_all(body)
    values, error = _decode_all(body[named.end() :])
    if error is not None or len(values) != 1:
        return [], error or "expected one JSON object after [ARGS]"
    return [{"name": named.group(1), "arguments": values[0]}], None


def format_results(form: Form, results: list[tuple[str, Any]]) -> str:
    """Each (tool, result or error text) in the shape the model wrote its calls in."""
    items = [{"name": name, "content": content} for name, content in results]
    lines = [json.dumps(item, ensure_ascii=False) for item in items]
    if form == "tagged":
        return "\n".join(f"<tool_response>\n{line}\n</tool_response>" for line in lines)
    if form == "fenced":
        return "```json\n" + "\n".join(lines) + "\n```"
    if form == "mistral":
        return f"[TOOL_RESULTS] {json.dumps(items, ensure_ascii=False)} [/TOOL_RESULTS]"
    return "\n".join(lines)


def is_answer(text: str) -> bool:
    """Whether ``text`` reads as a final answer: prose (beside any code blocks), not empty, not
    JSON, no call markers."""
    stripped = FENCED.sub("", without_thinking(text)).strip()
    if not stripped or stripped.startswith(("{", "[", "```", "<")):
        return False
    if any(marker in stripped for marker in MARKERS):
        return False
    return any(character.isalpha() for character in stripped)
