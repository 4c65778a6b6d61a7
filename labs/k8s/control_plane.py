"""A loopback Kubernetes control plane: etcd and kube-apiserver on 127.0.0.1, and a kubeconfig.

The API server serves TLS with the self-signed certificate it writes into its ``--cert-dir``,
authenticates one static bearer token (a member of ``system:masters``) and authorizes with RBAC.
The flags and the kubeconfig are pure functions of `ControlPlaneConfig`; `start` runs them.
"""

from __future__ import annotations

import ctypes
import json
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.to_thread
from pydantic import BaseModel

from netdojo.labs.errors import PrerequisiteError
from netdojo.labs.k8s.binaries import Located, locate_all

LOOPBACK = "127.0.0.1"
ADMIN = "netdojo-admin"
SERVICE_CIDR = "10.96.0.0/16"
READY_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 10.0
LOG_TAIL = 1500
PR_SET_PDEATHSIG = 1


class ControlPlaneConfig(BaseModel):
    """Everything the two processes are started with; all paths lie under ``workdir``."""

    workdir: Path
    etcd_client_port: int
    etcd_peer_port: int
    apiserver_port: int
    token: str
    # A control plane lives as long as one lab: its store is thrown away, so etcd need not sync.
    etcd_fsync: bool = False

    @property
    def etcd_url(self) -> str:
        return f"http://{LOOPBACK}:{self.etcd_client_port}"

    @property
    def server(self) -> str:
        return f"https://{LOOPBACK}:{self.apiserver_port}"

    @property
    def cert_dir(self) -> Path:
        return self.workdir / "certs"

    @property
    def ca_file(self) -> Path:
        """The serving certificate the API server generates, followed by its signing CA."""
        return self.cert_dir / "apiserver.crt"

    @property
    def token_file(self) -> Path:
        return self.workdir / "tokens.csv"

    @property
    def sa_key(self) -> Path:
        return self.workdir / "sa.key"

    @property
    def sa_pub(self) -> Path:
        return self.workdir / "sa.pub"

    @property
    def kubeconfig(self) -> Path:
        return self.workdir / "kubeconfig"


def etcd_args(cfg: ControlPlaneConfig) -> list[str]:
    peer = f"http://{LOOPBACK}:{cfg.etcd_peer_port}"
    args = [
        "--name=default",
        f"--data-dir={cfg.workdir / 'etcd'}",
        f"--listen-client-urls={cfg.etcd_url}",
        f"--advertise-client-urls={cfg.etcd_url}",
        f"--listen-peer-urls={peer}",
        f"--initial-advertise-peer-urls={peer}",
        f"--initial-cluster=default={peer}",
        "--log-level=warn",
    ]
    if not cfg.etcd_fsync:
        args.append("--unsafe-no-fsync")
    return args


def apiserver_args(cfg: ControlPlaneConfig) -> list[str]:
    return [
        f"--etcd-servers={cfg.etcd_url}",
        f"--bind-address={LOOPBACK}",
        f"--advertise-address={LOOPBACK}",
        # The reconciler refuses a loopback address; nothing in a lab reaches the API server
        # through the `kubernetes` service, so that service keeps no endpoints.
        "--endpoint-reconciler-type=none",
        f"--secure-port={cfg.apiserver_port}",
        f"--cert-dir={cfg.cert_dir}",
        f"--token-auth-file={cfg.token_file}",
        "--authorization-mode=RBAC",
        "--anonymous-auth=false",
        f"--service-account-key-file={cfg.sa_pub}",
        f"--service-account-signing-key-file={cfg.sa_key}",
        "--service-account-issuer=https://kubernetes.default.svc",
        f"--service-cluster-ip-range={SERVICE_CIDR}",
        # No controller manager creates a namespace's default service account, and no pod here
        # runs a process that would use one.
        "--disable-admission-plugins=ServiceAccount",
        "--profiling=false",
    ]


def token_csv(cfg: ControlPlaneConfig) -> str:
    """The static token file: token, user, uid, groups."""
    return f'{cfg.token},{ADMIN},{ADMIN},"system:masters"\n'


