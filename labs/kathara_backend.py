"""The one place netdojo creates Kathará's manager, and the labels and limits it adds.

Kathará creates containers and networks through one docker-py client. netdojo wraps two calls
of that client so every object of a netdojo lab carries its owner process (for the reaper, see
`netdojo.labs.owners`), the deployment that created it, a pids limit, a sane open-file limit
(FRR's fork fails with a huge one) and netdojo's seccomp profile (no mounts or namespace
changes, see `netdojo.labs.seccomp`).

A deployment is one call that deploys a lab: it has an id of its own, carried as a label by
every object it creates, and the ids Docker gives those objects are collected as they come. A
failed deployment removes exactly those objects; two labs that share a name (and so Kathará's
lab hash) never share a deployment.
"""

from __future__ import annotations

import logging
import secrets
import threading
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import docker
from docker import DockerClient

from netdojo.labs.errors import LabError, PrerequisiteError
from netdojo.labs.image import device_image
from netdojo.labs.kathara_settings import load_settings
from netdojo.labs.owners import PERSISTENT_OWNER, owner_tag
from netdojo.labs.seccomp import security_opt

OWNER_LABEL = "netdojo.owner"
LAB_LABEL = "netdojo.lab"
DEPLOY_LABEL = "netdojo.deploy"
NOFILE = 4096
EXEC_POOL_SIZE = 32


@dataclass
class Deployment:
    """One call deploying a lab, and the Docker objects it has created so far."""

    lab_hash: str
    name: str
    owner: str
    pids_limits: dict[str, int]
    deploy_id: str = field(default_factory=lambda: secrets.token_hex(8))
    containers: list[str] = field(default_factory=list)
    networks: list[str] = field(default_factory=list)
    stopped: bool = False
    """Set when the deploy is given up: Kathará's next create call fails instead of creating."""


_deployments: dict[str, Deployment] = {}  # by lab hash
_lock = threading.Lock()


def register_lab(
    lab_hash: str, name: str, pids_limits: dict[str, int], persistent: bool = False
) -> Deployment:
    """Open the deployment of a lab before Kathará creates its objects.

    `LabError` if this process already holds a lab with the same hash (the same name).
    """
    deployment = Deployment(
        lab_hash, name, PERSISTENT_OWNER if persistent else owner_tag(), dict(pids_limits)
    )
    with _lock:
        if lab_hash in _deployments:
            raise LabError(f"a lab named {name!r} is already running in this process")
        _deployments[lab_hash] = deployment
    return deployment


def registered(lab_hash: str) -> bool:
    """Whether this process holds a lab with that hash."""
    with _lock:
        return lab_hash in _deployments


def forget_lab(lab_hash: str, deploy_id: str) -> None:
    """Close the deployment ``deploy_id`` (and no other of the same lab hash)."""
    with _lock:
        held = _deployments.get(lab_hash)
        if held is not None and held.deploy_id == deploy_id:
            del _deployments[lab_hash]


def _label(labels: dict[str, str] | None) -> tuple[dict[str, str], Deployment | None]:
    labels = dict(labels or {})
    with _lock:
        deployment = _deployments.get(labels.get("lab_hash", ""))
    labels[OWNER_LABEL] = deployment.owner if deployment else owner_tag()
    labels[LAB_LABEL] = deployment.name if deployment else ""
    labels[DEPLOY_LABEL] = deployment.deploy_id if deployment else ""
    return labels, deployment


def _check_going(deployment: Deployment | None) -> None:
    if deployment is not None and deployment.stopped:
        raise LabError(f"the deploy of lab {deployment.name} was stopped")


def _created(found: list[str], answer: Any) -> Any:
    if isinstance(answer, dict) and answer.get("Id"):
        with _lock:
            found.append(answer["Id"])
    return answer


def _install_hooks(client: DockerClient) -> None:
    api = client.api
    create_container = api.create_container
    create_network = api.create_network

    def container_hook(*args: Any, **kwargs: Any) -> Any:
        labels, deployment = _label(kwargs.get("labels"))
        _check_going(deployment)
        kwargs["labels"] = labels
        host_config = kwargs.get("host_config")
        if host_config is not None:
            limits = deployment.pids_limits if deployment else {}
            host_config["PidsLimit"] = limits.get(labels.get("name", ""), 256)
            ulimits = list(host_config.get("Ulimits") or [])
            if not any(limit["Name"] == "nofile" for limit in ulimits):
                ulimits.append({"Name": "nofile", "Soft": NOFILE, "Hard": NOFILE})
            host_config["Ulimits"] = ulimits
            host_config["SecurityOpt"] = [*(host_config.get("SecurityOpt") or []), security_opt()]
        answer = create_container(*args, **kwargs)
        return _created(deployment.containers, answer) if deployment else answer

    def network_hook(*args: Any, **kwargs: Any) -> Any:
        labels, deployment = _label(kwargs.get("labels"))
        _check_going(deployment)
        kwargs["labels"] = labels
        answer = create_network(*args, **kwargs)
        return _created(deployment.networks, answer) if deployment else answer

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
