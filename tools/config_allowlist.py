"""Which FRR configuration lines the `configure` tool hands to vtysh, and why others are refused.

The lines run through ``vtysh -f``, which starts in configuration mode. A top-level ``exit``
drops to exec mode, where vtysh can write files (``write``, ``output file``), start programs
(``ping``, ``traceroute``) and read files into errors (``copy FILE running-config``); ``do``
runs exec commands from configuration mode. vtysh takes any unique prefix of a keyword, and
reads a file in chunks of 4096 bytes, so a longer line would split into two commands.
"""

from __future__ import annotations

from netdojo.tools.allowlist import CommandRefused

MAX_LINE_BYTES = 1024
EXEC_WORDS = (
    "add", "clear", "copy", "disable", "do", "graceful-restart", "mtrace", "output", "ping",
    "show", "ssh", "start-shell", "telnet", "terminal", "traceroute", "write",
)  # fmt: skip
"""`configure terminal` is not among them: it only enters configuration mode, where the lines
start anyway, and agents often send it first."""
CONFIG_FORMS = (
    "FRR configuration lines as typed after `configure terminal`, one line per entry",
    f"at most {MAX_LINE_BYTES} bytes (UTF-8) a line, no control characters",
    "no exec-mode commands or `do` (" + ", ".join(EXEC_WORDS) + "); read state with the show "
    "tool, clear sessions with the execute tool",
)


class ConfigRefused(CommandRefused):
    forms = CONFIG_FORMS


def check_config_lines(lines: list[str]) -> None:
    """Raise `ConfigRefused` for the first line that is not plain FRR configuration."""
    for number, line in enumerate(lines, start=1):
        problem = _line_problem(line)
        if problem:
            raise ConfigRefused(f"line {number} ({line[:60]!r}): {problem}")


def _line_problem(line: str) -> str | None:
    try:
        size = len(line.encode())
    except UnicodeEncodeError:
        return "not valid Unicode text"
    if size > MAX_LINE_BYTES:
        return f"longer than {MAX_LINE_BYTES} bytes"
    if any(c != "\t" and (ord(c) < 32 or ord(c) == 127) for c in line):
        return "control characters (one line per entry)"
    words = line.split()
    if not words:
        return None
    first = words[0].lower()
    matched = [word for word in EXEC_WORDS if word.startswith(first)]
    if "write" in matched:
        return "the configuration applies as it is given; there is nothing to write"
    if matched:
        return f"`{words[0]}` is an exec-mode command ({matched[0]}), not configuration"
    return None
