"""Live labs: deploy a `LabSpec` through Kathará, wait for readiness, exec, tear down.

Blocking Docker and Kathará calls run in worker threads, so the async API can be used from
servers and episode runners; `deploy_lab` always tears the lab down, on error and on
cancellation too.
"""

from __future__ import annotations

import contextlib
import io
import os
import secrets
import signal
import subprocess
import sys
import tarfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from functools import partial
from pathlib import Path, PurePosixPath
from typing import Any

import anyio
from docker.errors import APIError, NotFound
from docker.models.containers import Container
from pydantic import BaseModel
from requests.exceptions import ConnectionError as EngineConnectionError

from netdojo.labs.errors import EngineUnavailable, LabError, UnknownDeviceError
from netdojo.labs.image import device_image
from netdojo.labs.kathara_backend import (
    docker_client,
    exec_client,
    forget_lab,
    manager,
    register_lab,
)
from netdojo.labs.paths import sub_dir
from netdojo.labs.spec import DEFAULT_IMAGE, LabSpec

OFFICIAL_IMAGES = ("kathara/frr", "kathara/base", "kathara/quagga")
STARTUP_DONE = "/tmp/EOS"
DEFAULT_TIMEOUT_S = 10.0
DEFAULT_MAX_OUTPUT = 64 * 1024
STDERR = 2  # the stream byte of an exec frame that carries standard error
POLL_S = 0.1
ENGINE_WAIT_S = 120.0  # how long a teardown waits for an engine that does not answer
LOCAL_RESOLVER = "printf 'nameserver 127.0.0.1\\n' > /etc/resolv.conf"
"""First startup line of every device. Docker points a device at its embedded resolver, which
forwards unknown names to the host's resolvers; a device resolves nothing outside itself."""


class ExecResult(BaseModel):
    device: str
    argv: list[str]
    exit_code: int | None
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


class Timings(BaseModel):
    deploy_s: float = 0.0
    startup_s: float = 0.0
    converge_s: float = 0.0
    undeploy_s: float = 0.0


