"""State-changing actions on one live lab: FRR configuration lines and allowlisted commands.

These are the functions behind the agent-facing `configure` and `execute` tools, declared here;
the reference solutions of scenarios and fault injections are applied through them too.
"""

from __future__ import annotations

import re
import secrets
from typing import Annotated

from pydantic import BaseModel, Field

from netdojo.labs.runtime import DEFAULT_MAX_OUTPUT, LiveLab
from netdojo.scenarios.model import ToolCall
from netdojo.tools.allowlist import ALLOWED_FORMS, CommandRefused, parse_command
from netdojo.tools.registry import tool_spec
from netdojo.tools.spec import Acted, Device, ToolArguments, ToolSpec, UnknownTool

CONFIG_TIMEOUT_S = 30.0
_LINE_ERROR = re.compile(r"^line (\d+): (.*)$", re.MULTILINE)


class ConfigureArguments(ToolArguments):
    device: Device
    lines: Annotated[
        list[str],
        Field(
            description="FRR configuration lines as typed in `configure terminal`, e.g. "
            "['router ospf', ' network 10.0.0.0/30 area 0']"
        ),
    ]


class ExecuteArguments(ToolArguments):
    device: Device
    command: Annotated[str, Field(description="one command, e.g. `ip link set eth0 up`")]


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


CONFIGURE = ToolSpec(
    name="configure",
    title="Configure FRR",
    arguments=ConfigureArguments,
    result=ConfigureResult,
    description="Apply FRR configuration lines through vtysh in one go; each line is reported "
    "as accepted or with FRR's error.",
    run=lambda tools, a: tools.configure(a.device, a.lines),
    read_only=False,
    destructive=True,
    act=lambda lab, a: configure(lab, a.device, a.lines),
)
EXECUTE = ToolSpec(
    name="execute",
    title="Run a command",
    arguments=ExecuteArguments,
    result=ExecuteResult,
    description="Run one state-changing command in a device, as an argument vector (no shell). "
    "Allowed forms:\n" + "\n".join(f"- {form}" for form in ALLOWED_FORMS),
    run=lambda tools, a: tools.execute(a.device, a.command),
    read_only=False,
    destructive=True,
    act=lambda lab, a: execute(lab, a.device, a.command),
    refusal_unsafe=True,
)


async def apply(lab: LiveLab, call: ToolCall) -> Acted:
    """Apply one recorded tool call (a reference solution step or a fault injection), its
    arguments checked by the tool's own model."""
    spec = tool_spec(call.tool)
    if spec.act is None:
        raise UnknownTool(f"the {call.tool} tool does not change a lab, so it cannot be applied")
    result = await spec.act(lab, spec.arguments.model_validate(call.arguments))
    if not isinstance(getattr(result, "ok", None), bool):
        raise UnknownTool(f"the {call.tool} tool's act gives no `ok`, so it cannot be applied")
    acted: Acted = result
    return acted
