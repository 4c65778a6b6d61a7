"""A Kubernetes lab: a workload's pods as a live lab, beside a control plane that holds them as
API objects, started together and stopped together.

The control plane runs on the host's loopback, not in the lab: nothing inside the lab talks to
it (there is no kubelet), so the pods' network stays the lab's alone. The pods' status is
written through the API once their devices have booted, as a node agent would.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import anyio
from lightkube import AsyncClient, KubeConfig
from lightkube.codecs import from_dict
from lightkube.resources.core_v1 import Pod
from lightkube.types import PatchType

from netdojo.labs.k8s.control_plane import ControlPlane, start_async
from netdojo.labs.k8s.workload import PodPlan, Workload, pod_status
from netdojo.labs.paths import sub_dir
from netdojo.labs.runtime import LiveLab, start_lab, stop_lab

FIELD_MANAGER = "netdojo"


@dataclass
class KubeLab:
    """A running Kubernetes lab; ``timings`` holds seconds per phase of its start."""

    lab: LiveLab
    plane: ControlPlane
    workload: Workload
    timings: dict[str, float]

    def client(self) -> AsyncClient:
        """An API client as the cluster's administrator (close it after use)."""
        config = KubeConfig.from_file(self.plane.config.kubeconfig)
        return AsyncClient(config=config, field_manager=FIELD_MANAGER, trust_env=False)


async def create_objects(client: AsyncClient, workload: Workload) -> None:
    """Create the workload's node, namespaces, pods and services, kind by kind."""
    for manifest in workload.manifests():
        await client.create(from_dict(manifest))


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


async def start_kube_lab(workload: Workload, name: str) -> KubeLab:
    """Deploy the pods' lab and start a control plane at once; then create the objects and
    report the pods running once their devices have booted."""
    workdir = sub_dir("k8s") / f"{name}-{int(time.time() * 1000)}"
    timings: dict[str, float] = {}
    began = time.monotonic()
    plane: ControlPlane | None = None
    lab: LiveLab | None = None

    async def control_plane() -> None:
        nonlocal plane
        plane = await start_async(workdir)
        timings["control_plane"] = time.monotonic() - began

    async def pods() -> None:
        nonlocal lab
        lab = await start_lab(workload.lab_spec(name))
        await lab.wait_startup()
        timings["lab"] = time.monotonic() - began

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(control_plane)
            group.start_soon(pods)
        assert plane is not None and lab is not None
        kube = KubeLab(lab=lab, plane=plane, workload=workload, timings=timings)
        async with kube.client() as client:
            await create_objects(client, workload)
            await report_running(client, workload)
        timings["ready"] = time.monotonic() - began
        return kube
    except BaseException:
        with anyio.CancelScope(shield=True):
            await _stop(lab, plane, workdir)
        raise


async def stop_kube_lab(kube: KubeLab) -> None:
    await _stop(kube.lab, kube.plane, kube.plane.config.workdir)


async def _stop(lab: LiveLab | None, plane: ControlPlane | None, workdir: Path) -> None:
    try:
        if lab is not None:
            await stop_lab(lab)
    finally:
        if plane is not None:
            plane.stop()
        shutil.rmtree(workdir, ignore_errors=True)
