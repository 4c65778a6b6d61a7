"""netdojo's deploy of a lab: the networks and containers Kathará would create, scheduled and
filled by netdojo.

Kathará's own deploy is correct but slow where netdojo spends most of a rollout:

* it deploys devices in chunks of one per core, each chunk waiting for its slowest device;
* it uploads every device's files with a Docker archive upload, which the engine serves by
  starting a helper process of its own per device;
* it runs every device's startup commands with one more Docker exec.

This deploy keeps Kathará's objects (it calls Kathará to create each network and container, so
names, labels, driver options and startup commands stay Kathará's) and changes only those
three things. Networks and then devices go through one pool without chunk barriers (one by one
in start order when devices depend on each other). A device's first process carries its files,
as a compressed archive on its command line, unless they are too large for one (then they are
uploaded), and its startup commands: it waits for netdojo's go, given once every interface is
attached, runs them, and becomes the interactive shell a Kathará device runs.
"""

from __future__ import annotations

import base64
import io
import tarfile
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from itertools import islice
from pathlib import PurePosixPath
from typing import Any

from netdojo.labs.host_read import device_path
from netdojo.labs.kathara_backend import Deployment
from netdojo.labs.kathara_lab import LOCAL_RESOLVER
from netdojo.labs.spec import DeviceSpec, LabSpec

POOL_SIZE = 2
"""Devices deployed at once. More only queue in the engine on two cores, and routers that
start their daemons together converge later (measured: the lab is usable sooner with two)."""
INLINE_LIMIT = 96 * 1024
"""Largest archive, base64 encoded, sent on the first process's command line (Linux caps one
argument at 128 KiB); a larger one is uploaded before the device starts."""
GO_MARK = "/tmp/.netdojo-go"
"""Created in a device once all its interfaces are attached: its startup may begin."""
WAIT_POLL_S = 0.02


def device_archive(device: DeviceSpec) -> bytes:
    """A device's files and startup file as Kathará lays them out under ``/hostlab``."""
    members = {
        f"hostlab/{device.name}/{path.lstrip('/')}": content
        for path, content in device.files.items()
    }
    lines = [LOCAL_RESOLVER, *device.startup]
    members[f"hostlab/{device.name}.startup"] = "".join(line + "\n" for line in lines)
    buffer = io.BytesIO()
    now = int(time.time())
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        directories = sorted({str(p) for m in members for p in PurePosixPath(m).parents} - {"."})
        for directory in directories:
            info = tarfile.TarInfo(directory)
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, now
            tar.addfile(info)
        for path, content in members.items():
            data = content.encode()
            info = tarfile.TarInfo(path)
            info.size, info.mode, info.mtime = len(data), 0o644, now
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def unpack_command(archive: bytes) -> str:
    """Shell that unpacks ``archive`` at ``/`` from the command line itself."""
    encoded = base64.b64encode(archive).decode()
    return f"printf %s '{encoded}' | base64 -d | tar xzf - -C / --no-same-owner"


def boot_command(startup: str, shell: str) -> list[str]:
    """A device's first process: wait for the go mark, run ``startup``, become ``shell``."""
    wait = f"while [ ! -e {GO_MARK} ]; do sleep {WAIT_POLL_S:g}; done; rm -f {GO_MARK}"
    return [shell, "-c", f"{wait}; {startup}; exec {shell}"]


def give_go(api: Any, container_id: str) -> None:
    """Let a started device run its startup: the mark is written from the host when this
    process may (no engine call), by a Docker exec otherwise."""
    pid = int(api.inspect_container(container_id)["State"]["Pid"])
    seen = device_path(pid, container_id, GO_MARK)
    if seen is not None:
        seen.touch()
        return
    exec_id = api.exec_create(container_id, ["touch", GO_MARK])["Id"]
    api.exec_start(exec_id)


def deploy(kathara: Any, klab: Any, spec: LabSpec, deployment: Deployment) -> None:
    """Create ``klab``'s networks, then its devices, and let each device run its startup.

    ``klab`` is `to_kathara` of ``spec`` without files or startup (they travel here). The first
    failure stops the deployment: creations not begun are refused, those under way finish, and
    the error is raised for the caller to remove what exists.
    """
    from Kathara.manager.docker.DockerMachine import STARTUP_COMMANDS
    from Kathara.setting.Setting import Setting

    klab.check_integrity()
    docker = kathara.manager
    docker.docker_image.check_from_list({m.get_image() for m in klab.machines.values()})
    archives = {device.name: device_archive(device) for device in spec.devices}
    shell = Setting.get_instance().device_shell

    def start(machine: Any) -> None:
        archive = archives[machine.name]
        inline = len(archive) * 4 // 3 < INLINE_LIMIT
        startup = "; ".join(STARTUP_COMMANDS).format(
            machine_name=machine.name, machine_commands=":"
        )
        if inline:
            startup = f"{unpack_command(archive)}; {startup}"
        machine.add_meta("args", boot_command(startup, shell))
        docker.docker_machine.create(machine)
        container = machine.api_object
        if not inline:
            container.put_archive("/", archive)
        container.start()
        for _, interface in islice(machine.interfaces.items(), 1, None):
            docker.docker_machine.connect_interface(machine, interface)
        give_go(container.client.api, container.id)

    klab.add_option("_mount_volumes", False)
    try:
        _run_all(docker.docker_link.create, klab.links.values(), POOL_SIZE, deployment)
        workers = 1 if klab.has_dependencies else POOL_SIZE
        _run_all(start, klab.machines.values(), workers, deployment)
    finally:
        del klab.general_options["_mount_volumes"]


def _run_all(
    work: Callable[[Any], None], items: Iterable[Any], workers: int, deployment: Deployment
) -> None:
    """``work`` on every item, in order, ``workers`` at a time; the first error stops the rest."""
    errors: list[BaseException] = []
    lock = threading.Lock()

    def guarded(item: Any) -> None:
        if deployment.stopped:
            return
        try:
            work(item)
        except BaseException as exc:
            with lock:
                deployment.stopped = True
                errors.append(exc)

    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(guarded, items))
    if errors:
        raise errors[0]
