"""An agent image's health check: its agent card answers.

``python -m netdojo.healthcheck [PORT]`` runs inside the container; the agent is the container's
first process, so its ``--host`` and ``--port`` are read from that process's command line (a
runner sets them at start, the image only has defaults); PORT is the agent's own default, for a
command line without one. Exit 0 when the card answers, 1 otherwise.
"""

from __future__ import annotations

import sys
import urllib.request
from pathlib import Path

CARD_PATH = "/.well-known/agent-card.json"
DEFAULT_PORT = 9009
ANY_ADDRESS = {"0.0.0.0", "::", ""}
TIMEOUT_S = 4.0


def option(argv: list[str], name: str) -> str | None:
    """The value of ``--name VALUE`` or ``--name=VALUE`` in ``argv`` (the last one given)."""
    found = None
    for index, arg in enumerate(argv):
        if arg == name and index + 1 < len(argv):
            found = argv[index + 1]
        elif arg.startswith(f"{name}="):
            found = arg.partition("=")[2]
    return found


def card_url(argv: list[str], default_port: int = DEFAULT_PORT) -> str:
    """Where the agent started with ``argv`` serves its card, seen from inside its container."""
    host = option(argv, "--host") or "127.0.0.1"
    if host in ANY_ADDRESS:
        host = "127.0.0.1"
    elif ":" in host:
        host = f"[{host}]"
    port = option(argv, "--port") or str(default_port)
    return f"http://{host}:{port}{CARD_PATH}"


def main(args: list[str] | None = None) -> int:
    given = sys.argv[1:] if args is None else args
    default_port = int(given[0]) if given else DEFAULT_PORT
    argv = Path("/proc/1/cmdline").read_bytes().decode(errors="replace").split("\0")
    url = card_url(argv, default_port)
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as answer:
            ok = answer.status == 200
    except OSError as exc:
        print(f"{url}: {exc}", file=sys.stderr)
        return 1
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
