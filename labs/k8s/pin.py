"""Rewrite the wrapper modules for the releases pinned in `release`: ``python -m
netdojo.labs.k8s.pin`` after changing `KUBERNETES` or `ETCD`, then commit go.mod and go.sum."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from netdojo.labs.k8s.binaries import build_env, require_go
from netdojo.labs.k8s.release import KUBERNETES, MODULES, wrapper_gomod


def _kubernetes_gomod(go: str) -> str:
    done = subprocess.run(
        [go, "mod", "download", "-json", f"k8s.io/kubernetes@{KUBERNETES}"],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(json.loads(done.stdout)["GoMod"]).read_text()


def main() -> None:
    go = require_go()
    upstream = _kubernetes_gomod(go)
    for module, folder in MODULES.items():
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "go.sum").unlink(missing_ok=True)
        (folder / "go.mod").write_text(wrapper_gomod(module, upstream))
        subprocess.run([go, "mod", "tidy"], cwd=folder, env=build_env(), check=True)
        print(f"pinned {folder / 'go.mod'}")


if __name__ == "__main__":
    main()
