"""The planning tool's pure parts: the sandbox's command, its arguments, the hidden tests it
is judged by, and how a single-turn agent's reply is read as code."""

from __future__ import annotations

import pytest
from a2a.helpers import new_text_message
from pydantic import TypeAdapter

from netdojo.scenarios.capacity.lab import PLAN_DIR, PLANNER, SANDBOX_UID
from netdojo.scenarios.hidden_tests import (
    HiddenTest,
    PlanAnswerParams,
    PlanAnswerTest,
    PlanModelParams,
    PlanModelTest,
)
from netdojo.servers.purple_link import code_of
from netdojo.tools.python_code import MAX_CODE, PythonArguments, sandboxed
from netdojo.tools.spec import InvalidArguments


def test_the_code_runs_as_the_sandbox_user_with_no_new_privileges_and_limits() -> None:
    argv = sandboxed("print(1)", 15)
    assert argv[:5] == [
        "setpriv", f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_UID}", "--clear-groups",
        "--no-new-privs",
    ]  # fmt: skip
    limits = argv[argv.index("prlimit") + 1 : argv.index("env")]
    assert {word.split("=")[0] for word in limits} >= {"--as", "--cpu", "--fsize", "--nofile"}
    assert "--cpu=15" in limits
    assert argv[argv.index("-C") + 1] == PLAN_DIR and "-i" in argv
    assert argv[-4:] == ["python3", "-I", "-c", "print(1)"]


def test_arguments_are_checked_and_act_on_the_planner() -> None:
    assert PythonArguments.checked({"code": "print(1)"}).acts_on() == PLANNER
    for bad in ({"code": ""}, {"code": "x" * (MAX_CODE + 1)}, {"code": "1", "user": "root"}):
        with pytest.raises(InvalidArguments):
            PythonArguments.checked(bad)


def test_planning_tests_read_back_as_their_kind() -> None:
    tests = [
        PlanAnswerTest(
            id="target:answer",
            description="the answer",
            device=PLANNER,
            params=PlanAnswerParams(answers=[["b", "a"], None], ordered=[True, False]),
        ),
        PlanModelTest(
            id="target:model",
            description="the model",
            device=PLANNER,
            params=PlanModelParams(digest="ab" * 32, entities=10, relations=9),
        ),
    ]
    adapter = TypeAdapter(list[HiddenTest])
    assert adapter.validate_json(adapter.dump_json(tests)) == tests


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("Here it is:\n```python\nprint(1)\n```\n", "print(1)\n"),
        ("```py\nx = 1\n```", "x = 1\n"),
        ('{"tool": "python", "arguments": {"code": "1"}}', None),
        ("```python\n   \n```", None),
        ("```\nprint(1)\n```", None),
    ],
)
def test_a_reply_made_of_a_python_block_is_read_as_its_code(text: str, code: str | None) -> None:
    assert code_of(new_text_message(text)) == code
