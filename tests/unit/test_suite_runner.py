"""The suite's side-by-side pytest runs: any failing, or collecting nothing, fails it."""

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
    ("live", "family", "unit", "code"),
    [
        (PASSING, PASSING, PASSING, 0),
        (PASSING, PASSING, FAILING, 1),
        (PASSING, FAILING, PASSING, 1),
        (FAILING, PASSING, PASSING, 1),
        (None, PASSING, PASSING, 1),
        (PASSING, None, PASSING, 1),
    ],
)
def test_the_suite_passes_only_when_every_run_passes_and_tests_something(
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
    live: str | None,
    family: str | None,
    unit: str,
    code: int,
) -> None:
    runs = [
        ("live", _tests(tmp_path / "live", live)),
        ("family-wide live", _tests(tmp_path / "family", family)),
        ("unit", _tests(tmp_path / "unit", unit)),
    ]
    assert main([], runs) == code
    printed = capfd.readouterr().out
    assert "= unit tests =" in printed and "= family-wide live tests =" in printed
    assert ("1 failed" in printed) == (FAILING in (live, family, unit))
    for name, text in (("live", live), ("family-wide live", family)):
        if text is None:
            assert f"\n{name} tests: pytest collected no tests: failing" in printed
