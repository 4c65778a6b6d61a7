"""Who owns a lab: a process, named by a tag the reaper can check wherever it runs.

A tag is ``pid:start`` (the process id and the kernel's start time of the process, so a
reused id never passes for the owner); a process in a container adds ``@<container id>``,
since its id is its container's and means another process on the host. Whether an owner is
alive is answered from where the question is asked:

* same place (both on the host, or both in one container): the process is looked up;
* a container's process, asked elsewhere: its container must be running, and asked from the
  host, the container's processes must hold one with that id (innermost) and start time;
* a host process, asked from a container: the host's processes cannot be seen, so it counts
  as alive. A process in a container never reaps the labs of the host's processes.

Anything in doubt counts as alive: a live lab is never removed on a guess.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import docker
from docker.errors import DockerException, NotFound

from netdojo.labs.container import own_container

PERSISTENT_OWNER = "persistent"
"""Owner of labs started from the command line: kept until `netdojo lab down`, never reaped."""
ENGINE_TIMEOUT_S = 10


@dataclass(frozen=True)
class Owner:
    pid: int
    start: str
    container: str | None = None


def process_start(pid: int) -> str | None:
    """The kernel's start time of ``pid`` (clock ticks since boot), or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return fields[19]


def owner_tag(pid: int | None = None) -> str:
    pid = os.getpid() if pid is None else pid
    container = own_container()
    where = f"@{container}" if container else ""
    return f"{pid}:{process_start(pid)}{where}"


def parse_owner(tag: str) -> Owner | None:
    """The owner a tag names, or None for a tag that names none (persistent or malformed)."""
    process, _, container = tag.partition("@")
    pid, _, start = process.partition(":")
    if not pid.isdigit() or not start:
        return None
    return Owner(int(pid), start, container or None)


def owner_alive(tag: str) -> bool:
    """Whether the owner of a lab is still running (persistent labs always count as alive)."""
    if tag == PERSISTENT_OWNER:
        return True
    owner = parse_owner(tag)
    if owner is None:
        return False
    here = own_container()
    if owner.container == here:
        return process_start(owner.pid) == owner.start
    if owner.container is None:
        return True
    return _alive_in_container(owner, here is None)


def _alive_in_container(owner: Owner, on_host: bool) -> bool:
    assert owner.container is not None
    try:
        client = docker.from_env(timeout=ENGINE_TIMEOUT_S)
        try:
            container = client.api.inspect_container(owner.container)
            if not container["State"]["Running"]:
                return False
            if not on_host:
                return True
            top = client.api.top(owner.container)
        finally:
            client.close()
    except NotFound:
        return False
    except DockerException:
        return True
    titles = top.get("Titles") or []
    if "PID" not in titles:
        return True
    column = titles.index("PID")
    return any(_is(int(row[column]), owner) for row in top.get("Processes") or [])


def _is(host_pid: int, owner: Owner) -> bool:
    """Whether the host's process ``host_pid`` is ``owner``: its innermost process id and its
    start time."""
    try:
        with open(f"/proc/{host_pid}/status") as status:
            line = next((line for line in status if line.startswith("NSpid:")), "")
    except OSError:
        return False
    ids = line.split()[1:]
    return bool(ids) and ids[-1] == str(owner.pid) and process_start(host_pid) == owner.start
