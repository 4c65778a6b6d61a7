"""What a person sees of a live lab's devices: their state, image and interfaces (with link,
MAC and addresses, read from the devices), and the command that opens a shell in one."""

from __future__ import annotations

import json
import os
import shlex
import shutil

import anyio
from pydantic import BaseModel

from netdojo.labs.errors import LabError, UnknownDeviceError
from netdojo.labs.kathara_backend import exec_client
from netdojo.labs.runtime import LiveLab

DEFAULT_SHELL = "/bin/bash"


class InterfaceInfo(BaseModel):
    name: str
    link: str
    mac: str = ""
    addresses: list[str] = []


class DeviceInfo(BaseModel):
    name: str
    state: str
    image: str
    interfaces: list[InterfaceInfo]


async def describe(live: LiveLab) -> list[DeviceInfo]:
    """Every device of ``live`` in spec order; addresses are read from running devices."""
    found = await anyio.to_thread.run_sync(_containers, live)
    devices: dict[str, DeviceInfo] = {}

    async def one(device: str) -> None:
        state, image = found.get(device, ("gone", ""))
        interfaces = [
            InterfaceInfo(name=f"eth{index}", link=link)
            for index, link in live.spec.interfaces(device)
        ]
        if state == "running":
            shown = await live.exec(device, ["ip", "-j", "address", "show"], timeout=5)
            _fill(interfaces, shown.stdout if shown.ok else "")
        devices[device] = DeviceInfo(name=device, state=state, image=image, interfaces=interfaces)

    async with anyio.create_task_group() as group:
        for device in live.devices:
            group.start_soon(one, device)
    return [devices[device] for device in live.devices]


def _containers(live: LiveLab) -> dict[str, tuple[str, str]]:
    listed = exec_client().api.containers(all=True, filters=live._selector())
    return {c["Labels"].get("name", ""): (c["State"], c["Image"]) for c in listed}


def _fill(interfaces: list[InterfaceInfo], ip_json: str) -> None:
    """MACs and addresses (IPv4 and global IPv6) from ``ip -j address show``."""
    try:
        links = {entry["ifname"]: entry for entry in json.loads(ip_json)}
    except (ValueError, TypeError, KeyError):
        return
    for interface in interfaces:
        entry = links.get(interface.name, {})
        interface.mac = str(entry.get("address", ""))
        interface.addresses = [
            f"{addr['local']}/{addr['prefixlen']}"
            for addr in entry.get("addr_info", [])
            if addr.get("scope") != "link" and "local" in addr
        ]


def connect_argv(live: LiveLab, device: str) -> list[str]:
    """``docker exec -it`` with the device's shell: the engine attaches a real terminal."""
    if device not in live.devices:
        raise UnknownDeviceError(device, live.devices)
    container = live._container(device)
    container.reload()
    if container.status != "running":
        raise LabError(f"device {device} of lab {live.name} is {container.status}, not running")
    docker = shutil.which("docker")
    if docker is None:
        raise LabError("`lab connect` needs the docker command-line client on the PATH")
    shell = shlex.split(container.labels.get("shell") or DEFAULT_SHELL)
    term = ["-e", f"TERM={os.environ['TERM']}"] if os.environ.get("TERM") else []
    return [docker, "exec", "-it", *term, container.id, *shell]
