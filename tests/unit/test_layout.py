"""The package layout: folders map to `netdojo.<folder>` and imports point one way."""

from __future__ import annotations

import ast
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ["labs", "scenarios", "tools", "judges", "servers", "clients"]
# What each folder may import from netdojo (the design's dependency direction).
ALLOWED = {
    "labs": {"labs"},
    "scenarios": {"labs", "scenarios"},
    "tools": {"labs", "scenarios", "tools"},
    "judges": {"labs", "scenarios", "tools", "judges"},
    "servers": {"labs", "scenarios", "tools", "judges", "servers"},
    "clients": {"labs", "scenarios", "tools", "judges", "clients"},
}


def _netdojo_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            parts = name.split(".")
            if parts[0] == "netdojo" and len(parts) > 1:
                found.add(parts[1])
    return found


@pytest.mark.parametrize("layer", LAYERS)
def test_imports_point_one_way(layer: str) -> None:
    for path in (ROOT / layer).rglob("*.py"):
        used = _netdojo_imports(path) & set(LAYERS)
        assert used <= ALLOWED[layer], f"{path.relative_to(ROOT)} imports {used - ALLOWED[layer]}"


def test_wheel_maps_top_level_folders_into_the_package(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "-w", str(tmp_path), str(ROOT)],
        check=True, capture_output=True,
    )  # fmt: skip
    (wheel,) = tmp_path.glob("netdojo-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for layer in LAYERS:
        assert f"netdojo/{layer}/__init__.py" in names
    assert "netdojo/labs/plugin/driver.py" in names
    assert "netdojo/labs/image/files/systemctl" in names
    assert "netdojo/cli.py" in names
