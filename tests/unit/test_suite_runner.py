"""The suite's two side-by-side pytest runs: either failing, or collecting nothing, fails it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.suite import main

PASSING = "def test_passes():\n    assert True\n"
FAILING = "def test_fails():\n    assert False\n"


def _tests(folder: Path, text: str | None) -> list[str]:
    folder.mkdir()
    if text is not None:
        (folder / "test_it.py").write_text(text)
    return [str(folder), "-p", "no:cacheprovider"]


@pytest.mark.parametrize(
    ("unit", "live", "code"),
    [(PASSING, PASSING, 0), (FAILING, PASSING, 1), (PASSING, None, 1)],
)
def test_the_suite_passes_only_when_both_runs_pass_and_test_something(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], unit: str, live: str | None, code: int
) -> None:
    assert main([], _tests(tmp_path / "unit", unit), _tests(tmp_path / "live", live)) == code
    printed = capfd.readouterr().out
    assert "= unit tests =" in printed
    assert ("1 failed" in printed) == (FAILING in (unit, live))
    if live is None:
        assert "live tests: pytest collected no tests: failing" in printed
