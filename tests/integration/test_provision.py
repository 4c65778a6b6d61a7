"""Provisioning is idempotent and `doctor` reports every requirement."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

NETDOJO = str(Path(sys.executable).parent / "netdojo")
REQUIREMENTS = {"engine", "image", "plugin", "settings", "br_netfilter", "veth"}
CHECKED_ONLY = {"device packages"}  # a check of `doctor` that `setup` has nothing to do for
OPTIONAL = {"kube-apiserver", "kubectl", "etcd"}  # built by `netdojo setup --kubernetes`


def test_setup_again_skips_every_step() -> None:
    done = subprocess.run([NETDOJO, "setup"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    for name in REQUIREMENTS:
        assert f"{name}: skipped" in done.stdout


def test_doctor_json_is_all_ok() -> None:
    """Every requirement holds; the optional control-plane binaries are reported, present or
    not, without failing the whole."""
    done = subprocess.run([NETDOJO, "doctor", "--json"], capture_output=True, text=True)
    report = json.loads(done.stdout)
    assert done.returncode == 0, report
    assert report["ok"] is True
    checks = report["checks"]
    assert all(set(c) == {"name", "ok", "detail", "optional"} and c["detail"] for c in checks)
    assert {c["name"] for c in checks if not c["optional"]} == REQUIREMENTS | CHECKED_ONLY
    assert all(c["ok"] for c in checks if not c["optional"])
    assert {c["name"] for c in checks if c["optional"]} == OPTIONAL


def test_user_kathara_settings_are_never_written(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
    code = "from netdojo.labs.kathara_backend import manager; manager()"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / ".config" / "kathara.conf").exists()
    assert (tmp_path / ".local" / "state" / "netdojo" / "kathara" / "kathara.conf").exists()
