"""`netdojo run` killed mid-assessment: the next start removes its orphaned lab and
`netdojo run --resume DIR` runs only the missing episodes, losing none that were recorded."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import docker

NETDOJO = str(Path(sys.executable).parent / "netdojo")


def _labs_of(pid: int) -> set[str]:
    """Lab hashes of the containers owned by process ``pid``."""
    client = docker.from_env()
    try:
        found = client.api.containers(all=True, filters={"label": "netdojo.owner"})
    finally:
        client.close()
    return {
        c["Labels"]["lab_hash"] for c in found if c["Labels"]["netdojo.owner"].startswith(f"{pid}:")
    }


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_a_killed_run_is_resumed_without_redoing_or_losing_episodes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    journal = out / "episodes.jsonl"
    argv = [NETDOJO, "run", "--agent", "noop", "--families", "static-routing",
            "--seeds", "1,2,3", "--concurrency", "2", "--out", str(out)]  # fmt: skip
    log = (tmp_path / "first.log").open("w")
    first = subprocess.Popen(argv, stdout=log, stderr=log, start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while not (_lines(journal) and _labs_of(first.pid)):
            assert first.poll() is None, (tmp_path / "first.log").read_text()[-2000:]
            assert time.monotonic() < deadline, "no episode finished while another ran"
            time.sleep(0.5)
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
    finally:
        if first.poll() is None:
            os.kill(first.pid, signal.SIGKILL)
            first.wait()
        log.close()
    recorded = _lines(journal)
    orphaned = _labs_of(first.pid)
    assert recorded and orphaned, "the kill came after one episode and during another"
    run_spec = json.loads((out / "run.json").read_text())
    assert run_spec["agent"] == "noop" and run_spec["config"]["seeds"] == [1, 2, 3]

    resumed = subprocess.run(
        [NETDOJO, "run", "--resume", str(out)], capture_output=True, text=True, timeout=300
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert _labs_of(first.pid) == set(), "the dead run's lab was removed at start-up"

    lines = _lines(journal)
    assert lines[: len(recorded)] == recorded, "recorded episodes are kept as they were"
    slots = [json.loads(line)["slot"] for line in lines]
    assert sorted(slots) == [0, 1, 2], "each slot ran exactly once"
    result = json.loads((out / "results.json").read_text())
    episodes = result["episodes"]
    assert [e["slot"] for e in episodes] == [0, 1, 2]
    assert [e["seed"] for e in episodes] == [1, 2, 3]
    before = {json.loads(line)["slot"]: json.loads(line) for line in recorded}
    for episode in episodes:
        if episode["slot"] in before:
            assert episode == before[episode["slot"]], "a finished episode is not run again"
    assert result["summary"]["episodes"] == 3
    assert result["summary"]["outcomes"] == {"unsolved": 3}
    trajectories = {p.stem for p in (out / "trajectories").glob("*.json")}
    assert {e["episode_id"] for e in episodes} <= trajectories
