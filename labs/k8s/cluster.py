"""A lab's Kubernetes cluster: its control plane and the workload on it, started beside the
lab's devices and stopped with them (`netdojo.labs.runtime` calls this for a spec with a
workload).

The control plane runs on the host's loopback, not in the lab: nothing inside the lab talks to
it (there is no kubelet), so the pods' network stays the lab's alone. Its processes end with
the process that started them, so a cluster never outlives its lab's owner.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio
from lightkube import AsyncClient, KubeConfig
from lightkube.codecs import from_dict
from lightkube.core.exceptions import ApiError
from lightkube.resources.core_v1 import Pod, Service
from lightkube.resources.networking_v1 import NetworkPolicy
from lightkube.types import PatchType

from netdojo.labs.errors import LabError
from netdojo.labs.k8s.control_plane import ControlPlane, await_ready, launch
from netdojo.labs.k8s.enforcer import INPUTS, Enforcer
from netdojo.labs.k8s.folders import cluster_folder
from netdojo.labs.k8s.services import (
    endpoint_slices,
    hosts_file,
    nat_table,
    resolv_conf,
    service_routes,
)
from netdojo.labs.k8s.workload import PodPlan, Workload, pod_device, pod_status

if TYPE_CHECKING:
    from netdojo.labs.runtime import LiveLab

FIELD_MANAGER = "netdojo"


@dataclass
class Cluster:
    """A running cluster; ``ready_s``: from launch to every pod reported running."""

    plane: ControlPlane
    workload: Workload
    launched: float
    ready_s: float | None = None
    enforcer: Enforcer | None = None

    def client(self) -> AsyncClient:
        """An API client as the cluster's administrator (close it after use)."""
        config = KubeConfig.from_file(self.plane.config.kubeconfig)
        return AsyncClient(config=config, field_manager=FIELD_MANAGER, trust_env=False)

    async def policy_inputs(self) -> list[dict[str, Any]]:
        """The namespaces, pods and NetworkPolicies as the API server holds them now."""
        async with self.client() as client:
            return [
                {**item.to_dict(), "kind": kind}
                for kind, resource, where in INPUTS
                async for item in client.list(resource, **where)
            ]

    async def has_policy(self, namespace: str, name: str) -> bool:
        async with self.client() as client:
            try:
                await client.get(NetworkPolicy, name, namespace=namespace)
            except ApiError as exc:
                if exc.status.code == 404:
                    return False
                raise
        return True

    def stop(self) -> None:
        try:
            if self.enforcer is not None:
                self.enforcer.stop()
            self.plane.stop()
        finally:
            shutil.rmtree(self.plane.config.workdir, ignore_errors=True)


def launch_cluster(lab_name: str, workload: Workload, persistent: bool = False) -> Cluster:
    """Start the control plane's processes, without waiting for them, so they come up while
    the lab deploys; from the event loop's thread, since they end with the thread that
    started them. A persistent lab is refused: its control plane could not outlive this
    process."""
    if persistent:
        raise LabError(
            f"lab {lab_name}: a Kubernetes lab cannot outlive this process; its control plane "
            "ends with the process that started it"
        )
    workdir = cluster_folder(lab_name)
    return Cluster(plane=launch(workdir), workload=workload, launched=time.monotonic())


async def populate(cluster: Cluster, lab: LiveLab) -> None:
    """Once the pods' devices have booted: wait for the API server, create the workload's
    objects, report every pod running, and enforce the policies from then on."""
    await await_ready(cluster.plane)
    cluster_ips: dict[tuple[str, str], str] = {}
    async with cluster.client() as client:
        for manifest in cluster.workload.manifests():
            created = await client.create(from_dict(manifest))
            if isinstance(created, Service) and created.metadata and created.spec:
                where = (created.metadata.namespace or "", created.metadata.name or "")
                cluster_ips[where] = created.spec.clusterIP or ""
        for endpoints in endpoint_slices(cluster.workload):
            await client.create(from_dict(endpoints))
        await report_running(client, cluster.workload)
    await serve_services(lab, cluster.workload, cluster_ips)
    cluster.enforcer = Enforcer(cluster.plane.config.kubeconfig, partial(load_rules, lab))
    await anyio.to_thread.run_sync(cluster.enforcer.start)
    cluster.ready_s = time.monotonic() - cluster.launched


async def serve_services(
    lab: LiveLab, workload: Workload, cluster_ips: dict[tuple[str, str], str]
) -> None:
    """Give every pod the Services: their names in its hosts file and resolver, their
    ClusterIPs translated in its nat table (`netdojo.labs.k8s.services`)."""
    nat = nat_table(service_routes(workload, cluster_ips))

    async def serve(pod: PodPlan) -> None:
        script = (
            'printf "%s" "$1" > /etc/hosts && printf "%s" "$2" > /etc/resolv.conf && '
            'printf "%s" "$3" | iptables-restore'
        )
        hosts = hosts_file(pod, workload, cluster_ips)
        argv = ["sh", "-c", script, "serve", hosts, resolv_conf(pod), nat]
        done = await lab.exec(pod.device, argv)
        if not done.ok:
            raise LabError(f"services in {pod.name}: {(done.stderr or done.stdout).strip()}")

    async with anyio.create_task_group() as group:
        for pod in workload.pods:
            group.start_soon(serve, pod)


def load_rules(lab: LiveLab, pod: str, rules: str) -> None:
    """Replace the filter table of a pod's device with ``rules`` (iptables-restore input)."""
    argv = ["sh", "-c", 'printf "%s" "$1" | iptables-restore', "load", rules]
    done = lab.exec_sync(pod_device(pod), argv)
    if not done.ok:
        raise LabError(f"iptables-restore in {pod} failed: {(done.stderr or done.stdout).strip()}")


async def report_running(client: AsyncClient, workload: Workload) -> None:
    """Write every pod's status as running and ready, at its planned address."""
    started = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    async def running(pod: PodPlan) -> None:
        status = pod_status(pod, started)
        await client.patch(
            Pod.Status, pod.name, status, namespace=pod.namespace, patch_type=PatchType.MERGE
        )

    async with anyio.create_task_group() as group:
        for pod in workload.pods:
            group.start_soon(running, pod)
