"""The `python` tool: the agent's code, run against a planning model inside the lab.

The code runs in the planner device (`netdojo.scenarios.capacity.lab`) as an unprivileged user
with no new privileges, under limits on CPU time, address space, file size and open files,
with a clean environment and the plan folder as its working directory; the device has no
network link. The judge never runs it: it only reads the files the code leaves.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from netdojo.labs.runtime import LiveLab
from netdojo.scenarios.capacity.lab import PLAN_DIR, PLANNER, SANDBOX_UID
from netdojo.tools.lab_tools import LabTools, ToolFailure
from netdojo.tools.spec import ToolArguments, ToolSpec

MAX_CODE = 64 * 1024
"""Under the kernel's limit on one argument (the code is passed as `python3 -c`)."""
MEMORY_BYTES = 768 * 1024 * 1024
FILE_BYTES = 64 * 1024 * 1024
OPEN_FILES = 64


class PythonArguments(ToolArguments):
    code: Annotated[
        str,
        Field(
            description="Python 3 source run with python3 (networkx available) in the plan "
            f"folder {PLAN_DIR}; print what you want to see",
            min_length=1,
            max_length=MAX_CODE,
        ),
    ]

    def acts_on(self) -> str | None:
        return PLANNER


class PythonResult(BaseModel):
    ok: bool = Field(description="the code ran to its end without an exception")
    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    truncated: bool = Field(default=False, description="the output was cut at the cap")


def sandboxed(code: str, cpu_seconds: int) -> list[str]:
    """The command running ``code`` as the sandbox user, within its limits."""
    uid = str(SANDBOX_UID)
    return [
        "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--no-new-privs",
        "prlimit", f"--as={MEMORY_BYTES}", f"--cpu={cpu_seconds}", f"--fsize={FILE_BYTES}",
        f"--nofile={OPEN_FILES}", "--core=0",
        "env", "-i", "-C", PLAN_DIR, f"HOME={PLAN_DIR}", "PATH=/usr/bin:/bin", "LANG=C.UTF-8",
        "python3", "-I", "-c", code,
    ]  # fmt: skip


async def run_code(lab: LiveLab, code: str, timeout: float, max_output: int) -> PythonResult:
    if PLANNER not in lab.devices:
        raise ToolFailure("this lab has no planning model; the python tool has nothing to run on")
    done = await lab.exec(
        PLANNER, sandboxed(code, max(1, int(timeout))), timeout=timeout, max_output=max_output
    )
    return PythonResult(
        ok=done.ok,
        exit_code=done.exit_code,
        stdout=done.stdout,
        stderr=done.stderr,
        timed_out=done.timed_out,
        truncated=done.truncated,
    )


async def _run(tools: LabTools, arguments: PythonArguments) -> PythonResult:
    async def run() -> PythonResult:
        limits = tools.limits
        return await run_code(tools.lab, arguments.code, limits.show_timeout_s, limits.output_cap)

    return await tools.recorded(PYTHON, arguments, run, lambda result: True)


async def _act(lab: LiveLab, arguments: PythonArguments) -> PythonResult:
    """As a reference solution applies it."""
    return await run_code(lab, arguments.code, 60.0, 64 * 1024)


PYTHON = ToolSpec(
    name="python",
    title="Run Python on the planning model",
    arguments=PythonArguments,
    result=PythonResult,
    description=(
        "Run Python 3 code in the planning device, in the folder holding the model "
        f"({PLAN_DIR}); networkx is installed, there is no network, and CPU time, memory "
        "and output are limited. The result has the exit code and what the code printed."
    ),
    run=_run,
    read_only=False,
    destructive=True,
    act=_act,
)
