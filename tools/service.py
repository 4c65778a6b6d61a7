"""The `service` tool: the lab's DHCP and DNS servers and DHCP relays (dnsmasq) and the hosts'
DHCP clients.

On a router, it replaces a server's or relay's configuration file when given one, then
restarts it and says whether it came up (dnsmasq names the line it refuses); on a host, it
gives up the lease and asks for a new one, as the host does at boot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field, field_validator

from netdojo.scenarios.services import FIXED_LINES as DEFAULT_LINES
from netdojo.scenarios.services import SERVER_CONF, renew_client, start_server
from netdojo.tools.spec import Device, ToolArguments, ToolSpec

if TYPE_CHECKING:
    from netdojo.labs.runtime import LiveLab
    from netdojo.tools.lab_tools import LabTools

SERVICE_TIMEOUT_S = 40
MAX_OUTPUT = 2000
REFUSED_WORDS = (
    "script", "file", "dir", "addn", "tftp", "server", "user", "group", "bus", "dump", "lua",
)  # fmt: skip
"""Option names a server file may not use: dnsmasq runs scripts, reads and writes files, and
forwards beyond the lab with them."""
FIXED = {"pid-file", "log-facility", "dhcp-leasefile"}  # allowed with the lab's own value


def config_problem(text: str) -> str | None:
    """Why a server file is refused, if it is: an option that runs a program, touches another
    file, forwards upstream or drops privileges, or a fixed path changed."""
    for line in text.splitlines():
        key = line.strip().split("=", 1)[0].strip().lower()
        if not key or key.startswith("#"):
            continue
        if key in FIXED:
            if line.strip() not in DEFAULT_LINES:
                return f"`{key}` keeps the lab's own value"
        elif any(word in key for word in REFUSED_WORDS):
            return f"the option `{key}` is not allowed in a lab service's file"
    return None


class ServiceArguments(ToolArguments):
    device: Device
    service: Literal["dhcp-server", "dns-server", "dhcp-relay", "dhcp-client"]
    config: str | None = Field(
        default=None,
        max_length=20000,
        description="a server's or relay's whole new configuration file (dnsmasq syntax); "
        "omit to restart with the file as it is",
    )

    @field_validator("config")
    @classmethod
    def _allowed(cls, config: str | None) -> str | None:
        if config is not None and (problem := config_problem(config)):
            raise ValueError(problem)
        return config


class ServiceResult(BaseModel):
    device: str
    service: str
    ok: bool = Field(description="the file was written and the restart or renewal was run")
    running: bool | None = Field(
        default=None, description="a server: it came up (if not, `output` says why)"
    )
    output: str = ""
    leased: bool | None = Field(default=None, description="dhcp-client: a lease was obtained")


async def act(lab: LiveLab, arguments: ServiceArguments) -> ServiceResult:
    device, service = arguments.device, arguments.service
    if service == "dhcp-client":
        if arguments.config is not None:
            return ServiceResult(
                device=device, service=service, ok=False, output="a client takes no config"
            )
        done = await lab.exec(device, ["sh", "-c", renew_client()], timeout=SERVICE_TIMEOUT_S)
        output = (done.stdout + done.stderr)[-MAX_OUTPUT:]
        return ServiceResult(
            device=device, service=service, ok=done.exit_code is not None,
            output=output, leased=done.ok,
        )  # fmt: skip
    if arguments.config is not None:
        await lab.write_file(device, SERVER_CONF[service], arguments.config)
    done = await lab.exec(device, ["sh", "-c", start_server(service)], timeout=SERVICE_TIMEOUT_S)
    output = (done.stdout + done.stderr)[-MAX_OUTPUT:]
    return ServiceResult(
        device=device, service=service, ok=done.exit_code is not None, running=done.ok,
        output=output,
    )  # fmt: skip


async def _run(tools: LabTools, arguments: ServiceArguments) -> ServiceResult:
    async def run() -> ServiceResult:
        tools.known_device(arguments.device)
        return await act(tools.lab, arguments)

    return await tools.recorded(SERVICE, arguments, run, lambda result: result.ok)


SERVICE = ToolSpec(
    name="service",
    title="Manage a lab service",
    arguments=ServiceArguments,
    result=ServiceResult,
    description=(
        "Manage the lab's DHCP and DNS servers and DHCP relays (dnsmasq, on routers) and the "
        "hosts' DHCP clients. dhcp-server/dns-server/dhcp-relay: replace its configuration "
        f"file when `config` is given ({', '.join(SERVER_CONF.values())}), then restart it; "
        "the output says why it would not start. dhcp-client (on a host): release the lease "
        "and request a new one."
    ),
    run=_run,
    read_only=False,
    destructive=True,
    act=act,
    refusal_unsafe=True,
)
