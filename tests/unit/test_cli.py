"""The command line: help lists the verbs, the version prints, bad input gets a clear error."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from netdojo import __version__
from netdojo.cli import app

runner = CliRunner()


def test_help_lists_subcommands() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for verb in ("setup", "doctor", "reap", "demo", "lab"):
        assert re.search(rf"\b{verb}\b", result.output)
    lab_help = runner.invoke(app, ["lab", "--help"])
    for verb in ("up", "exec", "down", "list"):
        assert re.search(rf"\b{verb}\b", lab_help.output)


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"netdojo {__version__}"


def test_every_command_has_help() -> None:
    for verb in (["setup"], ["doctor"], ["reap"], ["demo"], ["lab", "up"], ["lab", "exec"]):
        result = runner.invoke(app, [*verb, "--help"])
        assert result.exit_code == 0, verb
        assert "Usage" in result.output


HEAVY = (
    "netdojo.labs",
    "netdojo.scenarios",
    "netdojo.tools",
    "netdojo.judges",
    "netdojo.reports",
    "netdojo.servers",
    "netdojo.clients",
    "docker",
    "Kathara",
    "kathara",
    "mcp",
    "a2a",
    "uvicorn",
    "starlette",
)


@pytest.mark.parametrize("option", ["--version", "--help"])
def test_version_and_help_load_only_the_command_line(option: str, tmp_path: Path) -> None:
    """A fresh interpreter answers; no lab runtime, judge, server, scenario or protocol SDK
    is imported on the way (read from ``-X importtime``)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "netdojo.cli", option],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=os.environ,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    imported = {
        line.rsplit("|", 1)[-1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "netdojo.cli" in imported or "netdojo.arena_commands" in imported
    loaded = sorted(m for m in imported if m.split(".")[0] in HEAVY or m.startswith(HEAVY))
    assert loaded == [], f"netdojo {option} loads {loaded}"
    if option == "--version":
        assert done.stdout.strip() == f"netdojo {__version__}"
