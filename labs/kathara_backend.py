"""The one place netdojo creates Kathará's manager, and the labels and limits it adds.

Kathará creates containers and networks through one docker-py client. netdojo wraps two calls
of that client so every object of a netdojo lab carries its owner process (for the reaper), a
pids limit, a sane open-file limit (FRR's fork fails with a huge one) and netdojo's seccomp
profile (no mounts or namespace changes, see `netdojo.labs.seccomp`).
"""

from __future__ import annotations

import logging
import os
import threading
from functools import cache
from typing import Any

import docker
from docker import DockerClient

from netdojo.labs.errors import PrerequisiteError
from netdojo.labs.image import device_image
from netdojo.labs.kathara_settings import load_settings
from netdojo.labs.seccomp import security_opt

OWNER_LABEL = "netdojo.owner"
LAB_LABEL = "netdojo.lab"
NOFILE = 4096
EXEC_POOL_SIZE = 32

PERSISTENT_OWNER = "persistent"
"""Owner of labs started from the command line: kept until `netdojo lab down`, never reaped."""

_lab_names: dict[str, str] = {}
_lab_owners: dict[str, str] = {}
_pids_limits: dict[str, int] = {}
_lock = threading.Lock()


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
    return f"{pid}:{process_start(pid)}"


def owner_alive(tag: str) -> bool:
    """Whether the owner of a lab is still running (persistent labs always count as alive)."""
    if tag == PERSISTENT_OWNER:
        return True
    pid, _, start = tag.partition(":")
    return pid.isdigit() and process_start(int(pid)) == start


def register_lab(
    lab_hash: str, name: str, pids_limits: dict[str, int], persistent: bool = False
) -> None:
    """Remember a lab's name, owner and pids limits before Kathará creates its objects."""
    with _lock:
        _lab_names[lab_hash] = name
        _lab_owners[lab_hash] = PERSISTENT_OWNER if persistent else owner_tag()
        for device, limit in pids_limits.items():
            _pids_limits[f"{device}/{lab_hash}"] = limit


def forget_lab(lab_hash: str) -> None:
    with _lock:
        _lab_names.pop(lab_hash, None)
        _lab_owners.pop(lab_hash, None)
        for key in [k for k in _pids_limits if k.endswith(f"/{lab_hash}")]:
            del _pids_limits[key]


def _label(labels: dict[str, str] | None) -> dict[str, str]:
    labels = dict(labels or {})
    lab_hash = labels.get("lab_hash", "")
    with _lock:
        labels[OWNER_LABEL] = _lab_owners.get(lab_hash) or owner_tag()
        labels[LAB_LABEL] = _lab_names.get(lab_hash, "")
    return labels


def _install_hooks(client: DockerClient) -> None:
    api = client.api
    create_container = api.create_container
    create_network = api.create_network

    def container_hook(*args: Any, **kwargs: Any) -> Any:
        labels = _label(kwargs.get("labels"))
        kwargs["labels"] = labels
        host_config = kwargs.get("host_config")
        if host_config is not None:
            with _lock:
                limit = _pids_limits.get(f"{labels.get('name')}/{labels.get('lab_hash')}", 256)
            host_config["PidsLimit"] = limit
            if not host_config.get("Ulimits"):
                host_config["Ulimits"] = [{"Name": "nofile", "Soft": NOFILE, "Hard": NOFILE}]
            host_config["SecurityOpt"] = [*(host_config.get("SecurityOpt") or []), security_opt()]
        return create_container(*args, **kwargs)

    def network_hook(*args: Any, **kwargs: Any) -> Any:
        kwargs["labels"] = _label(kwargs.get("labels"))
        return create_network(*args, **kwargs)

    api.create_container = container_hook  # type: ignore[method-assign]
    api.create_network = network_hook  # type: ignore[method-assign]


@cache
def manager() -> Any:
    """Kathará's manager, configured from netdojo's settings (created once per process)."""
    from docker.errors import DockerException
    from Kathara.exceptions import DockerPluginError
    from Kathara.manager.Kathara import Kathara

    load_settings(device_image())
    try:
        instance = Kathara.get_instance()
    except (DockerPluginError, DockerException) as exc:
        raise PrerequisiteError(
            f"Kathará cannot start ({exc}); run `netdojo setup` or `netdojo doctor`"
        ) from None
    _install_hooks(instance.manager.client)
    # Kathará sizes its client's pool to the core count; concurrent deploys overflow it, and
    # urllib3 then warns once per extra connection although nothing is lost.
    logging.getLogger("urllib3.connectionpool").setLevel(logging.ERROR)
    return instance


def docker_client() -> DockerClient:
    """The docker-py client Kathará uses (one connection pool per process)."""
    client: DockerClient = manager().manager.client
    return client


@cache
def exec_client() -> DockerClient:
    """A client with a pool wide enough for many concurrent execs (Kathará's has one per core)."""
    return docker.from_env(timeout=120, max_pool_size=EXEC_POOL_SIZE)
