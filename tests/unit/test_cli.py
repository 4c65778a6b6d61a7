"""The command line: help lists the verbs, the version prints, bad input gets a clear error."""

from __future__ import annotations

import re

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
