"""The package layout: folders map to `netdojo.<folder>` and imports point one way."""

from __future__ import annotations

import ast
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ["labs", "scenarios", "tools", "judges", "reports", "servers", "clients"]
# What each folder may import from netdojo (the design's dependency direction). Reports read
# the result records, which hold trajectories (`netdojo.tools.trajectory`, pure data).
ALLOWED = {
    "labs": {"labs"},
    "scenarios": {"labs", "scenarios"},
    "tools": {"labs", "scenarios", "tools"},
    "judges": {"labs", "scenarios", "tools", "judges", "reports"},
    "reports": {"tools", "reports"},
    "servers": {"labs", "scenarios", "tools", "judges", "reports", "servers"},
    "clients": {"labs", "scenarios", "tools", "judges", "reports", "clients"},
}
RECORDS = "netdojo.reports.records"
RUNTIME = ("docker", "kathara", "netdojo.labs")


def _netdojo_modules(path: Path) -> set[str]:
    """Every netdojo module ``path`` imports, by its full name."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return {name for name in found if name.startswith("netdojo.")}


def _netdojo_imports(path: Path) -> set[str]:
    return {name.split(".")[1] for name in _netdojo_modules(path)}


@pytest.mark.parametrize("layer", LAYERS)
def test_imports_point_one_way(layer: str) -> None:
    for path in (ROOT / layer).rglob("*.py"):
        used = _netdojo_imports(path) & set(LAYERS)
        assert used <= ALLOWED[layer], f"{path.relative_to(ROOT)} imports {used - ALLOWED[layer]}"


def test_judges_use_only_the_result_records_of_reports() -> None:
    for path in (ROOT / "judges").rglob("*.py"):
        used = {m for m in _netdojo_modules(path) if m.startswith("netdojo.reports")}
        assert used <= {RECORDS}, f"{path.relative_to(ROOT)} imports {used - {RECORDS}}"


def test_the_result_records_sit_at_the_bottom_of_reports() -> None:
    used = _netdojo_modules(ROOT / "reports" / "records.py")
    assert used <= {"netdojo.tools.trajectory"}, used
    assert _netdojo_modules(ROOT / "tools" / "trajectory.py") == set()


@pytest.mark.parametrize("module", ["report", "summary", "leaderboard", "export", "records"])
def test_reading_results_loads_no_lab_runtime(module: str, tmp_path: Path) -> None:
    """A fresh interpreter imports the module; neither Docker, Kathará nor the labs come in."""
    check = (
        f"import sys; import netdojo.reports.{module}; "
        f"print(sorted(m for m in sys.modules if m.lower().startswith({RUNTIME})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", check], capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", f"netdojo.reports.{module} loads {done.stdout.strip()}"


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
