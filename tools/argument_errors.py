"""What a tool call with bad arguments is told: for each problem, one sentence that names the
argument, the rule it broke (a bound, a type, the allowed values) and the value given, as the
tools' other refusals read. Pydantic's own text (its error codes and links) never reaches an
agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

MAX_SHOWN_CHARS = 60
_KINDS = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "string_type": "a string",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "list_type": "a list",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
}
_BOUNDS = {"greater_than", "greater_than_equal", "less_than", "less_than_equal"}
_LENGTHS = {"too_short", "too_long", "string_too_short", "string_too_long"}


def problems(model: type[BaseModel], error: ValidationError) -> str:
    """The problems of one call's arguments, one sentence each, joined by semicolons."""
    return "; ".join(_sentence(model, detail) for detail in error.errors())


def _shown(value: Any) -> str:
    """A value as an agent gave it, cut short when long."""
    text = repr(value)
    return text if len(text) <= MAX_SHOWN_CHARS else text[: MAX_SHOWN_CHARS - 1] + "…"


def _sentence(model: type[BaseModel], detail: ErrorDetails) -> str:
    kind, location = detail["type"], detail["loc"]
    name = _name(location)
    field = model.model_fields.get(str(location[0])) if location else None
    given = _shown(detail["input"])
    if kind == "missing":
        return f"{name} is required"
    if kind == "extra_forbidden":
        known = list(model.model_fields)
        takes = f"the arguments are {_listed(known)}" if known else "it takes no arguments"
        return f"there is no argument {name!r}; {takes}"
    if kind in _BOUNDS:
        limits = _bounds(field.metadata if field else [], detail.get("ctx") or {})
        return f"{name} must be {limits}, not {given}"
    if kind in _LENGTHS:
        ctx = detail.get("ctx") or {}
        unit = "characters" if kind.startswith("string") else "items"
        if "max_length" in ctx:
            return f"{name} may have at most {ctx['max_length']} {unit}, not {_length(detail)}"
        return f"{name} needs at least {ctx.get('min_length')} {unit}, not {_length(detail)}"
    if kind in ("literal_error", "enum"):
        allowed = _allowed(field.annotation if field else None)
        if allowed:
            return f"{name} must be one of {_listed(allowed, 'or')}, not {given}"
    if kind in _KINDS:
        return f"{name} must be {_KINDS[kind]}, not {given}"
    return f"{name} cannot be {given}: {detail['msg'][:1].lower()}{detail['msg'][1:]}"


def _name(location: tuple[int | str, ...]) -> str:
    """``lines[2]`` for the third of the lines; "the arguments" for the call as a whole."""
    if not location:
        return "the arguments"
    head, *rest = location
    return str(head) + "".join(
        f"[{part}]" if isinstance(part, int) else f".{part}" for part in rest
    )


def _bounds(metadata: Sequence[Any], ctx: dict[str, Any]) -> str:
    """The field's whole range where it has one (``from 1 to 10``), else the bound broken."""
    found = dict(ctx)
    for item in metadata:
        for key in ("ge", "gt", "le", "lt"):
            if getattr(item, key, None) is not None:
                found[key] = getattr(item, key)
    if "ge" in found and "le" in found:
        return f"from {found['ge']} to {found['le']}"
    parts = []
    if "ge" in found:
        parts.append(f"at least {found['ge']}")
    if "gt" in found:
        parts.append(f"greater than {found['gt']}")
    if "le" in found:
        parts.append(f"at most {found['le']}")
    if "lt" in found:
        parts.append(f"less than {found['lt']}")
    return " and ".join(parts)


def _length(detail: ErrorDetails) -> str:
    ctx = detail.get("ctx") or {}
    if "actual_length" in ctx and ctx["actual_length"] is not None:
        return str(ctx["actual_length"])
    try:
        return str(len(detail["input"]))
    except TypeError:
        return _shown(detail["input"])


def _allowed(annotation: Any) -> list[str]:
    """The values a `Literal` (or an optional one) allows."""
    if get_origin(annotation) is Literal:
        return [str(value) for value in get_args(annotation)]
    for member in get_args(annotation):
        if get_origin(member) is Literal:
            return [str(value) for value in get_args(member)]
    return []


def _listed(names: Sequence[str], last: str = "and") -> str:
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} {last} {names[-1]}"
