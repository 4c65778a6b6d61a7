"""Live labs: deploy a `LabSpec` as Kathará's objects (`netdojo.labs.deploy`), wait for
readiness, exec, tear down.

Blocking Docker and Kathará calls run in worker threads, so the async API can be used from
servers and episode runners; `deploy_lab` always tears the lab down, on error and on
cancellation too.
"""

from __future__ import annotations

import io
import secrets
import subprocess
import sys
import tarfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from functools import partial
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

import anyio
from docker.errors import APIError, NotFound
from docker.models.containers import Container
from pydantic import BaseModel
from requests.exceptions import ConnectionError as EngineConnectionError

from netdojo.errors import NetdojoError
from netdojo.labs.deploy import deploy
from netdojo.labs.deployment import (
    check_name_free,
    engine_version,
    explain,
    lab_hash,
    objects_of,
    remove_objects,
    sysctl_problems,
)
from netdojo.labs.errors import EngineUnavailable, LabError, LabSpecError, UnknownDeviceError
from netdojo.labs.exec_stream import read_capped
from netdojo.labs.host_read import can_enter, device_path, owned_by, run_entered
from netdojo.labs.kathara_backend import (
    DEPLOY_LABEL,
    OWNER_LABEL,
    Deployment,
    docker_client,
    exec_client,
    forget_lab,
    manager,
    register_lab,
)
from netdojo.labs.kathara_lab import to_kathara
from netdojo.labs.names import check_lab_name
from netdojo.labs.paths import sub_dir
from netdojo.labs.ports import Listener, close_listeners, open_listeners, start_relay, stop_relay
from netdojo.labs.spec import LabSpec

if TYPE_CHECKING:
    from netdojo.labs.k8s.cluster import Cluster

