"""Kubernetes lab benchmark: a level-1 policy lab against a routing lab of the same size.

ready       from nothing to a lab of twelve pods ready: control plane up, objects created, pods
            reported running and the application's policies enforced in every pod (``start_lab``
            of ``pod_lab``), against an OSPF ring of the same device count deployed and converged
            (``deploy_lab`` with ``ospf_converged``), interleaved round by round; target ≤ 1.5
apply       from ``kubectl apply`` of a policy (the kubectl tool's own call) until the reconciler
            has loaded the changed ruleset in the pod, median and p95 over ``--applies`` changes
memory      resident memory of kube-apiserver and etcd, and the memory of each pod's container

Results go to ``benchmarks/out/k8s_lifecycle-<time>.json``. Every lab is removed in a ``finally``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import anyio
from rich.console import Console

from _output import Column, rows_table, save
from netdojo import __version__
from netdojo.labs.k8s.control_plane import rss_kib
from netdojo.labs.k8s.pods import pod_lab
from netdojo.labs.k8s.workload import ContainerPort, PodPlan, Workload
from netdojo.labs.runtime import LiveLab, deploy_lab, start_lab, stop_lab
from netdojo.labs.samples import ospf_converged, ospf_ring
from netdojo.tools.kubectl import KubectlArguments, run_kubectl

TARGET_RATIO = 1.5
CGROUP_MEMORY = (
    "cat /sys/fs/cgroup/memory.current 2>/dev/null "
    "|| cat /sys/fs/cgroup/memory/memory.usage_in_bytes"
)
console = Console(width=120)

CALLS = {
    "frontend": ["cart", "catalog", "currency", "checkout", "recommend", "ads", "shipping"],
    "checkout": ["cart", "catalog", "currency", "shipping", "email", "payment"],
    "cart": ["redis"],
    "recommend": ["catalog"],
    "loadgen": ["frontend"],
}
SERVICES = ["frontend", "cart", "catalog", "currency", "payment", "shipping", "email", "checkout",
            "recommend", "ads", "redis", "loadgen"]  # fmt: skip
PORTS = {name: 8080 + index for index, name in enumerate(SERVICES)}


def boutique() -> Workload:
    """Online Boutique's shape: twelve services in one namespace, one pod each."""
    pods = [
        PodPlan(
            name=name,
            namespace="shop",
            labels={"app": name},
            ports=[ContainerPort(port=PORTS[name], name="grpc")] if name != "loadgen" else [],
            ip=f"10.244.0.{10 + index}",
        )
        for index, name in enumerate(SERVICES)
    ]
    return Workload(namespaces={"shop": {}}, pods=pods, subnet="10.244.0.0/24")


def policies() -> str:
    """Default-deny ingress in the namespace and one allow per called service."""
    callers: dict[str, list[str]] = {}
    for caller, callees in CALLS.items():
        for callee in callees:
            callers.setdefault(callee, []).append(caller)
    documents = [
        "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\n"
        "metadata: {name: default-deny, namespace: shop}\nspec: {podSelector: {}}\n"
    ]
    for callee, sources in sorted(callers.items()):
        peers = ", ".join(f"{{podSelector: {{matchLabels: {{app: {s}}}}}}}" for s in sources)
        documents.append(
            "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\n"
            f"metadata: {{name: allow-{callee}, namespace: shop}}\n"
            f"spec: {{podSelector: {{matchLabels: {{app: {callee}}}}}, "
            f"ingress: [{{from: [{peers}], ports: [{{port: grpc}}]}}]}}\n"
        )
    return "---\n".join(documents)


async def kubectl(lab: LiveLab, command: str, manifest: str = "") -> None:
    result = await run_kubectl(lab, KubectlArguments(command=command, manifest=manifest))
    if not result.ok:
        raise RuntimeError(f"kubectl {command}: {result.output}")


async def ready_k8s(workload: Workload) -> tuple[float, LiveLab]:
    started = time.monotonic()
    lab = await start_lab(pod_lab(workload, "bench-k8s"))
    try:
        await kubectl(lab, "apply -f -", policies())
        assert lab.cluster is not None and lab.cluster.enforcer is not None
        await anyio.to_thread.run_sync(lab.cluster.enforcer.wait_round)
    except BaseException:
        await stop_lab(lab)
        raise
    return time.monotonic() - started, lab


