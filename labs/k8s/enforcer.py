"""The node agent's policy half: NetworkPolicy enforced in every pod's own network namespace.

A reconciler, level-triggered as Kubernetes controllers are: every ``interval_s`` it reads the
namespaces, pods and policies from the API server, compiles the rules of every pod
(`netdojo.labs.k8s.netpol`), and loads each pod whose ruleset changed with one atomic
``iptables-restore`` in its device. A read is a few milliseconds on the loopback, so a
``kubectl apply`` is enforced within about ``interval_s`` plus one exec. It runs in a thread of
its own with a synchronous API client, so it needs no event loop and stops when asked.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from lightkube import ALL_NS, Client, KubeConfig
from lightkube.core.exceptions import ApiError
from lightkube.resources.core_v1 import Namespace, Pod
from lightkube.resources.networking_v1 import NetworkPolicy

from netdojo.labs.errors import LabError
from netdojo.labs.k8s.netpol.cluster import parse_cluster
from netdojo.labs.k8s.netpol.compiler import compile_cluster
from netdojo.labs.k8s.netpol.iptables import render
from netdojo.labs.k8s.objects import ManifestError

INTERVAL_S = 0.2
LOAD_WORKERS = 8
MAX_ERRORS = 20

INPUTS: tuple[tuple[str, Any, dict[str, Any]], ...] = (
    ("Namespace", Namespace, {}),
    ("Pod", Pod, {"namespace": ALL_NS}),
    ("NetworkPolicy", NetworkPolicy, {"namespace": ALL_NS}),
)
"""What the policies' verdicts depend on: each kind, its resource and how to list it."""

Load = Callable[[str, str], None]
"""Load a ruleset (``iptables-restore`` text) into the device of the pod named so."""


class Enforcer:
    """Keeps every pod's filter table equal to what the cluster's policies say."""

    def __init__(self, kubeconfig: Path, load: Load, interval_s: float = INTERVAL_S) -> None:
        self._config = KubeConfig.from_file(kubeconfig)
        self._load = load
        self.interval_s = interval_s
        self.applied: dict[str, str] = {}
        """Pod name -> the ruleset loaded in its device."""
        self.errors: list[str] = []
        """The latest failures, newest last (at most `MAX_ERRORS`)."""
        self.rounds = 0
        """Reconcile rounds finished; a round ends with every pod's ruleset loaded."""
        self._errors_lock = threading.Lock()
        self._stop = threading.Event()
        self._round = threading.Condition()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Enforce once now (so a lab is ready with its policies), then in the background."""
        client = self._client()
        self.reconcile(client)
        self._thread = threading.Thread(
            target=self._run, args=(client,), name="netpol-enforcer", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def wait_round(self, timeout: float = 5.0) -> bool:
        """Wait until a round that began after this call has finished; False on timeout."""
        with self._round:
            target = self.rounds + 2
            return self._round.wait_for(lambda: self.rounds >= target, timeout)

    def reconcile(self, client: Client) -> None:
        """One round: read, compile, and load every pod whose ruleset changed."""
        try:
            wanted = self._wanted(client)
        except (ApiError, ManifestError, OSError) as exc:
            self._error(f"reading the cluster failed: {exc}")
            return
        changed = {pod: text for pod, text in wanted.items() if self.applied.get(pod) != text}
        if changed:
            with ThreadPoolExecutor(LOAD_WORKERS) as pool:
                loaded = list(pool.map(self._load_one, changed.items()))
            self.applied.update(
                pair for pair, ok in zip(changed.items(), loaded, strict=True) if ok
            )
        with self._round:
            self.rounds += 1
            self._round.notify_all()

    def _wanted(self, client: Client) -> dict[str, str]:
        manifests = [
            {**item.to_dict(), "kind": kind}
            for kind, resource, where in INPUTS
            for item in client.list(resource, **where)
        ]
        rules = compile_cluster(parse_cluster(manifests))
        return {pod.pod.split("/", 1)[1]: render(pod) for pod in rules.pods if pod.ip is not None}

    def _load_one(self, pair: tuple[str, str]) -> bool:
        pod, text = pair
        try:
            self._load(pod, text)
        except LabError as exc:
            self._error(f"loading the rules of {pod} failed: {exc}")
            return False
        return True

    def _error(self, message: str) -> None:
        with self._errors_lock:
            self.errors = [*self.errors[-(MAX_ERRORS - 1) :], message]

    def _client(self) -> Client:
        return Client(config=self._config, trust_env=False)

    def _run(self, client: Client) -> None:
        while not self._stop.wait(self.interval_s):
            started = time.monotonic()
            self.reconcile(client)
            if time.monotonic() - started > 10 * self.interval_s:
                self._error(f"a round took {time.monotonic() - started:.1f}s")
        client.close()
