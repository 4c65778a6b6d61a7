"""State-changing actions on one live lab: FRR configuration lines and allowlisted commands.

These are the functions behind the agent-facing `configure` and `execute` tools; the
reference solutions of scenarios are applied through them too.
"""

from __future__ import annotations

import re
import secrets

from pydantic import BaseModel

from netdojo.labs.runtime import DEFAULT_MAX_OUTPUT, LiveLab
from netdojo.scenarios.model import ToolCall
from netdojo.tools.allowlist import CommandRefused, parse_command

CONFIG_TIMEOUT_S = 30.0
_LINE_ERROR = re.compile(r"^line (\d+): (.*)$", re.MULTILINE)


class LineResult(BaseModel):
    line: str
    accepted: bool
    error: str | None = None


class ConfigureResult(BaseModel):
    device: str
    ok: bool
    lines: list[LineResult]
    output: str = ""


class ExecuteResult(BaseModel):
    device: str
    command: str
    ok: bool
    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    refused: str | None = None
    truncated: bool = False
    timed_out: bool = False


async def configure(
    lab: LiveLab, device: str, lines: list[str], timeout: float = CONFIG_TIMEOUT_S
) -> ConfigureResult:
    """Apply FRR configuration lines in one go (``vtysh -f``); a result for every line."""
    clean = [line.rstrip("\n") for line in lines]
    bad = [line for line in clean if "\n" in line or "\x00" in line]
    if bad:
        return ConfigureResult(
            device=device,
            ok=False,
            lines=[
                LineResult(line=line, accepted=False, error="one line per entry") for line in clean
            ],
        )
    path = f"/tmp/netdojo-{secrets.token_hex(4)}.conf"
    await lab.write_file(device, path, "\n".join(clean) + "\n", mode=0o600)
    try:
        done = await lab.exec(device, ["vtysh", "-f", path], timeout=timeout)
    finally:
        await lab.exec(device, ["rm", "-f", path])
    errors = {int(n): text.strip() for n, text in _LINE_ERROR.findall(done.stderr)}
    detail = done.stdout.strip()
    results = [
        LineResult(
            line=line,
            accepted=index not in errors,
            error=(f"{errors[index]} {detail}".strip() if index in errors else None),
        )
        for index, line in enumerate(clean, start=1)
    ]
    ok = done.exit_code == 0 and not errors
    return ConfigureResult(device=device, ok=ok, lines=results, output=detail)


async def execute(
    lab: LiveLab,
    device: str,
    command: str,
    timeout: float = CONFIG_TIMEOUT_S,
    max_output: int = DEFAULT_MAX_OUTPUT,
) -> ExecuteResult:
    """Run one allowlisted state-changing command (no shell)."""
    try:
        argv = parse_command(command)
    except CommandRefused as exc:
        return ExecuteResult(
            device=device, command=command, ok=False, exit_code=None, refused=str(exc)
        )
    done = await lab.exec(device, argv, timeout=timeout, max_output=max_output)
    return ExecuteResult(
        device=device,
        command=command,
        ok=done.ok,
        exit_code=done.exit_code,
        stdout=done.stdout,
        stderr=done.stderr,
        truncated=done.truncated,
        timed_out=done.timed_out,
    )


async def apply(lab: LiveLab, call: ToolCall) -> ConfigureResult | ExecuteResult:
    """Apply one recorded tool call (a reference solution step or a fault injection)."""
    args = call.arguments
    if call.tool == "configure":
        return await configure(lab, args["device"], list(args["lines"]))
    return await execute(lab, args["device"], args["command"])
