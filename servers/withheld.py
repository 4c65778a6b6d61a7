"""Secrets an assessment request carries, kept out of what the green agent stores.

The A2A task store keeps each task's messages, and anyone allowed to call the green agent can
read every task (``GetTask``, ``ListTasks``). A request that hands over a participant's bearer
token is therefore stored without it.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from a2a.helpers import get_data_parts, get_message_text
from a2a.types import Message
from google.protobuf.json_format import MessageToDict, ParseDict

from netdojo.tools.trajectory import MARK


def participant_tokens(message: Message) -> list[str]:
    """Every participant token in a request (as a data part or JSON text), valid or not."""
    payloads = get_data_parts(list(message.parts))
    with contextlib.suppress(json.JSONDecodeError):
        payloads.append(json.loads(get_message_text(message)))
    tokens = []
    for payload in payloads:
        participants = payload.get("participants") if isinstance(payload, dict) else None
        if not isinstance(participants, dict):
            continue
        for given in participants.values():
            token = given.get("token") if isinstance(given, dict) else None
            if isinstance(token, str) and token:
                tokens.append(token)
    return tokens


def hide(text: str, secrets: list[str]) -> str:
    """``text`` with each secret, as is or JSON-escaped, replaced by the mark."""
    for secret in secrets:
        text = text.replace(secret, MARK).replace(json.dumps(secret)[1:-1], MARK)
    return text


def without(message: Message, secrets: list[str]) -> Message:
    """A copy of ``message`` with every secret taken out of every string it holds."""
    return ParseDict(_hidden(MessageToDict(message), secrets), Message())


def _hidden(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, str):
        return hide(value, secrets)
    if isinstance(value, dict):
        return {key: _hidden(item, secrets) for key, item in value.items()}
    if isinstance(value, list):
        return [_hidden(item, secrets) for item in value]
    return value
