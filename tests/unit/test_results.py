"""Summaries, paired run comparisons and leaderboards against hand-computed cases.

Wilson bounds use z = 1.959964 (z^2 = 3.841459), e.g. for 1 of 4:
denominator 1 + z^2/4 = 1.960365; center (0.25 + z^2/8) / 1.960365 = 0.372473;
half-width z * sqrt(0.25 * 0.75 / 4 + z^2 / 64) / 1.960365 = 0.326886.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest

from netdojo.judges.provenance import package_version
from netdojo.reports.compare import compare_runs
from netdojo.reports.leaderboard import leaderboard
from netdojo.reports.records import EpisodeRecord, Rate
from netdojo.reports.redact import MARK, scrub, scrub_text
from netdojo.reports.runs import RunError, agent_name, load_run, whole_numbers
from netdojo.reports.summary import summarize, trial_stats

from .episodes import record, run, trajectory

W_1_OF_4 = (0.045587, 0.699358)
W_2_OF_4 = (0.150039, 0.849961)
W_1_OF_2 = (0.094531, 0.905469)


def _bounds(rate: Rate) -> tuple[float, float]:
    return (round(rate.ci_low, 6), round(rate.ci_high, 6))


def _mixed() -> list[EpisodeRecord]:
    return [
        record("e1", "solved", calls=10, wall=20.0),
        record("e2", "unsafe", correct=True, safe=False, calls=20, wall=30.0),
        record("e3", "timeout", family="host-config", level=2, safe=False, calls=30, wall=60.0),
        record("e4", "unsolved", family="host-config", level=2, calls=40, wall=10.0),
        record("e5", "infra_error"),
        record("e6", "environment_invalid", family="host-config", level=2),
    ]


def test_errored_episodes_are_counted_apart_and_left_out_of_every_rate() -> None:
    summary = summarize(_mixed())
    assert (summary.episodes, summary.counted) == (6, 4)
    assert summary.excluded == {"infra_error": 1, "environment_invalid": 1}
    assert summary.solved.value == 0.25 and summary.solved.n == 4
    assert _bounds(summary.solved) == pytest.approx(W_1_OF_4, abs=1e-6)
    assert summary.correct.value == 0.5 and _bounds(summary.correct) == pytest.approx(W_2_OF_4)
    # e3 timed out, but a guard failed: the verdict's safety counts, not the outcome's name.
    assert summary.safe.value == 0.5
    assert summary.tool_calls.value == 25.0 and summary.tool_calls.n == 4  # (10+20+30+40)/4
    assert summary.wall_s.value == 30.0


def test_breakdowns_by_family_level_and_kind() -> None:
    breakdown = summarize(_mixed()).breakdown
    static, host = breakdown["family"]["static-routing"], breakdown["family"]["host-config"]
    assert (static.counted, static.solved.value, static.correct.value, static.safe.value) == (
        2, 0.5, 1.0, 0.5,
    )  # fmt: skip
    assert _bounds(static.solved) == pytest.approx(W_1_OF_2)
    assert (host.counted, host.solved.value, host.correct.value, host.safe.value) == (
        2, 0.0, 0.0, 0.5,
    )  # fmt: skip
    assert breakdown["level"]["2"] == host
    assert breakdown["kind"]["reactive"].counted == 4
    assert summarize(_mixed()).by_family["host-config"] == host.solved


def test_pass_at_k_and_pass_hat_k_average_over_instances() -> None:
    records = [
        # instance a: 3 trials, 2 solved; b: 3 trials, none; c: 2 counted trials, both solved
        *(record(f"a{t}", "solved" if t < 2 else "unsolved", instance="a", trial=t)
          for t in range(3)),
        *(record(f"b{t}", "unsolved", instance="b", trial=t) for t in range(3)),
        record("c0", "solved", instance="c"),
        record("c1", "solved", instance="c", trial=1),
        record("c2", "infra_error", instance="c", trial=2),
    ]  # fmt: skip
    stats = trial_stats([r for r in records if r.outcome != "infra_error"])
    assert stats is not None and (stats.trials, stats.instances) == (3, 3)
    # pass@1 = mean(2/3, 0, 1); pass@2 = mean(1 - C(1,2)/C(3,2) = 1, 0, 1) = 2/3
    assert stats.pass_at_k["1"].value == pytest.approx((2 / 3 + 0 + 1) / 3)
    assert stats.pass_at_k["2"].value == pytest.approx(2 / 3)
    # pass^2 = mean(C(2,2)/C(3,2) = 1/3, 0, 1) = 4/9
    assert stats.pass_hat_k["2"].value == pytest.approx(4 / 9)
    # k = 3: only a and b ran three trials; pass@3 = mean(1, 0), pass^3 = mean(0, 0)
    assert stats.pass_at_k["3"].value == 0.5 and stats.pass_at_k["3"].n == 2
    assert stats.pass_hat_k["3"].value == 0.0
    assert summarize(records).trials == stats


def test_one_trial_per_instance_has_no_trial_statistics() -> None:
    assert summarize(_mixed()).trials is None


def _flags(pattern: str) -> list[str]:
    return ["solved" if c == "1" else "unsolved" for c in pattern]


def test_runs_compare_pair_by_pair_on_shared_instances() -> None:
    a = run("agent-a", [
        *(record(f"a{i}", o, instance=f"i{i}") for i, o in enumerate(_flags("11001"))),
        record("a5", "infra_error", instance="i5"),
    ], path="runs/a")  # fmt: skip
    b = run("agent-b", [
        *(record(f"b{i}", o, instance=f"i{i}") for i, o in enumerate(_flags("10100"))),
        record("b5", "solved", instance="i5"),
        record("b6", "solved", instance="i6"),
    ], path="runs/b")  # fmt: skip
    comparison = compare_runs(a, b)
    assert (comparison.pairs, comparison.instances) == (5, 5)
    assert (comparison.only_a, comparison.only_b) == (0, 2)  # i5 is left out in A
    solved = next(m for m in comparison.measures if m.measure == "solved")
    paired = solved.paired
    assert (paired.a_only, paired.b_only, paired.both, paired.neither) == (2, 1, 1, 1)
    assert paired.difference.value == pytest.approx(0.2)
    assert paired.mcnemar_p == 1.0  # 2 * P(X <= 1 | n = 3) = 1
    assert (solved.a.value, solved.b.value) == (0.6, 0.4)
    assert [g.group for g in comparison.groups] == ["all", "family:static-routing", "level:1"]
    assert comparison.overlap_share == 1.0
    assert comparison.a == f"agent-a ({Path('runs/a')})"


def test_runs_without_shared_instances_cannot_be_paired() -> None:
    a = run("a", [record("x", "solved", instance="x")])
    b = run("b", [record("y", "solved", instance="y")])
    with pytest.raises(ValueError, match="share no"):
        compare_runs(a, b)


def test_leaderboard_ranks_correct_and_safe_then_effort() -> None:
    good = [
        run("good", [record("g1", "solved", instance="i1"), record("g2", "solved", instance="i2")],
            path="g1"),
        run("good", [record("g3", "solved", instance="i1"),
                     record("g4", "unsolved", instance="i2"), record("g5", "infra_error")],
            path="g2"),
    ]  # fmt: skip
    idle = run("idle", [record(f"n{i}", "unsolved", calls=1) for i in range(2)], path="n")
    careless = run(
        "careless",
        [record(f"c{i}", "unsafe", correct=True, safe=False, calls=20) for i in range(2)],
        path="c",
    )
    board = leaderboard([careless, idle, *good])
    assert [e.agent for e in board.entries] == ["good", "idle", "careless"]
    assert [e.rank for e in board.entries] == [1, 2, 3]
    first = board.entries[0]
    assert (first.score.value, first.score.n) == (0.75, 4)  # 3 of 4 counted, runs pooled
    assert _bounds(first.score) == pytest.approx((0.300642, 0.954413))
    assert (first.instances, first.episodes, first.excluded) == (2, 4, 1)
    assert first.runs == ["g1", "g2"]
    # Doing nothing is safe, yet scores nothing; careless changes are correct, yet score nothing.
    idle_entry, careless_entry = board.entries[1], board.entries[2]
    assert (idle_entry.score.value, idle_entry.safe.value) == (0.0, 1.0)
    assert (careless_entry.score.value, careless_entry.correct.value) == (0.0, 1.0)
    dumped = json.loads(board.model_dump_json())
    assert set(dumped["entries"][0]["score"]) == {"value", "ci_low", "ci_high", "n"}


def test_redaction_removes_tokens_and_keys_but_not_device_configuration() -> None:
    token = secrets.token_urlsafe(32)
    text = (
        f"curl -H 'Authorization: Bearer {token}' x; api_key=abc123; key sk-proj-{'A1b2' * 6}; "
        f"bare {token}; ip ospf message-digest-key 1 md5 N3tw0rkKey; "
        "sha256:adca658c4a3950be238dba0ec3eb17fd73c68530b5a9b6ee4750aa30bc305da9 b407ac4091c6-t0-0"
    )
    clean = scrub_text(text, [])
    assert token not in clean and "abc123" not in clean and "sk-proj" not in clean
    assert clean.count(MARK) == 4
    assert "message-digest-key 1 md5 N3tw0rkKey" in clean
    assert "adca658c4a3950be238dba0ec3eb17fd73c68530b5a9b6ee4750aa30bc305da9" in clean
    assert "b407ac4091c6-t0-0" in clean
    nested = scrub({"a": [f"x {token}"], "b": {"c": "plain"}, "n": 3}, [])
    assert nested == {"a": [f"x {MARK}"], "b": {"c": "plain"}, "n": 3}


def test_redaction_removes_known_secrets_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NETDOJO_LLM_API_KEY", "plainpassword42")
    assert scrub("key plainpassword42 used") == f"key {MARK} used"


def test_agent_names_drop_the_url() -> None:
    assert agent_name("netdojo-heuristic (http://127.0.0.1:57373)") == "netdojo-heuristic"
    assert agent_name("my agent (v2)") == "my agent (v2)"


def test_whole_numbers_come_back_as_ints() -> None:
    assert whole_numbers({"index": 3.0, "rtt": [0.5, 2.0], "s": "1.0"}) == {
        "index": 3, "rtt": [0.5, 2], "s": "1.0",
    }  # fmt: skip


def test_a_run_folder_reads_back(tmp_path: Path) -> None:
    written = run("agent", [record("e1", "solved"), record("e2", "infra_error")])
    (tmp_path / "results.json").write_text(written.result.model_dump_json())
    (tmp_path / "trajectories").mkdir()
    data = trajectory("e1").model_dump(mode="json")
    data["steps"][0]["index"] = 0.0  # as A2A data parts carry numbers
    (tmp_path / "trajectories" / "e1.json").write_text(json.dumps(data))
    loaded = load_run(tmp_path)
    assert loaded.agent == "agent" and loaded.result == written.result
    assert set(loaded.trajectories) == {"e1"}
    assert loaded.trajectories["e1"] == trajectory("e1")
    assert loaded.summary.excluded == {"infra_error": 1}


def test_a_folder_without_results_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RunError, match=r"results\.json"):
        load_run(tmp_path)


def test_the_frr_version_is_read_from_the_dpkg_database() -> None:
    status = (
        "Package: frr-pythontools\nStatus: install ok installed\nVersion: 8.4.4-1.1~deb12u2\n\n"
        "Package: frr\nStatus: deinstall ok config-files\nVersion: 7.5.1-1\n\n"
        "Package: frr\nStatus: install ok installed\nPriority: optional\n"
        "Description: BGP/OSPF/RIP routing daemon\n continued: line\nVersion: 8.4.4-1.1~deb12u2\n"
    )
    assert package_version(status, "frr") == "8.4.4-1.1~deb12u2"
    assert package_version(status, "bird2") is None


def test_a_trajectory_forgets_a_secret_wherever_it_was_echoed() -> None:
    token = secrets.token_urlsafe(32)
    recorded = trajectory("e1", extra=f"Bearer {token}")
    recorded.submitted = f"done; token {token}"
    steps = recorded.steps
    recorded.redact(token)
    assert token not in recorded.model_dump_json()
    assert recorded.steps is steps  # the list the tools append to stays the same object
    assert recorded.steps[1].arguments["command"] == "show version Bearer [redacted]"
    assert recorded.submitted == "done; token [redacted]"
