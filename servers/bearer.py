"""Bearer tokens on HTTP servers (RFC 6750): the token's form, the constant-time check of a
request's ``Authorization`` header, the 401 that refuses it, and an ASGI guard that asks every
request but those to public paths for the token.

Only the header counts: a token in the query string, in another scheme or with anything before
or after it is refused like a missing one.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Collection

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

MIN_TOKEN_CHARS = 16
_TOKEN_FORM = re.compile(r"[A-Za-z0-9\-._~+/]+=*")  # RFC 6750's b64token
CHALLENGE = 'Bearer realm="netdojo"'


def check_token(token: str) -> str:
    """``token`` if it can travel in an ``Authorization`` header and is not trivially short."""
    if not token:
        raise ValueError("the token is empty")
    if not _TOKEN_FORM.fullmatch(token):
        raise ValueError(
            "a bearer token holds only letters, digits and -._~+/ (then optional '=' padding)"
        )
    if len(token) < MIN_TOKEN_CHARS:
        raise ValueError(f"a bearer token needs at least {MIN_TOKEN_CHARS} characters")
    return token


def authorized(scope: Scope, token: str) -> bool:
    """Whether the request carries ``Authorization: Bearer <token>``, compared in constant time."""
    headers = dict(scope.get("headers") or [])
    value = headers.get(b"authorization", b"").decode("latin-1")
    scheme, _, given = value.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(
        given.strip().encode("latin-1"), token.encode()
    )


def refusal(reason: str) -> JSONResponse:
    return JSONResponse({"error": reason}, status_code=401, headers={"WWW-Authenticate": CHALLENGE})


class BearerGuard:
    """ASGI middleware: HTTP requests need the token, but for those to the ``public`` paths."""

    def __init__(self, app: ASGIApp, token: str, public: Collection[str] = ()) -> None:
        self.app = app
        self.token = check_token(token)
        self.public = public

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        guarded = scope["type"] == "http" and scope["path"] not in self.public
        if guarded and not authorized(scope, self.token):
            await refusal("a valid bearer token is required")(scope, receive, send)
            return
        await self.app(scope, receive, send)
