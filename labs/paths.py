"""Where netdojo keeps its machine-local state (settings, logs, build caches)."""

from __future__ import annotations

import os
from pathlib import Path


def state_dir() -> Path:
    """``$NETDOJO_HOME``, else ``$XDG_STATE_HOME/netdojo``, else ``~/.local/state/netdojo``."""
    explicit = os.environ.get("NETDOJO_HOME")
    if explicit:
        path = Path(explicit)
    else:
        base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
        path = Path(base) / "netdojo"
    path.mkdir(parents=True, exist_ok=True)
    return path


def sub_dir(name: str) -> Path:
    path = state_dir() / name
    path.mkdir(parents=True, exist_ok=True)
    return path