class LiveLab:
    """A deployed lab: exec, files and FRR control by device name."""

    def __init__(self, spec: LabSpec, name: str, lab_hash: str) -> None:
        self.spec = spec
        self.name = name
        self.lab_hash = lab_hash
        self.timings = Timings()
        self.failures: list[str] = []
        """Docker failures met by this lab's calls: a device that is gone, a silent engine."""
        self._containers: dict[str, Container] = {}

    @property
    def devices(self) -> list[str]:
        return [d.name for d in self.spec.devices]

    def _container(self, device: str) -> Container:
        try:
            return self._containers[device]
        except KeyError:
            raise UnknownDeviceError(device, self.devices) from None

    def _failed(self, error: LabError) -> LabError:
        self.failures.append(str(error))
        return error

    @contextmanager
    def _engine(self, what: str) -> Iterator[None]:
        """Turn a connection failure to the Docker engine into `EngineUnavailable`."""
        try:
            yield
        except EngineConnectionError:
            raise self._failed(
                EngineUnavailable(f"{what}: the Docker engine did not answer")
            ) from None

    def _attach(self) -> None:
        with self._engine(f"lab {self.name}"):
            found = docker_client().containers.list(
                all=True, filters={"label": [f"lab_hash={self.lab_hash}", "app=kathara"]}
            )
        self._containers = {c.labels["name"]: c for c in found}
        missing = set(self.devices) - set(self._containers)
        if missing:
            raise LabError(f"lab {self.name}: devices without a container: {sorted(missing)}")

    # exec ------------------------------------------------------------------------------
    def exec_sync(
        self,
        device: str,
        argv: list[str],
        timeout: float = DEFAULT_TIMEOUT_S,
        max_output: int = DEFAULT_MAX_OUTPUT,
    ) -> ExecResult:
        """Run ``argv`` in ``device`` without a shell; ``timeout`` kills it inside the device."""
        container = self._container(device)
        api = exec_client().api
        wrapped = ["timeout", "-k", "1", f"{timeout:g}", *argv]
        started = time.monotonic()
        try:
            with self._engine(f"exec in {device}"):
                exec_id = api.exec_create(container.id, wrapped, stdout=True, stderr=True)["Id"]
                out, err, truncated = _read_capped(api, exec_id, max_output)
                code = api.exec_inspect(exec_id).get("ExitCode")
        except (APIError, NotFound) as exc:
            raise self._failed(LabError(f"exec in {device} failed: {exc}")) from None
        duration = time.monotonic() - started
        return ExecResult(
            device=device,
            argv=list(argv),
            exit_code=code,
            stdout=out.decode(errors="replace"),
            stderr=err.decode(errors="replace"),
            duration_s=round(duration, 4),
            timed_out=code in (124, 137) and duration >= timeout,
            truncated=truncated,
        )

    async def exec(
        self,
        device: str,
        argv: list[str],
        timeout: float = DEFAULT_TIMEOUT_S,
        max_output: int = DEFAULT_MAX_OUTPUT,
    ) -> ExecResult:
        # A docker API call that hangs must not hold the caller past its own deadline.
        return await anyio.to_thread.run_sync(
            partial(self.exec_sync, device, argv, timeout, max_output), abandon_on_cancel=True
        )

    # files -----------------------------------------------------------------------------
    def read_bytes_sync(self, device: str, path: str) -> bytes:
        try:
            with self._engine(f"reading {path} in {device}"):
                stream, _ = self._container(device).get_archive(path)
        except NotFound:
            raise LabError(f"{device}: no such file {path}") from None
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
            member = tar.extractfile(tar.getmembers()[0])
            if member is None:
                raise LabError(f"{device}: {path} is not a regular file")
            return member.read()

    def read_file_sync(self, device: str, path: str) -> str:
        return self.read_bytes_sync(device, path).decode(errors="replace")

    def write_file_sync(self, device: str, path: str, content: str, mode: int = 0o644) -> None:
        target = PurePosixPath(path)
        data = content.encode()
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            info = tarfile.TarInfo(target.name)
            info.size, info.mode, info.mtime = len(data), mode, int(time.time())
            tar.addfile(info, io.BytesIO(data))
        container = self._container(device)
        with self._engine(f"writing {path} in {device}"):
            container.exec_run(["mkdir", "-p", str(target.parent)])
            written = container.put_archive(str(target.parent), buffer.getvalue())
        if not written:
            raise LabError(f"{device}: writing {path} failed")

    async def read_bytes(self, device: str, path: str) -> bytes:
        return await anyio.to_thread.run_sync(self.read_bytes_sync, device, path)

    async def read_file(self, device: str, path: str) -> str:
        return await anyio.to_thread.run_sync(self.read_file_sync, device, path)

    async def write_file(self, device: str, path: str, content: str, mode: int = 0o644) -> None:
        await anyio.to_thread.run_sync(partial(self.write_file_sync, device, path, content, mode))

    # FRR -------------------------------------------------------------------------------
    async def restart_frr(self, device: str, daemon: str | None = None) -> ExecResult:
        """Restart all of FRR, or only ``daemon`` (e.g. ``ospfd``)."""
        argv = ["/usr/lib/frr/frrinit.sh", "restart"]
        if daemon is not None:
            argv = ["/usr/lib/frr/watchfrr.sh", "restart", daemon]
        return await self.exec(device, argv, timeout=60)

    async def vtysh(self, device: str, *commands: str, timeout: float = 15) -> ExecResult:
        argv = ["vtysh"]
        for command in commands:
            argv += ["-c", command]
        return await self.exec(device, argv, timeout=timeout)

    # health ----------------------------------------------------------------------------
    def health_sync(self) -> list[str]:
        """What is wrong with the lab's devices: one line per device that is not running."""
        with self._engine(f"lab {self.name}"):
            found = exec_client().api.containers(
                all=True, filters={"label": [f"lab_hash={self.lab_hash}", "app=kathara"]}
            )
        states = {c["Labels"].get("name"): c["State"] for c in found}
        return [
            f"device {device} is {states.get(device, 'gone')}"
            for device in self.devices
            if states.get(device) != "running"
        ]

    async def health(self) -> list[str]:
        return await anyio.to_thread.run_sync(self.health_sync)

    # readiness -------------------------------------------------------------------------
    async def wait_startup(self, deadline_s: float = 120.0) -> None:
        """Wait until every device has finished its startup commands (polled concurrently)."""

        async def wait_one(device: str) -> None:
            while not (await self.exec(device, ["test", "-e", STARTUP_DONE], timeout=5)).ok:
                await anyio.sleep(POLL_S)

        with anyio.fail_after(deadline_s):
            async with anyio.create_task_group() as group:
                for device in self.devices:
                    group.start_soon(wait_one, device)

    async def wait_until(
        self,
        predicate: Callable[[LiveLab], Awaitable[bool]],
        deadline_s: float = 60.0,
        interval_s: float = 0.2,
    ) -> float:
        """Poll ``predicate`` until it holds; returns the seconds it took."""
        started = time.monotonic()
        try:
            with anyio.fail_after(deadline_s):
                while not await predicate(self):
                    await anyio.sleep(interval_s)
        except TimeoutError:
            raise LabError(f"lab {self.name} not ready within {deadline_s:.0f}s") from None
        return time.monotonic() - started


