"""The judge's own commands in a device, run from the host: entered into the device's mount,
network, UTS and process namespaces with ``nsenter``, instead of a Docker exec.

A Docker exec costs three engine calls and a container runtime start, and the judge reads
every device at the start of the agent's turn and at grading, and probes each test's devices.
Entered from the host, the same command runs the device's own binaries on the device's own
files, processes and network, for a fraction of that. It runs with the host's privileges and
outside the device's cgroup, so it is only for the judge's own fixed commands, never for an
agent's.

The device's first process is checked to still belong to its container before entering, so a
reused process id can never send the read to another namespace. A process in a container (the
green agent's image) sees neither the host's process ids nor may it enter namespaces: it reads
devices through Docker.
"""

from __future__ import annotations

import contextlib
import functools
import os
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from netdojo.labs.container import own_container

NSENTER = "nsenter"
BACKSTOP_S = 2.0
"""How long past the command's own timeout the host's ``timeout`` waits before ending it."""
GRACE_S = 5.0
"""How long past its own timeout the host waits for an entered command before killing it."""
STDERR_CAP = 64 * 1024
CHUNK = 64 * 1024


@functools.cache
def can_enter() -> bool:
    """Whether this process may enter a device's namespaces (root on the host, with
    ``nsenter``)."""
    return os.geteuid() == 0 and shutil.which(NSENTER) is not None and own_container() is None


def owned_by(pid: int, container_id: str) -> bool:
    """Whether process ``pid`` runs in the cgroup of the container ``container_id``."""
    try:
        return container_id in Path(f"/proc/{pid}/cgroup").read_text()
    except OSError:
        return False


def device_path(pid: int, container_id: str, path: str) -> Path | None:
    """``path`` in the device whose first process is ``pid``, as the host sees it, when this
    process may look there; None otherwise (then only Docker reaches the device's files)."""
    if not can_enter() or not owned_by(pid, container_id):
        return None
    return Path(f"/proc/{pid}/root{path}")


def entered_argv(pid: int, argv: list[str], timeout: float) -> list[str]:
    """``argv`` in the namespaces of process ``pid``, the process namespace too, so that
    ``/proc/self`` and ``/proc/net`` are the device's (``nsenter`` forks into it).

    The device's own ``timeout`` ends the command and reaps it, so nothing is left behind for
    the device's first process to reap (it may not); the host's ``timeout``, a little later,
    leads the process group of everything and is only the backstop."""
    enter = [NSENTER, "-t", str(pid), "-m", "-n", "-u", "-p", "--"]
    inner = ["timeout", "-k", "1", f"{timeout:g}"]
    return ["timeout", "-k", "1", f"{timeout + BACKSTOP_S:g}", *enter, *inner, *argv]


def run_entered(
    pid: int, argv: list[str], timeout: float, max_output: int
) -> tuple[int | None, bytes, bytes, bool]:
    """Run ``argv`` in the device's namespaces: exit code (None when the host had to kill
    it), standard output and error, and whether the output was cut at ``max_output``."""
    deadline = time.monotonic() + timeout + GRACE_S
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(
            entered_argv(pid, argv, timeout),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=errors,
            start_new_session=True,
        )
        assert process.stdout is not None
        out, finished, truncated = _read(process.stdout.fileno(), deadline, max_output)
        process.stdout.close()
        code: int | None = None
        if finished:
            try:
                code = process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                finished = False
        if not finished:
            # The host's `timeout` leads the process group of everything the command started.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        errors.seek(0)
        err = errors.read(STDERR_CAP)
    return code, out[:max_output], err, truncated


def _read(fd: int, deadline: float, max_output: int) -> tuple[bytes, bool, bool]:
    """Output until end of file (finished), past ``max_output`` (truncated) or the
    deadline."""
    out = bytearray()
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not selector.select(left):
                return bytes(out), False, False
            chunk = os.read(fd, CHUNK)
            if not chunk:
                return bytes(out), True, False
            out += chunk
            if len(out) > max_output:
                return bytes(out), False, True
