"""The package layout: folders map to `netdojo.<folder>` and imports point one way."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ["labs", "scenarios", "tools", "judges", "reports", "servers", "clients"]
# What each folder may import from netdojo (the design's dependency direction: labs <- scenarios
# <- tools <- judges <- servers/clients, reports beside the judge). Reports read the result
# records, which hold trajectories (`netdojo.tools.trajectory`, pure data).
ALLOWED = {
    "labs": {"labs"},
    "scenarios": {"labs", "scenarios"},
    "tools": {"labs", "scenarios", "tools"},
    "judges": {"labs", "scenarios", "tools", "judges", "reports"},
    "reports": {"tools", "reports"},
    "servers": {"labs", "scenarios", "tools", "judges", "reports", "servers"},
    "clients": {"labs", "scenarios", "tools", "judges", "reports", "clients"},
}
COMMAND_LINE = {path.stem for path in (ROOT / "netdojo").glob("*.py")} - {"__init__"}
SHARED = {"netdojo", "netdojo.errors"}
"""What every folder may take from the package root: the version and the shared error base."""
RECORDS = "netdojo.reports.records"
RUNTIME = ("docker", "kathara", "netdojo.labs")
MODULE_PATH = re.compile(r"\bnetdojo(?:\.[A-Za-z_]\w*)+")


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the module's, classes' and functions' docstring nodes."""
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
            found.add(id(first.value))
    return found


def _is_module(name: str) -> bool:
    """Whether ``name`` is netdojo, one of its folders' modules, or a module of its root."""
    parts = name.split(".")
    return len(parts) == 1 or parts[1] in LAYERS or parts[1] in COMMAND_LINE


def netdojo_modules(source: str) -> set[str]:
    """Every netdojo module ``source`` imports, by its full name: ``import`` and ``from``
    statements (``from netdojo import x`` as ``netdojo.x``, the version as ``netdojo``), and
    module paths written in string constants other than docstrings."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "netdojo":
                found |= {f"netdojo.{alias.name}" for alias in node.names}
            else:
                found.add(node.module)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
        ):
            found |= set(MODULE_PATH.findall(node.value))
    named = {"netdojo" if name == "netdojo.__version__" else name for name in found}
    return {name for name in named if name.split(".")[0] == "netdojo" and _is_module(name)}


def _netdojo_modules(path: Path) -> set[str]:
    return netdojo_modules(path.read_text())


def _folder(module: str) -> str:
    """The folder a module lives in: a layer, or ``netdojo`` for the package root."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else "netdojo"


@pytest.mark.parametrize("layer", LAYERS)
def test_imports_point_one_way(layer: str) -> None:
    for path in (ROOT / layer).rglob("*.py"):
        used = _netdojo_modules(path)
        layers = {_folder(m) for m in used} - {"netdojo"}
        assert layers <= ALLOWED[layer], (
            f"{path.relative_to(ROOT)} imports {layers - ALLOWED[layer]}"
        )
        root = {m for m in used if _folder(m) == "netdojo"}
        assert root <= SHARED, f"{path.relative_to(ROOT)} imports {root - SHARED} from the root"


def test_the_shared_root_modules_import_nothing_of_netdojo() -> None:
    for name in ("__init__", "errors"):
        assert _netdojo_modules(ROOT / "netdojo" / f"{name}.py") == set(), name


def test_nothing_imports_the_command_line() -> None:
    for path in (ROOT / "netdojo").glob("*.py"):
        assert "netdojo.cli" not in _netdojo_modules(path), path.name


def test_imports_written_as_strings_count() -> None:
    code = (
        '"""Docs may name `netdojo.judges`."""\n'
        "import importlib\n"
        "from netdojo import __version__, errors\n"
        'importlib.import_module("netdojo.servers.green")\n'
        'CODE = "from netdojo.cli import main; main()"\n'
        'LABEL = "netdojo.owner"\n'
    )
    assert netdojo_modules(code) == {
        "netdojo",
        "netdojo.errors",
        "netdojo.servers.green",
        "netdojo.cli",
    }


def test_judges_use_only_the_result_records_of_reports() -> None:
    for path in (ROOT / "judges").rglob("*.py"):
        used = {m for m in _netdojo_modules(path) if m.startswith("netdojo.reports")}
        assert used <= {RECORDS}, f"{path.relative_to(ROOT)} imports {used - {RECORDS}}"


def test_the_result_records_sit_at_the_bottom_of_reports() -> None:
    used = _netdojo_modules(ROOT / "reports" / "records.py")
    assert used <= {"netdojo.tools.trajectory"}, used
    assert _netdojo_modules(ROOT / "tools" / "trajectory.py") == set()


@pytest.mark.parametrize(
    "module",
    ["report_page", "summary", "leaderboard", "export", "records", "runs", "outputs", "merge"],
)
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
    for module in ("kubernetes", "etcd"):
        assert f"netdojo/labs/k8s/gomod/{module}/go.sum" in names
    assert "netdojo/cli.py" in names