def _exec_frames(api: Any, exec_id: str) -> Iterator[tuple[int, bytes]]:
    """Start an exec and yield its (stream, bytes) frames until it ends.

    docker-py's ``exec_start`` reads the raw socket under the HTTP response, so whatever the
    response's buffer had already taken past the headers (up to 8 KiB of the command's first
    output, when it comes fast) is lost; this reads through that buffer instead.
    """
    response = api._post_json(
        api._url("/exec/{0}/start", exec_id),
        headers={"Connection": "Upgrade", "Upgrade": "tcp"},
        data={"Tty": False, "Detach": False},
        stream=True,
    )
    try:
        api._raise_for_status(response)
        reader = response.raw._fp.fp
        api._disable_socket_timeout(reader.raw)
        while len(header := reader.read(8)) == 8:
            size = int.from_bytes(header[4:8], "big")
            payload = reader.read(size)
            yield header[0], payload
            if len(payload) < size:
                return
    finally:
        response.close()


def _read_capped(api: Any, exec_id: str, max_output: int) -> tuple[bytes, bytes, bool]:
    out, err = bytearray(), bytearray()
    truncated = False
    for stream, data in _exec_frames(api, exec_id):
        if truncated:
            continue
        if stream == STDERR:
            err += data
        else:
            out += data
        if len(out) + len(err) > max_output:
            truncated = True
            pid = api.exec_inspect(exec_id).get("Pid")
            if pid:
                # `timeout` leads its own process group: kill it with the command it runs.
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pid, signal.SIGKILL)
    return bytes(out[:max_output]), bytes(err[: max(0, max_output - len(out))]), truncated


def resolve_image(image: str) -> str:
    """The image a device really runs: netdojo's device image unless an official one is present."""
    if image == DEFAULT_IMAGE:
        return device_image()
    if image.split(":")[0] in OFFICIAL_IMAGES:
        try:
            docker_client().images.get(image)
            return image
        except NotFound:
            return device_image()
    return image


def default_sysctls(interfaces: int) -> dict[str, int]:
    """Kernel settings every device gets.

    Linux lets a socket join 20 multicast groups by default; an OSPF router joins
    AllSPFRouters once per interface, so a hub with more links would lose adjacencies.
    """
    return {"net.ipv4.igmp_max_memberships": max(20, 4 * interfaces)}


def to_kathara(spec: LabSpec, name: str) -> Any:
    """Build Kathará's in-memory `Lab` for ``spec`` under the unique ``name``."""
    from Kathara.model.Lab import Lab

    lab = Lab(name)
    interfaces = Counter(device for link in spec.links for device, _ in link.endpoints)
    for dev in spec.devices:
        machine = lab.new_machine(
            dev.name,
            image=resolve_image(dev.image),
            mem=f"{dev.limits.memory_mib}m",
            cpus=dev.limits.cpus,
            ipv6=dev.ipv6,
        )
        for key, value in {**default_sysctls(interfaces[dev.name]), **dev.sysctls}.items():
            machine.add_meta("sysctl", f"{key}={value}")
        for path, content in dev.files.items():
            machine.create_file_from_string(content, path)
        lab.create_startup_file_from_list(machine, [LOCAL_RESOLVER, *dev.startup])
    for link in spec.links:
        for device, index in link.endpoints:
            lab.connect_machine_to_link(device, link.name, machine_iface_number=index)
    return lab


def unique_name(base: str) -> str:
    return f"{base}-{secrets.token_hex(3)}"


def _spec_file(name: str) -> Path:
    return sub_dir("labs") / f"{name}.json"


def find_lab(name: str) -> LiveLab:
    """Attach to a running netdojo lab by its deployed name."""
    path = _spec_file(name)
    if not path.exists():
        known = sorted(p.stem for p in sub_dir("labs").glob("*.json"))
        raise LabError(f"no lab named {name!r}; labs: {', '.join(known) or 'none'}")
    spec = LabSpec.model_validate_json(path.read_text())
    from Kathara.model.Lab import Lab

    live = LiveLab(spec, name, Lab(name).hash)
    live._attach()
    return live


