"""One-line descriptions of errors, as audits and episodes record them."""

from __future__ import annotations

from netdojo.errors import describe
from netdojo.labs.errors import LabError


def test_a_task_groups_error_is_described_by_the_error_inside() -> None:
    nested = ExceptionGroup("outer", [ExceptionGroup("inner", [LabError("r1 is gone")])])
    assert describe(nested) == "LabError: r1 is gone"


def test_a_plain_error_is_described_by_its_type_and_message() -> None:
    assert describe(TimeoutError("no answer")) == "TimeoutError: no answer"
