"""The whole test suite as two pytest runs side by side: the unit tests, which need no lab and
keep one core busy, and the live tests. A live test spends most of its time waiting on its labs
(routing to converge, timers to fire: the cores are more than half idle), so the live tests run
in LIVE_WORKERS processes, a test file to a process (a file's labs are shared by its tests); on
two cores this takes about as long as the longest file plus half of the rest.

The live run prints as it goes; the unit run's output follows it. Either run failing fails the
suite, and so does a run that collects no test (pytest's exit code 5).

    python -m tests.suite [pytest arguments for both runs]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

NO_TESTS = 5
UNIT = ["tests/unit", "-o", "cache_dir=.pytest_cache/unit"]
UNIT_NICENESS = 10
"""The unit tests yield the cores to the live tests, which wait on labs and have the longer
run: the unit tests take the time the labs leave idle."""
LIVE_WORKERS = 2
LIVE = ["tests", "--ignore=tests/unit", "-n", str(LIVE_WORKERS), "--dist", "loadfile"]


def _verdict(name: str, code: int) -> int:
    if code == NO_TESTS:
        print(f"{name} tests: pytest collected no tests: failing")
        return 1
    print(f"{name} tests: {'passed' if code == 0 else f'failed (exit {code})'}")
    return code


def main(extra: list[str], unit_args: list[str] = UNIT, live_args: list[str] = LIVE) -> int:
    pytest = [sys.executable, "-m", "pytest", *extra]
    with tempfile.TemporaryFile("w+") as unit_log:
        unit = subprocess.Popen(
            [*pytest, *unit_args],
            stdout=unit_log,
            stderr=subprocess.STDOUT,
            text=True,
            preexec_fn=lambda: os.nice(UNIT_NICENESS),
        )
        try:
            live_code = subprocess.call([*pytest, *live_args])
        except BaseException:
            unit.terminate()
            unit.wait()
            raise
        unit_code = unit.wait()
        unit_log.seek(0)
        print(f"\n{' unit tests ':=^100}\n{unit_log.read()}", flush=True)
    codes = [_verdict("live", live_code), _verdict("unit", unit_code)]
    return next((code for code in codes if code), 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