async def ready_routing(devices: int) -> float:
    routers = devices // 2
    started = time.monotonic()
    spec = ospf_ring(routers, devices - routers, name="bench-ospf")
    async with deploy_lab(spec, converged=ospf_converged):
        return time.monotonic() - started


async def apply_latency(lab: LiveLab, changes: int) -> list[float]:
    """Add and remove a policy that isolates ``payment`` in turn; each time, how long until
    the reconciler has loaded payment's new ruleset."""
    assert lab.cluster is not None and lab.cluster.enforcer is not None
    enforcer = lab.cluster.enforcer
    isolate = (
        "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\n"
        "metadata: {name: isolate-payment, namespace: shop}\n"
        "spec: {podSelector: {matchLabels: {app: payment}}, policyTypes: [Egress]}\n"
    )
    samples = []
    for change in range(changes):
        before = enforcer.applied.get("payment")
        started = time.monotonic()
        if change % 2 == 0:
            await kubectl(lab, "apply -f -", isolate)
        else:
            await kubectl(lab, "delete networkpolicy isolate-payment -n shop")
        while enforcer.applied.get("payment") == before:
            if time.monotonic() - started > 30:
                raise RuntimeError(f"not enforced within 30 s; errors: {enforcer.errors}")
            await anyio.sleep(0.005)
        samples.append(time.monotonic() - started)
    return samples


async def memory(lab: LiveLab) -> dict[str, Any]:
    assert lab.cluster is not None
    plane = {
        name: round((rss_kib(proc.pid) or 0) / 1024, 1)
        for name, proc in lab.cluster.plane.processes.items()
    }
    pods = []
    for pod in lab.cluster.workload.pods:
        done = await lab.exec(pod.name, ["sh", "-c", CGROUP_MEMORY])
        pods.append(int(done.stdout.strip() or 0) / 2**20)
    return {"control_plane_mib": plane, "pod_mib_median": round(statistics.median(pods), 1)}


def p95(values: list[float]) -> float:
    return sorted(values)[max(0, round(0.95 * len(values)) - 1)]


async def main(rounds: int, applies: int) -> None:
    workload = boutique()
    k8s_times: list[float] = []
    routing_times: list[float] = []
    latencies: list[float] = []
    footprint: dict[str, Any] = {}
    for round_ in range(rounds):
        k8s_s, lab = await ready_k8s(workload)
        try:
            k8s_times.append(k8s_s)
            if round_ == 0:
                latencies = await apply_latency(lab, applies)
                footprint = await memory(lab)
        finally:
            await stop_lab(lab)
        routing_times.append(await ready_routing(len(workload.pods)))
        console.print(f"round {round_ + 1}: k8s {k8s_s:.1f}s, routing {routing_times[-1]:.1f}s")
    k8s, routing = statistics.median(k8s_times), statistics.median(routing_times)
    rows = [
        {"measure": "ready, 12 pods (median)", "value": f"{k8s:.2f} s",
         "against": f"{routing:.2f} s routing", "ratio": f"{k8s / routing:.2f}",
         "target": f"≤ {TARGET_RATIO}"},
        {"measure": "apply to enforced, median", "value": f"{statistics.median(latencies):.3f} s",
         "against": f"{len(latencies)} changes", "ratio": "", "target": "about 1 s"},
        {"measure": "apply to enforced, p95", "value": f"{p95(latencies):.3f} s",
         "against": "", "ratio": "", "target": ""},
        {"measure": "control plane memory",
         "value": ", ".join(f"{k} {v} MiB" for k, v in footprint["control_plane_mib"].items()),
         "against": "", "ratio": "", "target": ""},
        {"measure": "pod memory (median)", "value": f"{footprint['pod_mib_median']} MiB",
         "against": "", "ratio": "", "target": ""},
    ]  # fmt: skip
    columns = [Column(h.lower(), h.lower()) for h in ("Measure", "Value", "Against", "Ratio")]
    columns.append(Column("target", "target"))
    console.print(rows_table("Kubernetes lab lifecycle", columns, rows))
    path = save(
        "k8s_lifecycle",
        {
            "version": __version__,
            "ready_k8s_s": k8s_times,
            "ready_routing_s": routing_times,
            "ratio": k8s / routing,
            "apply_to_enforced_s": latencies,
            "memory": footprint,
        },
    )
    console.print(f"results: {path}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--applies", type=int, default=20)
    arguments = parser.parse_args()
    anyio.run(main, arguments.rounds, arguments.applies)
