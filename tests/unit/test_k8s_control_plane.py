"""The Kubernetes control plane's pure parts: release pins, the wrapper modules, build keys,
finding programs on PATH, the processes' flags and the kubeconfig."""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from netdojo.cli import app
from netdojo.labs import provision
from netdojo.labs.k8s import binaries, release
from netdojo.labs.k8s.control_plane import (
    ControlPlaneConfig,
    apiserver_args,
    etcd_args,
    new_config,
    render_kubeconfig,
    token_csv,
)

KUBERNETES_GOMOD = """module k8s.io/kubernetes

go 1.26.0

require (
\tgithub.com/blang/semver/v4 v4.0.0
\tk8s.io/api v0.0.0
\tk8s.io/apimachinery v0.0.0
\tk8s.io/klog/v2 v2.140.0
)

require (
\tk8s.io/kms v0.0.0 // indirect
\tsigs.k8s.io/yaml v1.6.0 // indirect
)

require k8s.io/streaming v0.0.0

replace (
\tk8s.io/api => ./staging/src/k8s.io/api
\tk8s.io/apimachinery => ./staging/src/k8s.io/apimachinery
\tk8s.io/kms => ./staging/src/k8s.io/kms
\tk8s.io/sample-controller => ./staging/src/k8s.io/sample-controller
\tk8s.io/streaming => ./staging/src/k8s.io/streaming
)
"""


def test_staging_modules_are_the_k8s_io_ones_required_at_v0() -> None:
    assert release.staging_modules(KUBERNETES_GOMOD) == [
        "k8s.io/api",
        "k8s.io/apimachinery",
        "k8s.io/kms",
        "k8s.io/streaming",
    ]


def test_staging_replaces_pin_the_matching_v0_release() -> None:
    block = release.staging_replaces(KUBERNETES_GOMOD, "v1.37.2")
    assert block.startswith("replace (\n") and block.endswith(")\n")
    assert "\tk8s.io/kms => k8s.io/kms v0.37.2\n" in block
    assert "sample-controller" not in block and "klog" not in block
    assert release.staging_version("v1.34.0") == "v0.34.0"
    with pytest.raises(ValueError):
        release.staging_version("v3.7.3")


def test_wrapper_gomod_requires_the_release_and_names_the_programs() -> None:
    kubernetes = release.wrapper_gomod("kubernetes", KUBERNETES_GOMOD)
    assert f"require k8s.io/kubernetes {release.KUBERNETES}\n" in kubernetes
    assert "\tk8s.io/kubernetes/cmd/kube-apiserver\n\tk8s.io/kubernetes/cmd/kubectl\n" in kubernetes
    assert kubernetes.endswith(release.staging_replaces(KUBERNETES_GOMOD, release.KUBERNETES))
    etcd = release.wrapper_gomod("etcd")
    assert f"require go.etcd.io/etcd/server/v3 {release.ETCD}\n" in etcd
    assert "replace" not in etcd


def _gomod(module: str) -> str:
    return (release.MODULES[module] / "go.mod").read_text()


def test_the_kubernetes_module_pins_every_staging_module_to_the_release() -> None:
    gomod = _gomod("kubernetes")
    pinned = re.escape(release.KUBERNETES)
    assert re.search(rf"^\tk8s\.io/kubernetes {pinned}( //|$)", gomod, re.M)
    replaces = dict(re.findall(r"^\t(k8s\.io/\S+) => \1 (v\S+)$", gomod, re.M))
    assert len(replaces) >= 30
    assert set(replaces.values()) == {release.staging_version(release.KUBERNETES)}
    for name in ("k8s.io/api", "k8s.io/apiserver", "k8s.io/client-go", "k8s.io/kubectl"):
        assert name in replaces
    for b in release.BINARIES:
        if b.module == "kubernetes":
            assert re.search(rf"^\t{re.escape(b.package)}$", gomod, re.M), b.name
    assert (release.MODULES["kubernetes"] / "go.sum").is_file()


def test_the_etcd_module_requires_the_pinned_server() -> None:
    gomod = _gomod("etcd")
    assert f"go.etcd.io/etcd/server/v3 {release.ETCD}" in gomod
    assert re.search(r"^tool go\.etcd\.io/etcd/server/v3$", gomod, re.M)
    assert (release.MODULES["etcd"] / "go.sum").is_file()


