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
    for verb in ("up", "exec", "down", "list", "info", "connect"):
        assert re.search(rf"\b{verb}\b", lab_help.output)


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"netdojo {__version__}"


def test_every_command_has_help() -> None:
    lab_verbs = [["lab", verb] for verb in ("up", "exec", "down", "list", "info", "connect")]
    for verb in (["setup"], ["doctor"], ["reap"], ["demo"], *lab_verbs):
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


@pytest.fixture
def no_docker(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any step that would reach the engine fail the test."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the command reached Docker")

    monkeypatch.setattr("netdojo.console.reap_leftovers", refuse)
    monkeypatch.setattr("netdojo.labs.runtime.start_lab", refuse)
    monkeypatch.setattr("netdojo.labs.runtime.find_lab", refuse)


def _lab_folder(root: Path, conf: str) -> Path:
    root.mkdir()
    (root / "lab.conf").write_text(conf)
    return root


def test_lab_up_refuses_a_bad_name_before_deploying(tmp_path: Path, no_docker: None) -> None:
    folder = _lab_folder(tmp_path / "lab", "r1[0]=A\nr1[num_terms]=2\nr1[shell]=/bin/sh\n")
    result = runner.invoke(app, ["lab", "up", str(folder), "--name", "my lab"])
    assert result.exit_code == 2, result.output
    lines = result.output.splitlines()
    assert lines == [
        "warning: lab.conf line 2: num_terms of 'r1' ignored: netdojo opens no terminals; "
        "use `netdojo lab connect LAB DEVICE`",
        "warning: lab.conf line 3: shell of 'r1' ignored: startup commands and "
        "`netdojo lab connect` use /bin/bash",
        "error: lab name 'my lab' is refused: a lab name may hold only letters a-z and A-Z, "
        "digits, '_', '.' and '-', starting with a letter or a digit, at most 64 characters",
    ]


def test_lab_up_lists_every_problem_of_a_folder(tmp_path: Path, no_docker: None) -> None:
    folder = _lab_folder(tmp_path / "lab", "r1[0]=A\nr1[bridged]=true\nr1[colour]=red\n")
    result = runner.invoke(app, ["lab", "up", str(folder)])
    assert result.exit_code == 2
    assert result.output.startswith("error: invalid lab spec (2 problem(s)):")
    assert "bridged of 'r1' would connect the device to the host's network" in result.output
    assert "Traceback" not in result.output


def test_debug_adds_the_traceback(tmp_path: Path, no_docker: None) -> None:
    folder = _lab_folder(tmp_path / "lab", "r1[0]=A\n")
    result = runner.invoke(app, ["lab", "up", str(folder), "--name", "../x", "--debug"])
    assert result.exit_code == 2
    assert "Traceback" in result.output
    assert result.output.rstrip().splitlines()[-1].startswith("error: lab name '../x' is refused")


def test_lab_connect_needs_a_terminal(no_docker: None) -> None:
    result = runner.invoke(app, ["lab", "connect", "ospf", "r1"])
    assert result.exit_code == 2
    assert result.output == (
        "error: lab connect needs a terminal; for one command use "
        "`netdojo lab exec ospf r1 -- COMMAND`\n"
    )


def test_an_unexpected_error_is_one_line_that_points_at_debug(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def engine_gone(name: str) -> None:
        raise ConnectionRefusedError(111, "Connection refused")

    monkeypatch.setattr("netdojo.labs.runtime.find_lab", engine_gone)
    result = runner.invoke(app, ["lab", "info", "ospf"])
    assert result.exit_code == 2
    assert result.output == (
        "error: [Errno 111] Connection refused (ConnectionRefusedError) "
        "(run again with --debug for the traceback)\n"
    )
