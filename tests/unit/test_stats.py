"""Arena statistics against hand-computed cases.

Hand values use z = 1.959964 for 95%, so z^2 = 3.841459.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from netdojo.reports.records import Rate
from netdojo.reports.stats import (
    bootstrap_mean,
    mcnemar_exact,
    paired_comparison,
    pass_at_k,
    pass_hat_k,
    wilson,
)


def test_wilson_with_no_trials_is_uninformative() -> None:
    assert wilson(0, 0) == Rate(value=0.0, ci_low=0.0, ci_high=1.0, n=0)


def test_wilson_at_zero_successes() -> None:
    # At p = 0 the upper bound reduces to (z^2/n) / (1 + z^2/n) = 0.3841459 / 1.3841459 = 0.277533.
    rate = wilson(0, 10)
    assert rate.value == 0.0
    assert rate.ci_low == 0.0
    assert rate.ci_high == pytest.approx(0.277533, abs=1e-4)
    assert rate.n == 10


def test_wilson_at_all_successes_mirrors_zero() -> None:
    rate = wilson(10, 10)
    assert rate.value == 1.0
    assert rate.ci_low == pytest.approx(1 - 0.277533, abs=1e-4)
    assert rate.ci_high == 1.0


def test_wilson_at_half() -> None:
    # p = 0.5, n = 10: the center is exactly 0.5; the half-width is
    # z * sqrt(0.025 + z^2/400) / (1 + z^2/10) = 1.959964 * 0.186020 / 1.384146 = 0.263407.
    rate = wilson(5, 10)
    assert rate.value == 0.5
    assert rate.ci_low == pytest.approx(0.2366, abs=1e-4)
    assert rate.ci_high == pytest.approx(0.7634, abs=1e-4)


def test_wilson_at_81_of_263() -> None:
    # p = 0.307985; denominator = 1 + z^2/263 = 1.014606;
    # center = (p + z^2/526) / denominator = (0.307985 + 0.007303) / 1.014606 = 0.310749;
    # half-width = z * sqrt(p(1-p)/263 + z^2/(4 * 263^2)) / denominator
    #            = 1.959964 * sqrt(0.00081038 + 0.00001388) / 1.014606 = 0.055461;
    # so the interval is 0.255288 .. 0.366210.
    rate = wilson(81, 263)
    assert rate.value == pytest.approx(81 / 263)
    assert rate.ci_low == pytest.approx(0.2553, abs=1e-4)
    assert rate.ci_high == pytest.approx(0.3662, abs=1e-4)


def test_wilson_narrows_with_lower_confidence() -> None:
    wide, narrow = wilson(5, 10, confidence=0.99), wilson(5, 10, confidence=0.80)
    assert wide.ci_low < narrow.ci_low < 0.5 < narrow.ci_high < wide.ci_high


@pytest.mark.parametrize(
    ("successes", "n", "confidence"), [(11, 10, 0.95), (-1, 10, 0.95), (1, 10, 1.0)]
)
def test_wilson_rejects_bad_arguments(successes: int, n: int, confidence: float) -> None:
    with pytest.raises(ValueError):
        wilson(successes, n, confidence)


def test_bootstrap_is_deterministic_by_seed() -> None:
    values = [0.2, 0.5, 0.9, 0.4, 0.0, 1.0, 0.3]
    assert bootstrap_mean(values, seed=7) == bootstrap_mean(values, seed=7)


def test_bootstrap_interval_surrounds_the_mean() -> None:
    rate = bootstrap_mean([0.2, 0.5, 0.9, 0.4, 0.0, 1.0, 0.3])
    assert rate.value == pytest.approx(3.3 / 7)
    assert 0.0 <= rate.ci_low < rate.value < rate.ci_high <= 1.0
    assert rate.n == 7


def test_bootstrap_of_nothing_is_zero() -> None:
    assert bootstrap_mean([]) == Rate(value=0.0, ci_low=0.0, ci_high=0.0, n=0)


def test_bootstrap_of_one_value_collapses_to_it() -> None:
    assert bootstrap_mean([0.7]) == Rate(value=0.7, ci_low=0.7, ci_high=0.7, n=1)


def test_bootstrap_of_constant_values_collapses() -> None:
    assert bootstrap_mean([1.0, 1.0, 1.0]) == Rate(value=1.0, ci_low=1.0, ci_high=1.0, n=3)


@pytest.mark.parametrize(("confidence", "resamples"), [(0.0, 2000), (0.95, 0)])
def test_bootstrap_rejects_bad_arguments(confidence: float, resamples: int) -> None:
    with pytest.raises(ValueError):
        bootstrap_mean([0.5], confidence=confidence, resamples=resamples)


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (5, 2, 1, 0.4),  # 1 - C(3,1)/C(5,1) = 1 - 3/5
        (5, 2, 2, 0.7),  # 1 - C(3,2)/C(5,2) = 1 - 3/10
        (3, 3, 2, 1.0),  # n - c = 0 < k: every draw of 2 holds a success
        (4, 0, 2, 0.0),  # no successes to draw
    ],
)
def test_pass_at_k(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (5, 2, 2, 0.1),  # C(2,2)/C(5,2) = 1/10
        (4, 4, 3, 1.0),  # C(4,3)/C(4,3)
        (5, 1, 2, 0.0),  # C(1,2) = 0: two successes cannot be drawn from one
    ],
)
def test_pass_hat_k(n: int, c: int, k: int, expected: float) -> None:
    assert pass_hat_k(n, c, k) == pytest.approx(expected)


def test_pass_at_1_and_pass_hat_1_are_the_plain_rate() -> None:
    for n in range(1, 6):
        for c in range(n + 1):
            assert pass_at_k(n, c, 1) == pytest.approx(c / n)
            assert pass_hat_k(n, c, 1) == pytest.approx(c / n)


@pytest.mark.parametrize("estimator", [pass_at_k, pass_hat_k])
@pytest.mark.parametrize(
    ("n", "c", "k"), [(3, 1, 4), (3, 4, 1), (-1, 0, 0), (3, -1, 1), (3, 1, -1)]
)
def test_trial_estimators_reject_bad_counts(
    estimator: Callable[[int, int, int], float], n: int, c: int, k: int
) -> None:
    with pytest.raises(ValueError):
        estimator(n, c, k)


def test_mcnemar_exact_two_sided() -> None:
    # X ~ Binomial(10, 1/2): P(X <= 2) = (1 + 10 + 45) / 1024 = 56/1024; p = 2 * 56/1024.
    assert mcnemar_exact(8, 2) == pytest.approx(0.109375)
    assert mcnemar_exact(2, 8) == pytest.approx(0.109375)


def test_mcnemar_without_discordant_pairs_is_one() -> None:
    assert mcnemar_exact(0, 0) == 1.0


def test_mcnemar_balanced_discordance_caps_at_one() -> None:
    # 2 * P(X <= 3 | n = 6) = 2 * 42/64 > 1.
    assert mcnemar_exact(3, 3) == 1.0


def test_paired_comparison_counts_over_shared_keys() -> None:
    a = {"i1": True, "i2": True, "i3": False, "i4": False, "i5": True, "only_a": True}
    b = {"i1": True, "i2": False, "i3": True, "i4": False, "i5": False, "only_b": False}
    result = paired_comparison(a, b)
    assert (result.n, result.a_only, result.b_only, result.both, result.neither) == (5, 2, 1, 1, 1)
    assert result.difference.value == pytest.approx(0.2)  # (2 - 1) / 5
    assert result.difference.n == 5
    # 3 discordant pairs, min = 1: 2 * P(X <= 1 | n = 3) = 2 * 4/8 = 1.
    assert result.mcnemar_p == 1.0
    assert result.intervals_overlap  # 3/5 against 2/5 on five instances


def test_paired_comparison_is_deterministic_by_seed() -> None:
    a = {f"i{i}": i % 2 == 0 for i in range(20)}
    b = {f"i{i}": i % 3 == 0 for i in range(20)}
    assert paired_comparison(a, b, seed=3) == paired_comparison(a, b, seed=3)


def test_paired_comparison_needs_shared_keys() -> None:
    with pytest.raises(ValueError):
        paired_comparison({"x": True}, {"y": True})


def test_intervals_separate_when_one_agent_solves_everything() -> None:
    # Wilson 100/100 starts near 0.963; 0/100 ends near 0.037.
    a = {f"i{i}": True for i in range(100)}
    b = {f"i{i}": False for i in range(100)}
    result = paired_comparison(a, b)
    assert not result.intervals_overlap
    assert result.difference == Rate(value=1.0, ci_low=1.0, ci_high=1.0, n=100)


def test_paired_test_sees_what_overlapping_intervals_miss() -> None:
    # A solves 60 of 100, B 45, and B's every solve is also A's. The Wilson intervals
    # (0.502..0.691 and 0.356..0.548) overlap, yet all 15 discordant pairs favour A:
    # p = 2 * P(X = 0 | n = 15) = 2 / 2^15.
    a = {f"i{i}": i < 60 for i in range(100)}
    b = {f"i{i}": i < 45 for i in range(100)}
    result = paired_comparison(a, b)
    assert result.intervals_overlap
    assert (result.a_only, result.b_only, result.both, result.neither) == (15, 0, 45, 40)
    assert result.mcnemar_p == pytest.approx(2 / 2**15)
    assert result.difference.value == pytest.approx(0.15)
    assert result.difference.ci_low > 0.0
