"""An A2A 0.3 client, as AgentBeats' gateway and agent template call agents; run with the Python
of the 0.3 environment (`tests.a2a_v0_3.env`), never imported by the tests.

    client.py card URL
        prints the agent's card as the 0.3 SDK reads and validates it, as one JSON object
    client.py send URL [--text T] [--data JSON] [--streaming] [--context-id ID]
                       [--token T] [--timeout S] [--to-base-url]
        sends one user message (a text part and/or a data part) and prints one JSON line per
        event the 0.3 client yields: ``{"event": "message" | "task" | "status-update" |
        "artifact-update", "at": <seconds since the send>, "body": {...}}``

``--timeout`` is the HTTP client's timeout (httpx's own default of 5 s when not given);
``--to-base-url`` posts to URL itself instead of the card's ``url``, as the gateway does.
Errors are printed as ``{"error": "<type>: <message>"}`` with exit code 1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from typing import Any
from uuid import uuid4

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import DataPart, Message, Part, Role, TextPart


def _emit(line: dict[str, Any]) -> None:
    print(json.dumps(line), flush=True)


def _dump(model: Any) -> dict[str, Any]:
    return dict(model.model_dump(mode="json", by_alias=True, exclude_none=True))


async def card(args: argparse.Namespace) -> None:
    async with httpx.AsyncClient() as http:
        found = await A2ACardResolver(httpx_client=http, base_url=args.url).get_agent_card()
    _emit(_dump(found))


async def send(args: argparse.Namespace) -> None:
    headers = {"Authorization": f"Bearer {args.token}"} if args.token else None
    async with httpx.AsyncClient(headers=headers, timeout=args.timeout) as http:
        found = await A2ACardResolver(httpx_client=http, base_url=args.url).get_agent_card()
        if args.to_base_url:
            found.url = args.url
        config = ClientConfig(httpx_client=http, streaming=args.streaming)
        client = ClientFactory(config).create(found)
        parts: list[Part] = []
        if args.text is not None:
            parts.append(Part(root=TextPart(kind="text", text=args.text)))
        if args.data is not None:
            parts.append(Part(root=DataPart(kind="data", data=json.loads(args.data))))
        message = Message(
            kind="message",
            role=Role.user,
            parts=parts,
            message_id=uuid4().hex,
            context_id=args.context_id,
        )
        started = time.monotonic()
        async for event in client.send_message(message):
            at = round(time.monotonic() - started, 3)
            if isinstance(event, Message):
                _emit({"event": "message", "at": at, "body": _dump(event)})
                continue
            task, update = event
            if update is None:
                _emit({"event": "task", "at": at, "body": _dump(task)})
            else:
                _emit({"event": update.kind, "at": at, "body": _dump(update)})


def main() -> None:
    parser = argparse.ArgumentParser()
    verbs = parser.add_subparsers(dest="verb", required=True)
    read = verbs.add_parser("card")
    read.add_argument("url")
    talk = verbs.add_parser("send")
    talk.add_argument("url")
    talk.add_argument("--text")
    talk.add_argument("--data")
    talk.add_argument("--streaming", action="store_true")
    talk.add_argument("--context-id")
    talk.add_argument("--token")
    talk.add_argument("--timeout", type=float, default=5.0)
    talk.add_argument("--to-base-url", action="store_true")
    args = parser.parse_args()
    try:
        asyncio.run(card(args) if args.verb == "card" else send(args))
    except Exception as exc:  # the test reads the failure from the output
        _emit({"error": f"{type(exc).__name__}: {exc}"})
        sys.exit(1)


if __name__ == "__main__":
    main()
