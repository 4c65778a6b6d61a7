"""Agent containers for the image tests: a Docker network of their own whose addresses the
host reaches too, containers started as a runner starts them, and their removal by id.

Each agent's card names its address on that network, which both the other containers and
this process (the client) can reach: the host routes to a bridge network's addresses.
"""

from __future__ import annotations

import ipaddress
import random
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

import docker
import httpx
from docker.errors import APIError, NotFound

SOCKET = "/var/run/docker.sock"
CARD = "/.well-known/agent-card.json"
TEST_LABEL = "netdojo.test"
NETWORK_RANGE = ipaddress.IPv4Network("10.231.0.0/16")


@dataclass
class Agents:
    """A network and the containers started on it, each removed by its id."""

    api: Any
    network_id: str
    subnet: ipaddress.IPv4Network
    run_id: str
    containers: list[str] = field(default_factory=list)

    def address(self, index: int) -> str:
        return str(self.subnet.network_address + 10 + index)

    def start(
        self, image: str, port: int, *, socket: bool = False, env: dict[str, str] | None = None
    ) -> tuple[str, str]:
        """Start ``image`` with ``--host``, ``--port`` and ``--card-url`` at the next address;
        with ``socket``, the host's Docker socket mounted (no other privilege). Its id and
        base URL."""
        address = self.address(len(self.containers))
        url = f"http://{address}:{port}"
        network = self.api.inspect_network(self.network_id)["Name"]
        binds = {SOCKET: {"bind": SOCKET, "mode": "rw"}} if socket else None
        created = self.api.create_container(
            image,
            command=["--host", "0.0.0.0", "--port", str(port), "--card-url", url],
            name=f"ndimg-{self.run_id}-{len(self.containers)}",
            labels={TEST_LABEL: self.run_id},
            environment=env,
            host_config=self.api.create_host_config(binds=binds, network_mode=network),
            networking_config=self.api.create_networking_config(
                {network: self.api.create_endpoint_config(ipv4_address=address)}
            ),
        )
        self.containers.append(created["Id"])
        self.api.start(created["Id"])
        return created["Id"], url

    def wait_for_card(self, container: str, url: str, timeout_s: float = 120.0) -> dict[str, Any]:
        """The agent's card once it answers; the container's log if it stops first."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            state = self.api.inspect_container(container)["State"]
            if not state["Running"]:
                raise AssertionError(f"the agent stopped: {self.log(container)}")
            try:
                answer = httpx.get(f"{url}{CARD}", timeout=2.0)
                if answer.status_code == 200:
                    return dict(answer.json())
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise AssertionError(f"no card at {url} in {timeout_s:.0f}s: {self.log(container)}")

    def wait_healthy(self, container: str, timeout_s: float = 90.0) -> str:
        """The health Docker gives the container once its health check has run."""
        deadline = time.monotonic() + timeout_s
        status = "starting"
        while time.monotonic() < deadline:
            status = self.api.inspect_container(container)["State"]["Health"]["Status"]
            if status != "starting":
                return str(status)
            time.sleep(1.0)
        return status

    def run_in(self, container: str, argv: list[str]) -> str:
        exec_id = self.api.exec_create(container, argv)["Id"]
        return str(self.api.exec_start(exec_id).decode(errors="replace"))

    def log(self, container: str) -> str:
        return str(self.api.logs(container, tail=40).decode(errors="replace"))

    def remove(self) -> None:
        for container in self.containers:
            with suppress(NotFound):
                self.api.remove_container(container, force=True)
        with suppress(NotFound):
            self.api.remove_network(self.network_id)


def still_there(ids: list[str]) -> list[str]:
    """Those of ``ids`` (containers and networks) that still exist."""
    client = docker.from_env(timeout=60)
    try:
        containers = {c["Id"] for c in client.api.containers(all=True)}
        networks = {n["Id"] for n in client.api.networks()}
    finally:
        client.close()
    return [i for i in ids if i in containers | networks]


@contextmanager
def agent_network() -> Iterator[Agents]:
    """A bridge network on a free /24 of `NETWORK_RANGE`, removed with its containers."""
    client = docker.from_env(timeout=120)
    run_id = secrets.token_hex(4)
    subnets = list(NETWORK_RANGE.subnets(new_prefix=24))
    agents = None
    try:
        for subnet in random.sample(subnets, 8):
            gateway = str(subnet.network_address + 1)
            pool = docker.types.IPAMPool(subnet=str(subnet), gateway=gateway)
            try:
                made = client.api.create_network(
                    f"ndimg-{run_id}",
                    driver="bridge",
                    ipam=docker.types.IPAMConfig(pool_configs=[pool]),
                    labels={TEST_LABEL: run_id},
                )
            except APIError:
                continue
            agents = Agents(client.api, made["Id"], subnet, run_id)
            break
        assert agents is not None, f"no free /24 in {NETWORK_RANGE} for the agents' network"
        yield agents
    finally:
        if agents is not None:
            agents.remove()
        client.close()
