"""Bearer tokens on HTTP servers (RFC 6750): the token's form, the constant-time check of a
request's ``Authorization`` header, the 401 that refuses it, and an ASGI guard that asks every
request but those to public paths for the token.

Only the header counts: a token in the query string, in another scheme or with anything before
or after it is refused. A refusal's body says in plain words whether the token was missing or
wrong. The challenge names no OAuth metadata, but MCP clients that speak OAuth look for it on
any 401 and then try to register: `oauth_refusals` answers those requests with the same plain
words, so the error such a client shows says what to send.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Collection

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

MIN_TOKEN_CHARS = 16
_TOKEN_FORM = re.compile(r"[A-Za-z0-9\-._~+/]+=*")  # RFC 6750's b64token
REALM = 'Bearer realm="netdojo"'
SEND = "send the header 'Authorization: Bearer <token>'"
MISSING = f"no bearer token: {SEND}"
NOT_BEARER = f"the Authorization header holds no bearer token: {SEND}"
NO_OAUTH = (
    f"this server takes a fixed bearer token, not OAuth: {SEND} with the token the server was given"
)


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


def refusal_of(scope: Scope, token: str, whose: str = "this server's") -> JSONResponse | None:
    """None when the request carries ``Authorization: Bearer <token>`` (compared in constant
    time); else the 401 that answers it, saying whether the token is missing or wrong."""
    headers = dict(scope.get("headers") or [])
    value = headers.get(b"authorization", b"").decode("latin-1")
    scheme, _, given = value.partition(" ")
    if not value.strip() or (scheme.lower() == "bearer" and not given.strip()):
        return _refusal(MISSING)
    if scheme.lower() != "bearer":
        return _refusal(NOT_BEARER)
    if not hmac.compare_digest(given.strip().encode("latin-1"), token.encode()):
        return _refusal(f"wrong bearer token: the token sent is not {whose}", wrong=True)
    return None


def _refusal(reason: str, wrong: bool = False) -> JSONResponse:
    """A 401 whose body is the reason; a wrong token is also named in the challenge (RFC 6750
    keeps error codes out of the answer to a request that sent none)."""
    challenge = f'{REALM}, error="invalid_token", error_description="{reason}"' if wrong else REALM
    return JSONResponse({"error": reason}, status_code=401, headers={"WWW-Authenticate": challenge})


def oauth_refusals() -> list[Route]:
    """Routes answering OAuth discovery (RFC 9728, RFC 8414, OpenID), registration (RFC 7591),
    authorization and token requests with `NO_OAUTH`, as OAuth errors where a client reads
    those."""

    async def not_here(_: Request) -> Response:
        return JSONResponse({"error": NO_OAUTH}, status_code=404)

    async def refused(_: Request) -> Response:
        return JSONResponse(
            {"error": "invalid_request", "error_description": NO_OAUTH}, status_code=400
        )

    return [
        Route("/.well-known/oauth-protected-resource{rest:path}", not_here),
        Route("/.well-known/oauth-authorization-server{rest:path}", not_here),
        Route("/.well-known/openid-configuration{rest:path}", not_here),
        Route("/register", refused, methods=["POST"]),
        Route("/authorize", refused),
        Route("/token", refused, methods=["POST"]),
    ]


class BearerGuard:
    """ASGI middleware: HTTP requests need the token, but for those to the ``public`` paths."""

    def __init__(self, app: ASGIApp, token: str, public: Collection[str] = ()) -> None:
        self.app = app
        self.token = check_token(token)
        self.public = public

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        guarded = scope["type"] == "http" and scope["path"] not in self.public
        refused = refusal_of(scope, self.token) if guarded else None
        if refused is not None:
            await refused(scope, receive, send)
            return
        await self.app(scope, receive, send)