STARTUP_DONE = "/tmp/EOS"
DEFAULT_TIMEOUT_S = 10.0
DEFAULT_MAX_OUTPUT = 64 * 1024
POLL_S = 0.1
STAT_POLL_S = 0.02  # a look from the host costs no engine call
ENGINE_WAIT_S = 120.0  # how long a teardown waits for an engine that does not answer


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

    def __init__(self, spec: LabSpec, name: str, lab_hash: str, deploy_id: str) -> None:
        self.spec = spec
        self.name = name
        self.lab_hash = lab_hash
        self.deploy_id = deploy_id
        """The deployment that created the lab's objects: what its teardown removes."""
        self.timings = Timings()
        self.failures: list[str] = []
        """Docker failures met by this lab's calls: a device that is gone, a silent engine."""
        self._containers: dict[str, Container] = {}
        self.cluster: Cluster | None = None
        """The Kubernetes cluster of a lab whose spec has a workload."""

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
            found = docker_client().containers.list(all=True, filters=self._selector())
        self._containers = {c.labels["name"]: c for c in found}
        missing = set(self.devices) - set(self._containers)
        if missing:
            raise LabError(f"lab {self.name}: devices without a container: {sorted(missing)}")

    def _selector(self) -> dict[str, list[str]]:
        return {"label": [f"{DEPLOY_LABEL}={self.deploy_id}", "app=kathara"]}

    def init_pids(self) -> dict[str, int]:
        """Each device's first process on the host, as its container was last read."""
        return {name: int(c.attrs["State"]["Pid"]) for name, c in self._containers.items()}

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
                out, err, truncated = read_capped(api, exec_id, max_output)
                code = api.exec_inspect(exec_id).get("ExitCode")
        except (APIError, NotFound) as exc:
            raise self._failed(LabError(f"exec in {device} failed: {exc}")) from None
        duration = time.monotonic() - started
        timed_out = _timed_out(code, duration, timeout)
        return _result(device, argv, code, out, err, truncated, duration, timed_out)

    def exec_entered_sync(
        self,
        device: str,
        argv: list[str],
        timeout: float = DEFAULT_TIMEOUT_S,
        max_output: int = DEFAULT_MAX_OUTPUT,
    ) -> ExecResult:
        """The judge's own command in a device, entered from the host (`netdojo.labs.host_read`)
        when this process may and the device's first process is still its container's; a
        Docker exec otherwise. Never for an agent's command."""
        container = self._container(device)
        pid = int(container.attrs["State"]["Pid"])
        if not can_enter() or not owned_by(pid, container.id):
            return self.exec_sync(device, argv, timeout, max_output)
        started = time.monotonic()
        code, out, err, truncated = run_entered(pid, argv, timeout, max_output)
        duration = time.monotonic() - started
        timed_out = (code is None and not truncated) or _timed_out(code, duration, timeout)
        return _result(device, argv, code, out, err, truncated, duration, timed_out)

    async def exec_entered(
        self,
        device: str,
        argv: list[str],
        timeout: float = DEFAULT_TIMEOUT_S,
        max_output: int = DEFAULT_MAX_OUTPUT,
    ) -> ExecResult:
        return await anyio.to_thread.run_sync(
            partial(self.exec_entered_sync, device, argv, timeout, max_output),
            abandon_on_cancel=True,
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
            found = exec_client().api.containers(all=True, filters=self._selector())
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
        """Wait until every device has finished its startup commands (polled concurrently,
        from the host when this process may look into devices, by Docker exec otherwise)."""
        done: set[str] = set()

        async def wait_one(device: str) -> None:
            container = self._container(device)
            seen = device_path(int(container.attrs["State"]["Pid"]), container.id, STARTUP_DONE)
            while not (
                seen.exists()
                if seen is not None
                else (await self.exec(device, ["test", "-e", STARTUP_DONE], timeout=5)).ok
            ):
                await anyio.sleep(POLL_S if seen is None else STAT_POLL_S)
            done.add(device)

        try:
            with anyio.fail_after(deadline_s):
                async with anyio.create_task_group() as group:
                    for device in self.devices:
                        group.start_soon(wait_one, device)
        except TimeoutError:
            late = ", ".join(d for d in self.devices if d not in done)
            raise LabError(
                f"lab {self.name}: {late} did not finish the startup commands within "
                f"{deadline_s:.0f}s (see /var/log/startup.log in the device)"
            ) from None

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


def _result(
    device: str,
    argv: list[str],
    code: int | None,
    out: bytes,
    err: bytes,
    truncated: bool,
    duration: float,
    timed_out: bool,
) -> ExecResult:
    return ExecResult(
        device=device,
        argv=list(argv),
        exit_code=code,
        stdout=out.decode(errors="replace"),
        stderr=err.decode(errors="replace"),
        duration_s=round(duration, 4),
        timed_out=timed_out,
        truncated=truncated,
    )


def _timed_out(code: int | None, duration: float, timeout: float) -> bool:
    """Whether ``timeout`` ended the command: its exit code, once the time was up."""
    return code in (124, 137) and duration >= timeout


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
    identity = lab_hash(name)
    selector = {"label": [f"lab_hash={identity}", OWNER_LABEL]}
    try:
        found = exec_client().api.containers(all=True, filters=selector)
    except EngineConnectionError:
        raise EngineUnavailable(f"lab {name}: the Docker engine did not answer") from None
    deployments = {c["Labels"].get(DEPLOY_LABEL, "") for c in found}
    if len(deployments) != 1:
        raise LabError(
            f"lab {name!r} has no devices left; remove it with `netdojo lab down {name}`"
        )
    live = LiveLab(spec, name, identity, deployments.pop())
    live._attach()
    return live


async def start_lab(spec: LabSpec, name: str | None = None, persistent: bool = False) -> LiveLab:
    """Deploy ``spec`` and wait for its startup commands; the caller must `stop_lab` it.

    A ``persistent`` lab outlives this process (the reaper leaves it alone). A name in use is
    refused before anything is created. A deploy that fails or is cancelled removes what it
    created and nothing else; Kathará's and Docker's errors become a `LabError` naming the cause.
    """
    name = name or unique_name(spec.name)
    check_lab_name(name)
    kathara = await anyio.to_thread.run_sync(manager)
    identity = lab_hash(name)
    pids = {d.name: d.limits.pids for d in spec.devices}
    deployment = register_lab(identity, name, pids, persistent=persistent)
    live = LiveLab(spec, name, identity, deployment.deploy_id)
    listeners: list[Listener] = []
    recorded = False
    started = time.monotonic()
    try:
        if spec.kubernetes is not None:
            from netdojo.labs.k8s.cluster import launch_cluster

            live.cluster = launch_cluster(name, spec.kubernetes, persistent)
        await anyio.to_thread.run_sync(_preflight, spec, name)
        listeners = open_listeners(spec)
        klab = await anyio.to_thread.run_sync(partial(to_kathara, spec, name, files=False))
        await _deploy(kathara, klab, spec, deployment)
        await anyio.to_thread.run_sync(live._attach)
        start_relay(deployment.deploy_id, listeners, live.init_pids())
        _spec_file(name).write_text(spec.model_dump_json())
        recorded = True
        live.timings.deploy_s = time.monotonic() - started
        started = time.monotonic()
        await live.wait_startup()
        if live.cluster is not None:
            from netdojo.labs.k8s.cluster import populate

            await populate(live.cluster, live)
        live.timings.startup_s = time.monotonic() - started
    except BaseException as exc:
        with anyio.CancelScope(shield=True):
            close_listeners(listeners)
            try:
                if live.cluster is not None:
                    live.cluster.stop()
                await _remove_deployment(
                    deployment.deploy_id, deployment.containers, deployment.networks
                )
            finally:
                forget_lab(identity, deployment.deploy_id)
                if recorded:
                    _spec_file(name).unlink(missing_ok=True)
        if isinstance(exc, Exception) and not isinstance(exc, NetdojoError):
            raise LabError(f"lab {name} could not be deployed: {explain(exc)}") from exc
        raise
    return live


async def _deploy(kathara: Any, klab: Any, spec: LabSpec, deployment: Deployment) -> None:
    """netdojo's deploy in a worker thread. Cancelled, it stops creating objects and is waited
    for, so nothing it creates can appear after the cleanup that follows."""
    finished = anyio.Event()

    def work() -> None:
        try:
            deploy(kathara, klab, spec, deployment)
        finally:
            anyio.from_thread.run_sync(finished.set)

    try:
        await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
    except BaseException:
        deployment.stopped = True
        with anyio.CancelScope(shield=True):
            await finished.wait()
        raise


def _preflight(spec: LabSpec, name: str) -> None:
    """What refuses a lab before anything of it exists."""
    check_name_free(name)
    problems = sysctl_problems(spec, engine_version())
    if problems:
        raise LabSpecError(problems)


async def _remove_deployment(
    deploy_id: str,
    containers: list[str] | None = None,
    networks: list[str] | None = None,
    engine_wait_s: float = ENGINE_WAIT_S,
) -> None:
    """Remove what deployment ``deploy_id`` created: its relay, containers, then networks.

    While the engine does not answer (restarting, say), retry for up to ``engine_wait_s``:
    a lab must not outlive a short outage of the engine.
    """
    started = time.monotonic()
    stop_relay(deploy_id)
    while True:
        try:
            found = await anyio.to_thread.run_sync(
                objects_of, deploy_id, containers or [], networks or []
            )
            await anyio.to_thread.run_sync(remove_objects, *found)
            return
        except Exception as exc:
            if not engine_down(exc) or time.monotonic() - started > engine_wait_s:
                raise
            await anyio.sleep(1.0)


async def stop_lab(live: LiveLab, engine_wait_s: float = ENGINE_WAIT_S) -> None:
    """Remove the lab's containers and networks: those of its deployment, and nothing else
    (netdojo devices have no shutdown scripts)."""
    started = time.monotonic()
    try:
        if live.cluster is not None:
            live.cluster.stop()
        await _remove_deployment(live.deploy_id, engine_wait_s=engine_wait_s)
    finally:
        forget_lab(live.lab_hash, live.deploy_id)
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
    if live.cluster is not None:
        live.cluster.stop()
    child = subprocess.Popen(
        [sys.executable, "-m", "netdojo.labs.teardown", live.name],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    forget_lab(live.lab_hash, live.deploy_id)
    return child.pid


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
