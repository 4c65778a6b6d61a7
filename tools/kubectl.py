"""The `kubectl` tool: the real kubectl, run against the lab's own API server with an
allowlisted command line (`netdojo.tools.kubectl_allowlist`), output capped like the other
tools. The API server's own errors come back as kubectl prints them."""

from __future__ import annotations

import os
import subprocess
from typing import TYPE_CHECKING, Annotated

import anyio
from pydantic import BaseModel, Field

from netdojo.labs.k8s.workload import CONTROL_PLANE
from netdojo.labs.runtime import DEFAULT_MAX_OUTPUT, LiveLab
from netdojo.tools.kubectl_allowlist import KUBECTL_FORMS, KubectlRefused, parse_kubectl
from netdojo.tools.lab_tools import LabTools, ToolFailure
from netdojo.tools.spec import ToolArguments, ToolSpec

if TYPE_CHECKING:
    from netdojo.labs.k8s.cluster import Cluster

TIMEOUT_S = 20.0
"""What a kubectl change acts on, as the judge's scope names it."""


class KubectlArguments(ToolArguments):
    command: Annotated[
        str,
        Field(
            description="a kubectl command line without `kubectl`, e.g. "
            "`get networkpolicies -A -o yaml` or `apply -f -`"
        ),
    ]
    manifest: Annotated[
        str,
        Field(
            description="YAML or JSON objects that `-f -` reads; empty for any other command",
            max_length=64 * 1024,
        ),
    ] = ""  # `str` alone: an MCP server parses a JSON string given for any other type

    def acts_on(self) -> str | None:
        return CONTROL_PLANE


class KubectlResult(BaseModel):
    command: str
    ok: bool
    exit_code: int | None
    output: str = ""
    refused: str | None = None
    changed: bool = Field(default=False, description="the command could change the cluster")
    truncated: bool = False


def _cluster(lab: LiveLab) -> Cluster:
    if lab.cluster is None:
        raise ToolFailure("this lab has no Kubernetes cluster; kubectl has nothing to talk to")
    return lab.cluster


async def run_kubectl(
    lab: LiveLab, arguments: KubectlArguments, max_output: int = DEFAULT_MAX_OUTPUT
) -> KubectlResult:
    """Run the command if the allowlist admits it, else `KubectlRefused` saying why."""
    parsed = parse_kubectl(arguments.command, arguments.manifest or None)
    cluster = _cluster(lab)
    kubectl = cluster.plane.binaries["kubectl"].path
    assert kubectl is not None
    config = cluster.plane.config
    environment = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(config.workdir),
        "KUBECACHEDIR": str(config.workdir / "cache"),
    }
    stdin = arguments.manifest.encode() if arguments.manifest else None
    with anyio.fail_after(TIMEOUT_S):
        done = await anyio.run_process(
            [kubectl, f"--kubeconfig={config.kubeconfig}", *parsed.argv],
            input=stdin,
            check=False,
            stderr=subprocess.STDOUT,
            env=environment,
        )
    output = done.stdout.decode(errors="replace")
    truncated = len(output) > max_output
    return KubectlResult(
        command=arguments.command,
        ok=done.returncode == 0,
        exit_code=done.returncode,
        output=output[:max_output],
        changed=parsed.changes_state,
        truncated=truncated,
    )


async def _run(tools: LabTools, arguments: KubectlArguments) -> KubectlResult:
    async def run() -> KubectlResult:
        return await run_kubectl(tools.lab, arguments, tools.limits.output_cap)

    return await tools.recorded(KUBECTL, arguments, run, lambda result: result.changed)


async def _act(lab: LiveLab, arguments: KubectlArguments) -> KubectlResult:
    """As a reference solution or a fault applies it: a refusal is a result, not an error."""
    try:
        return await run_kubectl(lab, arguments)
    except KubectlRefused as exc:
        return KubectlResult(command=arguments.command, ok=False, exit_code=None, refused=str(exc))


KUBECTL = ToolSpec(
    name="kubectl",
    title="Run kubectl",
    arguments=KubectlArguments,
    result=KubectlResult,
    description=(
        "Run kubectl against this lab's Kubernetes API server. Allowed forms: "
        + "; ".join(KUBECTL_FORMS)
    ),
    run=_run,
    read_only=False,
    destructive=True,
    act=_act,
    refusal_unsafe=True,
)
