"""The whole test suite as three pytest runs side by side: the unit tests, which need no lab
and keep one core busy, and the live tests in two halves, whose labs mostly wait on protocol
timers and share the Docker engine. The family-wide live checks (the audit, the cheater, the
leak check, the heuristic agent's and the Kubernetes families' episodes) make one half, every
other live test the other; each half's leftover check counts only its own labs.

The first live half prints as it goes; the other runs' output follows it. Any run failing
fails the suite, and so does a run that collects no test (pytest's exit code 5).

    python -m tests.suite [pytest arguments for every run]
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import tempfile

NO_TESTS = 5
FAMILY_WIDE = [
    "tests/integration/test_audit.py",
    "tests/integration/test_cheater.py",
    "tests/integration/test_leaks.py",
    "tests/integration/test_heuristic.py",
    "tests/integration/test_k8s_families.py",
]
Run = tuple[str, list[str]]
RUNS: list[Run] = [
    ("live", ["tests", "--ignore=tests/unit", *(f"--ignore={path}" for path in FAMILY_WIDE),
              "-o", "cache_dir=.pytest_cache/live"]),
    ("family-wide live", [*FAMILY_WIDE, "-o", "cache_dir=.pytest_cache/family"]),
    ("unit", ["tests/unit", "-o", "cache_dir=.pytest_cache/unit"]),
]  # fmt: skip


def _verdict(name: str, code: int) -> int:
    if code == NO_TESTS:
        print(f"{name} tests: pytest collected no tests: failing")
        return 1
    print(f"{name} tests: {'passed' if code == 0 else f'failed (exit {code})'}")
    return code


def main(extra: list[str], runs: list[Run] = RUNS) -> int:
    """Run ``runs`` at once, the first printing as it goes; the first failing run's code."""
    pytest = [sys.executable, "-m", "pytest", *extra]
    (_, first), others = runs[0], runs[1:]
    with contextlib.ExitStack() as stack:
        logs = [stack.enter_context(tempfile.TemporaryFile("w+")) for _ in others]
        started = [
            subprocess.Popen([*pytest, *args], stdout=log, stderr=subprocess.STDOUT, text=True)
            for (_, args), log in zip(others, logs, strict=True)
        ]
        try:
            codes = [subprocess.call([*pytest, *first])]
            codes += [process.wait() for process in started]
        except BaseException:
            for process in started:
                process.terminate()
                process.wait()
            raise
        for (name, _), log in zip(others, logs, strict=True):
            log.seek(0)
            print(f"\n{f' {name} tests ':=^100}\n{log.read()}", flush=True)
    verdicts = [_verdict(name, code) for (name, _), code in zip(runs, codes, strict=True)]
    return next((code for code in verdicts if code), 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