def render_kubeconfig(cfg: ControlPlaneConfig) -> str:
    """A kubeconfig (JSON, which kubectl reads as YAML) for the admin token."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "netdojo",
                "cluster": {"server": cfg.server, "certificate-authority": str(cfg.ca_file)},
            }
        ],
        "users": [{"name": ADMIN, "user": {"token": cfg.token}}],
        "contexts": [{"name": "netdojo", "context": {"cluster": "netdojo", "user": ADMIN}}],
        "current-context": "netdojo",
    }
    return json.dumps(config, indent=2) + "\n"


def free_ports(count: int) -> list[int]:
    """Ports on the loopback that nothing listens on now (held open together, then freed)."""
    sockets = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind((LOOPBACK, 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def new_config(workdir: Path) -> ControlPlaneConfig:
    etcd_client, etcd_peer, apiserver = free_ports(3)
    return ControlPlaneConfig(
        workdir=workdir,
        etcd_client_port=etcd_client,
        etcd_peer_port=etcd_peer,
        apiserver_port=apiserver,
        token=secrets.token_hex(16),
    )


def write_files(cfg: ControlPlaneConfig) -> None:
    """The token file, the service-account key pair and the kubeconfig."""
    openssl = shutil.which("openssl")
    if openssl is None:
        raise PrerequisiteError("openssl is missing: apt-get install openssl")
    cfg.cert_dir.mkdir(parents=True, exist_ok=True)
    cfg.token_file.write_text(token_csv(cfg))
    cfg.token_file.chmod(0o600)
    for argv in (
        ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"],
        ["pkey", "-in", str(cfg.sa_key), "-pubout"],
    ):
        out = cfg.sa_key if argv[0] == "genpkey" else cfg.sa_pub
        done = subprocess.run(
            [openssl, *argv, "-out", str(out)], capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise PrerequisiteError(f"openssl {argv[0]} failed: {done.stderr.strip()}")
    cfg.kubeconfig.write_text(render_kubeconfig(cfg))
    cfg.kubeconfig.chmod(0o600)


@dataclass
class ControlPlane:
    """A running control plane; `stop` ends both processes by their ids."""

    config: ControlPlaneConfig
    binaries: dict[str, Located]
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def log_tail(self, name: str) -> str:
        path = self.config.workdir / f"{name}.log"
        return path.read_text(errors="replace")[-LOG_TAIL:] if path.exists() else ""

    def kubectl(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        kubectl = self.binaries["kubectl"].path
        assert kubectl is not None
        return subprocess.run(
            [kubectl, f"--kubeconfig={self.config.kubeconfig}", *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def stop(self) -> None:
        for name in ("kube-apiserver", "etcd"):
            proc = self.processes.pop(name, None)
            if proc is None or proc.poll() is not None:
                continue
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _die_with_parent() -> None:
    """Run in the child before exec: end it when the thread that started it ends, so a control
    plane never outlives its owner, even one that is killed."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _spawn(cp: ControlPlane, name: str, args: list[str]) -> None:
    path = cp.binaries[name].path
    assert path is not None
    with (cp.config.workdir / f"{name}.log").open("ab") as log:
        cp.processes[name] = subprocess.Popen(
            [path, *args],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )


def _ready(cfg: ControlPlaneConfig) -> bool:
    if not cfg.ca_file.exists():
        return False
    context = ssl.create_default_context(cafile=str(cfg.ca_file))
    request = urllib.request.Request(
        f"{cfg.server}/readyz", headers={"Authorization": f"Bearer {cfg.token}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=2, context=context) as answer:
            return bool(answer.status == 200)
    except (urllib.error.URLError, ssl.SSLError, OSError):
        return False


def wait_ready(cp: ControlPlane, timeout: float = READY_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _ready_or_failed(cp):
            return
        time.sleep(0.2)
    raise _not_ready(cp, timeout)


def _not_ready(cp: ControlPlane, timeout: float) -> PrerequisiteError:
    return PrerequisiteError(
        f"kube-apiserver not ready within {timeout:.0f}s; log tail:\n"
        f"{cp.log_tail('kube-apiserver')}"
    )


def start(workdir: Path, timeout: float = READY_TIMEOUT_S) -> ControlPlane:
    """Start etcd and kube-apiserver on the loopback and wait until ``/readyz`` answers."""
    cp = launch(workdir)
    try:
        wait_ready(cp, timeout)
    except BaseException:
        cp.stop()
        raise
    return cp


async def await_ready(cp: ControlPlane, timeout: float = READY_TIMEOUT_S) -> None:
    """`wait_ready` for an event loop. Launch from the loop's own thread: a worker thread may
    end, and the processes it started with it."""
    deadline = time.monotonic() + timeout
    while not await anyio.to_thread.run_sync(_ready_or_failed, cp):
        if time.monotonic() > deadline:
            raise _not_ready(cp, timeout)
        await anyio.sleep(0.2)


def _ready_or_failed(cp: ControlPlane) -> bool:
    """Whether the API server is ready; `PrerequisiteError` with its log when a process ended."""
    for name, proc in cp.processes.items():
        if proc.poll() is not None:
            raise PrerequisiteError(
                f"{name} exited with {proc.returncode}; log tail:\n{cp.log_tail(name)}"
            )
    return _ready(cp.config)


def launch(workdir: Path) -> ControlPlane:
    """Start etcd and kube-apiserver on the loopback, without waiting for them."""
    binaries = locate_all()
    missing = [b.name for b in binaries.values() if b.path is None]
    if missing:
        raise PrerequisiteError(f"{', '.join(missing)} missing; run `netdojo setup --kubernetes`")
    workdir.mkdir(parents=True, exist_ok=True)
    cp = ControlPlane(config=new_config(workdir), binaries=binaries)
    write_files(cp.config)
    try:
        _spawn(cp, "etcd", etcd_args(cp.config))
        _spawn(cp, "kube-apiserver", apiserver_args(cp.config))
    except BaseException:
        cp.stop()
        raise
    return cp


def rss_kib(pid: int) -> int | None:
    """A process's resident memory, from /proc."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None