async def start_lab(spec: LabSpec, name: str | None = None, persistent: bool = False) -> LiveLab:
    """Deploy ``spec`` and wait for its startup commands; the caller must `stop_lab` it.

    A ``persistent`` lab outlives this process (the reaper leaves it alone).
    """
    kathara = await anyio.to_thread.run_sync(manager)
    klab = to_kathara(spec, name or unique_name(spec.name))
    pids = {d.name: d.limits.pids for d in spec.devices}
    register_lab(klab.hash, klab.name, pids, persistent=persistent)
    _spec_file(klab.name).write_text(spec.model_dump_json())
    live = LiveLab(spec, klab.name, klab.hash)
    started = time.monotonic()
    try:
        await anyio.to_thread.run_sync(kathara.deploy_lab, klab)
        await anyio.to_thread.run_sync(live._attach)
        live.timings.deploy_s = time.monotonic() - started
        started = time.monotonic()
        await live.wait_startup()
        live.timings.startup_s = time.monotonic() - started
    except BaseException:
        with anyio.CancelScope(shield=True):
            await stop_lab(live)
        raise
    return live


async def stop_lab(live: LiveLab, engine_wait_s: float = ENGINE_WAIT_S) -> None:
    """Remove the lab's containers and networks directly (netdojo devices have no shutdown
    scripts), then let Kathará sweep whatever it still knows of.

    While the engine does not answer (restarting, say), retry for up to ``engine_wait_s``:
    a lab must not outlive a short outage of the engine.
    """
    started = time.monotonic()
    try:
        while True:
            try:
                kathara = await anyio.to_thread.run_sync(manager)
                await _remove_objects(live.lab_hash)
                await anyio.to_thread.run_sync(
                    partial(kathara.undeploy_lab, lab_hash=live.lab_hash)
                )
                break
            except Exception as exc:
                if not engine_down(exc) or time.monotonic() - started > engine_wait_s:
                    raise
                await anyio.sleep(1.0)
    finally:
        forget_lab(live.lab_hash)
        _spec_file(live.name).unlink(missing_ok=True)
    live.timings.undeploy_s = time.monotonic() - started


def engine_down(exc: BaseException) -> bool:
    """Whether ``exc`` (or every error in a group) says the engine did not answer."""
    if isinstance(exc, BaseExceptionGroup):
        return all(engine_down(inner) for inner in exc.exceptions)
    return isinstance(exc, EngineConnectionError | EngineUnavailable)


def stop_lab_detached(live: LiveLab) -> int:
    """Hand the teardown to a process of its own and return its pid.

    For a process about to exit: an MCP client that closes a stdio server allows it about two
    seconds before killing its process group, which a lab's teardown can outlast.
    """
    child = subprocess.Popen(
        [sys.executable, "-m", "netdojo.labs.teardown", live.name],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    forget_lab(live.lab_hash)
    return child.pid


async def _remove_objects(lab_hash: str) -> None:
    """Force-remove the lab's containers in parallel, then its networks in parallel."""
    api = exec_client().api
    labels = {"label": [f"lab_hash={lab_hash}", "app=kathara"]}

    async def remove_all(listing: Callable[..., Any], remove: Callable[[str], Any]) -> None:
        found = await anyio.to_thread.run_sync(partial(listing, filters=labels))
        async with anyio.create_task_group() as group:
            for item in found:
                group.start_soon(_quietly, remove, item["Id"])

    await remove_all(
        partial(api.containers, all=True), partial(api.remove_container, v=True, force=True)
    )
    await remove_all(api.networks, api.remove_network)


async def _quietly(remove: Callable[[str], Any], object_id: str) -> None:
    with contextlib.suppress(NotFound):
        await anyio.to_thread.run_sync(remove, object_id)


@asynccontextmanager
async def deploy_lab(
    spec: LabSpec,
    converged: Callable[[LiveLab], Awaitable[bool]] | None = None,
    converge_deadline_s: float = 60.0,
    name: str | None = None,
) -> AsyncIterator[LiveLab]:
    """Deploy ``spec``, wait until ready (startup done, then ``converged``), always tear down."""
    live = await start_lab(spec, name)
    try:
        if converged is not None:
            live.timings.converge_s = await live.wait_until(converged, converge_deadline_s)
        yield live
    finally:
        with anyio.CancelScope(shield=True):
            await stop_lab(live)
