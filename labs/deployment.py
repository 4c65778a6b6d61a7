"""What a deployment may touch: checks made before anything exists, the objects a deployment
created, their removal, and failures told in one line.

Kathará knows a lab by the hash of its name, and its deploy reuses the networks and trips over
the containers of any live lab with that hash; cleaning up a failed deploy by that hash would
remove the other lab. So a name in use is refused before anything is created, and removal goes
by deployment (`netdojo.labs.kathara_backend.Deployment`), never by hash.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from docker.errors import APIError, NotFound
from requests.exceptions import ConnectionError as EngineConnectionError

from netdojo.labs.errors import LabError
from netdojo.labs.kathara_backend import (
    DEPLOY_LABEL,
    Deployment,
    docker_client,
    exec_client,
)
from netdojo.labs.spec import INTERFACE_SYSCTL, LabSpec

ENDPOINT_SYSCTLS_SINCE = (27, 0)
"""Docker applies per-interface sysctls as the interface joins only from this version on;
before, they are set when the container is created, when only eth0 exists."""
REMOVE_WORKERS = 8
ENDPOINTS_WAIT_S = 10.0


def lab_hash(name: str) -> str:
    """Kathará's identity of a lab named ``name``."""
    from Kathara.utils import generate_urlsafe_hash

    return str(generate_urlsafe_hash(name))


def name_in_use(name: str) -> bool:
    """Whether objects of a lab with Kathará's identity for ``name`` exist, netdojo's or not.
    (A second lab of the same name in this process is refused when it registers.)"""
    identity = lab_hash(name)
    api = docker_client().api
    selector = {"label": [f"lab_hash={identity}", "app=kathara"]}
    return bool(api.containers(all=True, filters=selector) or api.networks(filters=selector))


def check_name_free(name: str) -> None:
    if name_in_use(name):
        raise LabError(
            f"a lab named {name!r} is already running; give this one another name, "
            f"or take that one down first (netdojo lab down {name})"
        )


def engine_version() -> tuple[int, int]:
    version = str(docker_client().version().get("Version", "0.0"))
    major, minor = [*re.findall(r"\d+", version), "0", "0"][:2]
    return int(major), int(minor)


def sysctl_problems(spec: LabSpec, version: tuple[int, int]) -> list[str]:
    """Per-interface sysctls the engine cannot apply: past eth0 before Docker 27."""
    if version >= ENDPOINT_SYSCTLS_SINCE:
        return []
    problems = []
    for dev in spec.devices:
        for key in dev.sysctls:
            found = INTERFACE_SYSCTL.match(key)
            if found and int(found["index"]) > 0:
                problems.append(
                    f"sysctl {key} of {dev.name!r}: Docker {version[0]}.{version[1]} sets "
                    f"sysctls before eth{found['index']} exists; use the same key with "
                    "'default' in place of the interface (interfaces added later inherit it)"
                )
    return problems


def created_objects(deployment: Deployment) -> tuple[set[str], set[str]]:
    """Containers and networks ``deployment`` created: the ids collected as Docker answered,
    and whatever carries its label (an object whose answer never came back)."""
    return objects_of(deployment.deploy_id, deployment.containers, deployment.networks)


def objects_of(
    deploy_id: str, containers: Iterable[str] = (), networks: Iterable[str] = ()
) -> tuple[set[str], set[str]]:
    api = exec_client().api
    selector = {"label": [f"{DEPLOY_LABEL}={deploy_id}"]}
    found_containers = {c["Id"] for c in api.containers(all=True, filters=selector)}
    found_networks = {n["Id"] for n in api.networks(filters=selector)}
    return found_containers | set(containers), found_networks | set(networks)


def remove_objects(containers: Iterable[str], networks: Iterable[str]) -> None:
    """Force-remove containers, then networks in parallel; gone ones are skipped.

    Containers go in rounds of `removal_rounds`, never two of one network at once: the
    engine (seen on 20.10 under load) can lose one of two endpoint releases of a network that
    race, and the network then reports active endpoints with none left until the engine
    restarts. A network can also report active endpoints for a moment after its containers are
    gone (the engine detaches them behind the removal), so its removal is retried for up to
    `ENDPOINTS_WAIT_S`. One still in use after that is another lab's too (it joined it in a
    race on the same name) and stays.
    """
    api = exec_client().api

    def remove_container(container: str) -> None:
        api.remove_container(container, v=True, force=True)

    def remove_network(network: str) -> None:
        deadline = time.monotonic() + ENDPOINTS_WAIT_S
        while not _quietly(api.remove_network, network, in_use_ok=True):
            if time.monotonic() > deadline:
                return
            time.sleep(0.5)

    with ThreadPoolExecutor(REMOVE_WORKERS) as pool:
        for batch in removal_rounds(networks_of(list(containers))):
            list(pool.map(lambda cid: _quietly(remove_container, cid), batch))
        list(pool.map(remove_network, networks))


def networks_of(containers: list[str]) -> dict[str, set[str]]:
    """The networks each of ``containers`` is attached to (none for one already gone)."""
    found: dict[str, set[str]] = {container: set() for container in containers}
    if not containers:
        return found
    listed = exec_client().api.containers(all=True, filters={"id": containers})
    for container in containers:  # an id given may be short; the engine lists the full one
        for entry in listed:
            if entry["Id"].startswith(container):
                attached = (entry.get("NetworkSettings") or {}).get("Networks") or {}
                found[container] = {str(n.get("NetworkID") or k) for k, n in attached.items()}
    return found


def removal_rounds(networks: dict[str, set[str]]) -> list[list[str]]:
    """Containers in rounds where no two of a round share a network, most-connected first
    (a greedy colouring: a lab of point-to-point links takes a few rounds, one network of
    pods one round a pod)."""
    rounds: list[tuple[list[str], set[str]]] = []
    for container in sorted(networks, key=lambda c: (-len(networks[c]), c)):
        mine = networks[container]
        for members, used in rounds:
            if not mine & used:
                members.append(container)
                used |= mine
                break
        else:
            rounds.append(([container], set(mine)))
    return [members for members, _ in rounds]


def _quietly(remove: Callable[[str], Any], object_id: str, in_use_ok: bool = False) -> bool:
    """Remove an object; False when it is still in use (and ``in_use_ok`` allows that)."""
    try:
        remove(object_id)
    except NotFound:
        pass
    except APIError as exc:
        if not (in_use_ok and "active endpoints" in str(exc.explanation)):
            raise
        return False
    return True


def explain(exc: BaseException) -> str:
    """One line naming the cause of a Kathará or Docker failure."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, APIError):
        text = str(exc.explanation or exc)
    elif isinstance(exc, EngineConnectionError):
        text = "the Docker engine did not answer"
    else:
        text = str(exc) or type(exc).__name__
    return f"{' '.join(text.split())} ({type(exc).__name__})"
