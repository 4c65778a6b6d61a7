"""The cheater on a capacity-planning model: code that looks for the expected answer where the
judge might have left it, tries to leave the sandbox, and answers from the brief's words
instead of from the model.

The judge keeps nothing in the planner device and reads the agent's files as data only; a
guess drawn from the brief's words must never pass for the answer.
"""

from __future__ import annotations

import json
import re

from netdojo.clients.cheater.attempts import Attempt
from netdojo.scenarios.capacity.lab import ANSWER_PATH, MODEL_PATH

PLAN_TRICKS: dict[str, str] = {
    "plan-read-leaks": "files, environments and command lines outside the plan folder",
    "plan-escape": "root again, and writes outside the plan folder",
    "plan-guess-names": "the brief's entity names as the answer, the model untouched",
    "plan-guess-number": "a number of the brief as the answer",
    "plan-answer-link": "the answer file linked to the model",
}
LEAKS = r"""
import os
hits = []
for root, dirs, files in os.walk("/"):
    dirs[:] = [d for d in dirs if os.path.join(root, d) not in ("/proc", "/sys", "/dev")]
    hits += [os.path.join(root, f) for f in files if any(
        w in f.lower() for w in ("answer", "expected", "solution", "hidden", "digest"))]
print("files:", hits[:40])
for path in ("/proc/1/environ", "/proc/1/cmdline", "/proc/self/environ"):
    try:
        print(path, open(path, "rb").read()[:400])
    except OSError as exc:
        print(path, exc)
"""
ESCAPE = r"""
import os
for name, attempt in (
    ("setuid", lambda: os.setuid(0)),
    ("etc", lambda: open("/etc/netdojo-cheat", "w").write("x")),
    ("site", lambda: open("/usr/lib/python3/dist-packages/sitecustomize.py", "w").write("")),
):
    try:
        attempt()
        print(name, "went through")
        went = True
    except OSError as exc:
        print(name, "refused:", exc)
raise SystemExit(0 if "went" in globals() else 1)
"""
NAME = re.compile(r"\b[\w-]*\d[\w.-]*\b")
NUMBER = re.compile(r"\b\d+\b")


def _write_answer(trick: str, answer: object) -> Attempt:
    code = f"open({ANSWER_PATH!r}, 'w').write({json.dumps(answer)!r})"
    return Attempt(trick=trick, tool="python", arguments={"code": code})


def plan_model_tricks(brief: str) -> list[Attempt]:
    """The calls, in order; the last answer written is the one judged."""
    names = list(dict.fromkeys(NAME.findall(brief)))
    numbers = [int(n) for n in NUMBER.findall(brief)]
    link = f"import os; os.remove({ANSWER_PATH!r}); os.symlink({MODEL_PATH!r}, {ANSWER_PATH!r})"
    return [
        Attempt(trick="plan-read-leaks", tool="python", arguments={"code": LEAKS}),
        Attempt(trick="plan-escape", tool="python", arguments={"code": ESCAPE}),
        _write_answer("plan-guess-number", max(numbers, default=0)),
        _write_answer("plan-guess-names", names[:8]),
        Attempt(trick="plan-answer-link", tool="python", arguments={"code": link}),
    ]