def test_build_key_names_the_releases_and_follows_the_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = release.build_key()
    assert key.startswith(f"k8s-{release.KUBERNETES}-etcd-{release.ETCD}-")
    assert release.build_key() == key
    for name in ("kubernetes", "etcd"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "go.mod").write_text(f"module {name}\n")
    monkeypatch.setattr(release, "MODULES", {n: tmp_path / n for n in ("kubernetes", "etcd")})
    first = release.build_key()
    (tmp_path / "etcd" / "go.mod").write_text("module etcd\n\ngo 1.26.0\n")
    assert release.build_key() != first


@pytest.mark.parametrize(
    ("name", "version", "ok"),
    [
        ("kube-apiserver", (1, 37, 2), True),
        ("kube-apiserver", (1, 37, 9), True),
        ("kube-apiserver", (1, 37, 1), False),
        ("kube-apiserver", (1, 38, 0), False),
        ("kubectl", (1, 36, 4), True),
        ("kubectl", (1, 38, 1), True),
        ("kubectl", (1, 35, 0), False),
        ("etcd", (3, 6, 5), True),
        ("etcd", (3, 5, 21), False),
    ],
)
def test_accepted_releases(name: str, version: tuple[int, int, int], ok: bool) -> None:
    assert release.accepts(release.binary(name), version) is ok


def test_parse_version_reads_each_programs_output() -> None:
    assert release.parse_version("Kubernetes v1.37.2") == (1, 37, 2)
    assert release.parse_version("Client Version: v1.37.2\nKustomize Version: v5.8.1") == (
        1,
        37,
        2,
    )
    assert release.parse_version("etcd Version: 3.7.3\nGit SHA: GitNotFound") == (3, 7, 3)
    assert release.parse_version("no version here") is None


def test_ldflags_stamp_the_release_and_strip() -> None:
    flags = release.ldflags(release.binary("kube-apiserver")).split()
    assert flags[:2] == ["-s", "-w"]
    assert f"-X=k8s.io/component-base/version.gitVersion={release.KUBERNETES}" in flags
    assert f"-X=k8s.io/client-go/pkg/version.gitVersion={release.KUBERNETES}" in flags
    assert release.ldflags(release.binary("etcd")) == "-s -w"


def test_build_argv_is_trimmed_readonly_and_names_the_package(tmp_path: Path) -> None:
    argv = binaries.build_argv("/usr/bin/go", release.binary("kubectl"), tmp_path / "kubectl")
    assert argv[:5] == ["/usr/bin/go", "build", "-trimpath", "-mod=readonly", argv[4]]
    assert argv[4].startswith("-ldflags=-s -w ")
    assert argv[-3:] == ["-o", str(tmp_path / "kubectl"), "k8s.io/kubernetes/cmd/kubectl"]


