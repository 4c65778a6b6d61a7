"""Statistics for arena results: rates with intervals, multi-trial estimators, paired tests.

A solve rate over a few hundred instances is uncertain by several points, so every rate is
reported as a `Rate` carrying its confidence interval rather than as a bare number. Running
several trials per instance separates capability from reliability: pass@k is the chance that at
least one of k trials succeeds, pass^k the chance that all k do. Two agents run on the same
instances are compared per instance (paired bootstrap, exact McNemar test), which is more
sensitive than checking whether their separate intervals overlap.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field

from netdojo.reports.records import Rate


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence}")


def _z(confidence: float) -> float:
    """The two-sided normal quantile for `confidence`, e.g. 1.96 for 0.95."""
    _check_confidence(confidence)
    return statistics.NormalDist().inv_cdf(1.0 - (1.0 - confidence) / 2.0)


def wilson(successes: int, n: int, confidence: float = 0.95) -> Rate:
    """The Wilson score interval, which stays inside [0, 1] and behaves at 0 and n successes."""
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    z = _z(confidence)
    if n == 0:
        return Rate(value=0.0, ci_low=0.0, ci_high=1.0, n=0)
    p = successes / n
    z2 = z * z
    denominator = 1.0 + z2 / n
    center = (p + z2 / (2 * n)) / denominator
    half_width = z * math.sqrt(p * (1.0 - p) / n + z2 / (4 * n * n)) / denominator
    # At 0 or n successes a bound is exactly 0 or 1; set it so rounding error cannot leak in.
    return Rate(
        value=p,
        ci_low=0.0 if successes == 0 else center - half_width,
        ci_high=1.0 if successes == n else center + half_width,
        n=n,
    )


def _percentile(ordered: Sequence[float], fraction: float) -> float:
    """Linear interpolation between the closest ranks of an ascending sequence."""
    position = fraction * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def bootstrap_mean(
    values: Sequence[float], confidence: float = 0.95, resamples: int = 2000, seed: int = 0
) -> Rate:
    """The mean with a percentile-bootstrap interval, reproducible for a given seed."""
    _check_confidence(confidence)
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    sample = list(values)
    if not sample:
        return Rate(value=0.0, ci_low=0.0, ci_high=0.0, n=0)
    tail = (1.0 - confidence) / 2.0
    rng = random.Random(seed)
    means = sorted(statistics.fmean(rng.choices(sample, k=len(sample))) for _ in range(resamples))
    return Rate(
        value=statistics.fmean(sample),
        ci_low=_percentile(means, tail),
        ci_high=_percentile(means, 1.0 - tail),
        n=len(sample),
    )


def _check_trials(n: int, c: int, k: int) -> None:
    if min(n, c, k) < 0:
        raise ValueError(f"n, c and k must be non-negative, got n={n}, c={c}, k={k}")
    if c > n:
        raise ValueError(f"successes c={c} exceed trials n={n}")
    if k > n:
        raise ValueError(f"k={k} exceeds trials n={n}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from n trials with c successes: 1 - C(n-c, k) / C(n, k).

    The estimator of Chen et al. (2021), "Evaluating Large Language Models Trained on Code".
    """
    _check_trials(n, c, k)
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k from n trials with c successes: C(c, k) / C(n, k).

    The chance that k trials drawn without replacement all succeed, a measure of reliability.
    """
    _check_trials(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Exact two-sided McNemar p-value: a binomial test of the discordant pairs against 1/2."""
    if a_only < 0 or b_only < 0:
        raise ValueError(f"counts must be non-negative, got a_only={a_only}, b_only={b_only}")
    discordant = a_only + b_only
    if discordant == 0:
        return 1.0
    lower_tail = sum(math.comb(discordant, i) for i in range(min(a_only, b_only) + 1))
    return min(1.0, 2 * lower_tail / 2**discordant)


class PairedComparison(BaseModel):
    """Agents A and B on the instances both ran.

    `intervals_overlap` is the figure other benchmarks report, but overlapping intervals are a
    weak test: two rates can differ significantly while their intervals overlap. The paired
    figures, `difference` and `mcnemar_p`, use the per-instance pairing and are the ones to trust.
    """

    n: int = Field(description="the number of paired instances")
    a_only: int = Field(description="instances A solved and B did not")
    b_only: int = Field(description="instances B solved and A did not")
    both: int = Field(description="instances both solved")
    neither: int = Field(description="instances neither solved")
    difference: Rate = Field(
        description="mean per-instance A-minus-B solve (each -1, 0 or 1), paired bootstrap"
    )
    mcnemar_p: float = Field(description="exact two-sided McNemar p-value on discordant pairs")
    intervals_overlap: bool = Field(
        description="whether the Wilson 95% intervals of the two solve rates overlap"
    )


def paired_comparison(
    a: Mapping[str, bool], b: Mapping[str, bool], resamples: int = 2000, seed: int = 0
) -> PairedComparison:
    """Compare two agents' solved flags, paired by instance key over the keys both have."""
    shared = sorted(a.keys() & b.keys())
    if not shared:
        raise ValueError("the two agents share no instances")
    pairs = [(a[key], b[key]) for key in shared]
    a_only = sum(solved_a and not solved_b for solved_a, solved_b in pairs)
    b_only = sum(solved_b and not solved_a for solved_a, solved_b in pairs)
    both = sum(solved_a and solved_b for solved_a, solved_b in pairs)
    a_rate = wilson(a_only + both, len(pairs))
    b_rate = wilson(b_only + both, len(pairs))
    return PairedComparison(
        n=len(pairs),
        a_only=a_only,
        b_only=b_only,
        both=both,
        neither=len(pairs) - a_only - b_only - both,
        difference=bootstrap_mean(
            [int(solved_a) - int(solved_b) for solved_a, solved_b in pairs],
            resamples=resamples,
            seed=seed,
        ),
        mcnemar_p=mcnemar_exact(a_only, b_only),
        intervals_overlap=a_rate.ci_low <= b_rate.ci_high and b_rate.ci_low <= a_rate.ci_high,
    )
