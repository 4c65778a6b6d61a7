"""Bearer tokens for the A2A commands: read from a file or an environment variable, never
from the command line (which every local user can read in the process list)."""

from __future__ import annotations

import ipaddress
import os
import secrets
from pathlib import Path

from netdojo.errors import NetdojoError

GREEN_TOKEN = "NETDOJO_GREEN_TOKEN"
PURPLE_TOKEN = "NETDOJO_PURPLE_TOKEN"
AGENT_TOKEN = "NETDOJO_AGENT_TOKEN"


def token_from(file: Path | None, variable: str) -> str | None:
    """The token in ``file`` (surrounding whitespace dropped), else in the environment variable
    ``variable``; None when neither is given."""
    from netdojo.servers.bearer import check_token

    if file is not None:
        try:
            given, source = file.read_text().strip(), str(file)
        except (OSError, UnicodeDecodeError) as exc:
            raise NetdojoError(f"cannot read the token file {file}: {exc}") from None
    elif os.environ.get(variable):
        given, source = os.environ[variable].strip(), f"${variable}"
    else:
        return None
    try:
        return check_token(given)
    except ValueError as exc:
        raise NetdojoError(f"the token in {source}: {exc}") from None


def fresh_token() -> str:
    """A token for a server that lives as long as one command."""
    return secrets.token_urlsafe(32)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
