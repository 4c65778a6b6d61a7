"""Keep secrets out of everything written from a run: reports, exports, leaderboards.

The green agent already removes each episode's bearer token from what it records; this is the
second line for anything else an agent may have echoed: `Bearer …` and `Authorization: …`
values, API-key assignments, `sk-…` keys, long random-looking strings (mixed case and digits,
like `secrets.token_urlsafe`), and the values of this process's token, key and secret
environment variables. Device configuration (OSPF keys, BGP passwords) is task content and is
left alone.
"""

from __future__ import annotations

import os
import re
from typing import Any

from netdojo.tools.trajectory import MARK

_TOKEN_CHARS = r"A-Za-z0-9_\-"
_PATTERNS = [
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=\-]+"), rf"\1{MARK}"),
    (
        re.compile(
            r"(?i)\b(authorization|x-api-key|api[_-]?key)(\"?\s*[:=]\s*\"?)"
            r"(?:(?:basic|bearer|token)\s+)?[^\s\"',;]+"
        ),
        rf"\1\2{MARK}",
    ),
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"), MARK),
    (
        re.compile(
            rf"(?<![{_TOKEN_CHARS}])"
            rf"(?=[{_TOKEN_CHARS}]*[a-z])(?=[{_TOKEN_CHARS}]*[A-Z])(?=[{_TOKEN_CHARS}]*[0-9])"
            rf"[{_TOKEN_CHARS}]{{32,}}(?![{_TOKEN_CHARS}])"
        ),
        MARK,
    ),
]
_SECRET_ENV = re.compile(r"(TOKEN|API_KEY|SECRET|PASSWORD)$")


def environment_secrets() -> list[str]:
    """Values of this process's `*_TOKEN`, `*_API_KEY`, `*_SECRET`, `*_PASSWORD` variables."""
    return [v for k, v in os.environ.items() if _SECRET_ENV.search(k) and len(v) >= 8]


def scrub_text(text: str, known: list[str]) -> str:
    for secret in known:
        text = text.replace(secret, MARK)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def scrub(value: Any, known: list[str] | None = None) -> Any:
    """``value`` (JSON-like) with every string scrubbed; keys are kept."""
    secrets = environment_secrets() if known is None else known
    if isinstance(value, str):
        return scrub_text(value, secrets)
    if isinstance(value, dict):
        return {k: scrub(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub(v, secrets) for v in value]
    return value
