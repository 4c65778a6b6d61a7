"""The `service` tool: the lab's DHCP and DNS servers (dnsmasq) and the hosts' DHCP clients.

On a router, it replaces a server's configuration file when given one, then restarts the
server and says whether it came up (dnsmasq names the line it refuses); on a host, it gives
up the lease and asks for a new one, as the host does at boot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from netdojo.scenarios.services import SERVER_CONF, renew_client, start_server
from netdojo.tools.spec import Device, ToolArguments, ToolSpec

if TYPE_CHECKING:
    from netdojo.labs.runtime import LiveLab
    from netdojo.tools.lab_tools import LabTools

SERVICE_TIMEOUT_S = 40
MAX_OUTPUT = 2000


class ServiceArguments(ToolArguments):
    device: Device
    service: Literal["dhcp-server", "dns-server", "dhcp-client"]
    config: str | None = Field(
        default=None,
        max_length=20000,
        description="a server's whole new configuration file (dnsmasq syntax); omit to "
        "restart with the file as it is",
    )


class ServiceResult(BaseModel):
    device: str
    service: str
    ok: bool = Field(description="the server is running again, or the client asked anew")
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
    return ServiceResult(device=device, service=service, ok=done.ok, output=output)


async def _run(tools: LabTools, arguments: ServiceArguments) -> ServiceResult:
    async def run() -> ServiceResult:
        tools.known_device(arguments.device)
        return await act(tools.lab, arguments)

    return await tools.recorded(SERVICE, arguments, run)


SERVICE = ToolSpec(
    name="service",
    title="Manage a lab service",
    arguments=ServiceArguments,
    result=ServiceResult,
    description=(
        "Manage the lab's DHCP and DNS servers (dnsmasq, on routers) and the hosts' DHCP "
        "clients. dhcp-server/dns-server: replace the server's configuration file when "
        f"`config` is given ({', '.join(SERVER_CONF.values())}), then restart it; the output "
        "says why it would not start. dhcp-client (on a host): release the lease and request "
        "a new one."
    ),
    run=_run,
    read_only=False,
    destructive=True,
    act=act,
)