def test_the_build_keeps_its_compiled_packages_apart_unless_told(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GOCACHE", raising=False)
    env = binaries.build_env()
    assert env["CGO_ENABLED"] == "0"
    assert env["GOCACHE"] == str(home / "home" / "kubernetes" / "go-build")
    monkeypatch.setenv("GOCACHE", str(home / "mine"))
    assert binaries.build_env()["GOCACHE"] == str(home / "mine")


def _fake(folder: Path, name: str, output: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\necho '{output}'\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("NETDOJO_HOME", str(tmp_path / "home"))
    return tmp_path


def test_a_program_on_path_at_an_accepted_release_is_used(home: Path) -> None:
    bin_dir = home / "bin"
    path = _fake(bin_dir, "kube-apiserver", "Kubernetes v1.37.4")
    found = binaries.locate("kube-apiserver", search_path=str(bin_dir))
    assert (found.source, found.path, found.version) == ("path", str(path), "v1.37.4")


def test_a_program_on_path_at_another_release_is_ignored(home: Path) -> None:
    bin_dir = home / "bin"
    _fake(bin_dir, "etcd", "etcd Version: 3.5.21")
    found = binaries.locate("etcd", search_path=str(bin_dir))
    assert found.source == "missing" and found.path is None
    assert "3.5.21" in found.detail and "ignored" in found.detail
    built = _fake(binaries.build_dir(), "etcd", "etcd Version: 3.7.3")
    found = binaries.locate("etcd", search_path=str(bin_dir))
    assert (found.source, found.path, found.version) == ("built", str(built), release.ETCD)


def test_a_program_that_fails_is_ignored(home: Path) -> None:
    bin_dir = home / "bin"
    path = bin_dir / "kubectl"
    bin_dir.mkdir()
    path.write_text("#!/bin/sh\nexit 3\n")
    path.chmod(0o755)
    found = binaries.locate("kubectl", search_path=str(bin_dir))
    assert found.source == "missing" and "no version" in found.detail


def test_go_older_than_the_modules_need_is_refused(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    go = _fake(home / "go", "go", "go1.24.3")
    monkeypatch.setattr(binaries, "go_binary", lambda: str(go))
    with pytest.raises(binaries.PrerequisiteError, match=r"go1\.24"):
        binaries.require_go()
    _fake(home / "go", "go", "go1.26.8")
    assert binaries.require_go() == str(go)


def _config(tmp_path: Path) -> ControlPlaneConfig:
    return ControlPlaneConfig(
        workdir=tmp_path,
        etcd_client_port=23790,
        etcd_peer_port=23800,
        apiserver_port=64430,
        token="t0ken",
    )


def test_flags_bind_the_loopback_only(tmp_path: Path) -> None:
    cfg = _config(tmp_path)
    etcd = etcd_args(cfg)
    apiserver = apiserver_args(cfg)
    urls = [a.split("=", 1)[1] for a in etcd if a.startswith("--listen-")]
    assert urls == ["http://127.0.0.1:23790", "http://127.0.0.1:23800"]
    assert "--unsafe-no-fsync" in etcd
    assert "--unsafe-no-fsync" not in etcd_args(cfg.model_copy(update={"etcd_fsync": True}))
    assert "--etcd-servers=http://127.0.0.1:23790" in apiserver
    assert "--bind-address=127.0.0.1" in apiserver and "--secure-port=64430" in apiserver
    assert "--authorization-mode=RBAC" in apiserver and "--anonymous-auth=false" in apiserver
    assert f"--token-auth-file={tmp_path / 'tokens.csv'}" in apiserver
    assert f"--service-account-signing-key-file={tmp_path / 'sa.key'}" in apiserver
    assert all(str(tmp_path) in a for a in apiserver if a.endswith((".csv", ".key", ".pub")))


def test_a_new_config_takes_distinct_free_ports_and_a_fresh_token(tmp_path: Path) -> None:
    first, second = new_config(tmp_path), new_config(tmp_path)
    ports = {first.etcd_client_port, first.etcd_peer_port, first.apiserver_port}
    assert len(ports) == 3 and all(1024 <= p <= 65535 for p in ports)
    assert first.token != second.token and len(first.token) == 32


def test_kubeconfig_points_at_the_server_with_the_token(tmp_path: Path) -> None:
    cfg = _config(tmp_path)
    config = json.loads(render_kubeconfig(cfg))
    (cluster,) = config["clusters"]
    assert cluster["cluster"] == {
        "server": "https://127.0.0.1:64430",
        "certificate-authority": str(tmp_path / "certs" / "apiserver.crt"),
    }
    (user,) = config["users"]
    assert user["user"] == {"token": "t0ken"}
    assert config["current-context"] == config["contexts"][0]["name"]
    assert token_csv(cfg) == 't0ken,netdojo-admin,netdojo-admin,"system:masters"\n'


def test_doctor_reports_the_control_plane_as_optional(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(home / "empty"))
    checks = {c.name: c for c in provision.doctor_kubernetes()}
    assert set(checks) == {"kube-apiserver", "kubectl", "etcd"}
    assert all(c.optional and not c.ok and c.fix for c in checks.values())


def test_doctor_passes_with_only_optional_checks_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    checks = [
        provision.Check(name="engine", ok=True, detail="Docker answers"),
        provision.Check(name="etcd", ok=False, detail="not built", fix="x", optional=True),
    ]
    monkeypatch.setattr(provision, "doctor", lambda: checks)
    result = CliRunner().invoke(app, ["doctor", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["checks"][1] == {
        "name": "etcd",
        "ok": False,
        "detail": "not built",
        "optional": True,
    }
    checks[0] = provision.Check(name="engine", ok=False, detail="no daemon")
    assert CliRunner().invoke(app, ["doctor"]).exit_code == 1


def test_setup_builds_the_control_plane_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[str] = []
    ok = provision.Check(name="x", ok=True, detail="ok")
    monkeypatch.setattr(
        provision,
        "REQUIREMENTS",
        [provision.Requirement("engine", lambda: ran.append("engine") or ok)],
    )
    monkeypatch.setattr(
        provision,
        "KUBERNETES_REQUIREMENTS",
        [provision.Requirement("etcd", lambda: ran.append("etcd") or ok)],
    )
    assert [r.name for r in provision.setup()] == ["engine"]
    assert [r.name for r in provision.setup(kubernetes=True)] == ["engine", "etcd"]
    assert ran == ["engine", "engine", "etcd"]
