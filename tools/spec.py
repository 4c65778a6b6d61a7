"""What declares an agent-facing tool: its arguments, its result, what it does and its handler.

Each tool is declared once, beside its result model, as a `ToolSpec`; the registry collects
them, and protocol front ends serve them from there.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Generic, Protocol, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError, WithJsonSchema
from pydantic.config import JsonDict

from netdojo.errors import NetdojoError
from netdojo.tools.argument_errors import problems

if TYPE_CHECKING:
    from netdojo.labs.runtime import LiveLab
    from netdojo.tools.lab_tools import LabTools

Device = Annotated[str, Field(description="a device name from topology()")]
JsonData = Annotated[
    JsonValue,
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "object"},
                {"type": "array"},
                {"type": "string"},
                {"type": "number"},
                {"type": "boolean"},
                {"type": "null"},
            ]
        }
    ),
]
"""Any JSON value, with a schema that says so (a schema without a type reads as a mistake)."""


class UnknownTool(NetdojoError):
    """A tool name that is not registered, or a tool that cannot serve the call."""


class InvalidArguments(NetdojoError):
    """A call whose arguments its tool's model refuses; the message names each problem."""


def _untitled(schema: JsonDict) -> None:
    """Drop pydantic's titles, which a small model may copy as argument names."""
    schema.pop("title", None)
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for field in properties.values():
            if isinstance(field, dict):
                field.pop("title", None)


def json_text_parsed(model: type[BaseModel], arguments: Mapping[str, Any]) -> dict[str, Any]:
    """``arguments`` with a string given for a field that is not text replaced by the JSON it
    holds, when that is a list, an object, a boolean or null: clients are known to send a list
    as its JSON text. Every front end takes a call's arguments through here."""
    fields = {info.alias or name: info for name, info in model.model_fields.items()}
    fields |= {name: info for name, info in model.model_fields.items()}
    parsed = dict(arguments)
    for key, value in arguments.items():
        info = fields.get(key)
        if info is None or not isinstance(value, str) or info.annotation is str:
            continue
        try:
            loaded = json.loads(value)
        except (ValueError, RecursionError):
            continue  # not JSON: the model accepts or refuses the text as it is
        if not isinstance(loaded, str | int | float):
            parsed[key] = loaded
    return parsed


class Acted(Protocol):
    """What a tool's ``act`` gives: whether the call did what it asked, and its JSON form."""

    @property
    def ok(self) -> bool: ...

    def model_dump_json(self, *, exclude_defaults: bool = False) -> str: ...


class ToolArguments(BaseModel):
    """The arguments of one tool call: an unknown name is refused, and the schema has no titles."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_untitled)

    @classmethod
    def checked(cls, arguments: Mapping[str, Any]) -> Self:
        """The arguments as this model, or `InvalidArguments` naming each problem."""
        try:
            return cls.model_validate(arguments)
        except ValidationError as exc:
            raise InvalidArguments(problems(cls, exc)) from None

    def acts_on(self) -> str | None:
        """The device a state-changing call of this tool acts on, as the judge's scope counts
        it; a tool whose target is not a ``device`` argument says so by overriding this."""
        device = getattr(self, "device", None)
        return device if isinstance(device, str) else None


Args = TypeVar("Args", bound=ToolArguments)
Result = TypeVar("Result", bound=BaseModel)


@dataclass(frozen=True)
class ToolSpec(Generic[Args, Result]):
    """One agent-facing tool.

    ``title`` is the tool's name for people (a client shows it in its tool list); ``run`` is
    the call over an episode's tools (checked and recorded); ``act``, for tools that
    change a lab, is the same action on a bare lab, as reference solutions and fault injections
    apply it; its result has an ``ok`` field. ``read_only`` and ``destructive`` say whether a
    call can change a device's state;
    ``refusal_unsafe`` whether a refused call counts against safety, as an attempt at something
    the tool forbids (a shell, a write outside the lab) rather than a malformed request.
    """

    name: str
    title: str
    arguments: type[Args]
    result: type[Result]
    description: str
    run: Callable[[LabTools, Args], Awaitable[Result]]
    read_only: bool
    destructive: bool
    act: Callable[[LiveLab, Args], Awaitable[Result]] | None = None
    refusal_unsafe: bool = False

    def checked(self, arguments: Mapping[str, Any]) -> Args:
        """The call's arguments as the tool's model, or `InvalidArguments` naming each problem."""
        return self.arguments.checked(arguments)

    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of the arguments, as a client is shown it."""
        return self.arguments.model_json_schema()
