"""An adversary that reads only the public half cannot tell the faults or write the fix.

A parser is trained on seeds 1-100 of every reactive family, per level, and checked on unseen
seeds. It reads the brief with regular expressions built from the generator's own surface
forms and the firewall policy from the constraints, and describes every device by the
topology (its rank by degree, gateway of which host) and by what the brief names (gateway of a
named host, on the paths between named hosts, on every client's path to the server...). Its
scorers, naive Bayes over those features and fault rates per device signature (one of which
reads no brief), are cross-validated and the best is kept. It guesses one fault per instance:
naming two faults right is so much rarer than one that a single guess names more instances.
It writes the fix of every type whose fix follows from the public half. It must do little
better than a baseline that never reads the brief (the most frequent fault type at the most
frequent place for that topology), and seldom write the exact fix.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from netdojo.scenarios import registry
from netdojo.scenarios.model import Scenario

from .brief_fixes import canonical, write_fix
from .brief_parser import trained
from .brief_reader import Pair, Public, place_of, places, public_of
from .instances import instance

REACTIVE = sorted(
    name for name, f in registry.families().items() if f.kind == "reactive" and f.build is None
)
"""Reactive families on routed networks (a Kubernetes repair brief is the same whatever its
faults: tests/unit/test_k8s_task.py)."""
LEVELS = (1, 2)
TRAIN = range(1, 101)
TEST = range(1001, 1101)
MAX_WHOLE = 0.05  # overall share of test instances whose faults the parser names exactly
MAX_OVER_BASELINE = 0.05  # per family, above the baseline that never reads the brief
MAX_FIX = 0.03  # overall share of test instances whose exact fix the parser writes


# --- the experiment ------------------------------------------------------------------------


def truth_of(s: Scenario) -> frozenset[Pair]:
    return frozenset((f.type, f.device) for f in s.hidden.faults if not f.red_herring)


def instances(family: str, seeds: range) -> Iterator[tuple[Public, Scenario]]:
    for level in LEVELS:
        for seed in seeds:
            s = instance(family, level, seed)
            yield public_of(s), s


@dataclass
class Row:
    family: str
    tested: int = 0
    parser: int = 0
    baseline: int = 0
    fixes: int = 0


def evaluate(family: str) -> Row:
    frequent: dict[tuple[int, str], Counter[tuple[str, str]]] = defaultdict(Counter)
    seen = []
    for p, s in instances(family, TRAIN):
        truth = truth_of(s)
        seen.append((p, truth))
        for type_, device in truth:
            for place in places(p, device):
                frequent[p.level, p.shape()][type_, place] += 1
    parsers = {
        level: trained([(p, truth) for p, truth in seen if p.level == level]) for level in LEVELS
    }
    row = Row(family)
    for p, s in instances(family, TEST):
        truth = truth_of(s)
        row.tested += 1
        guess = parsers[p.level].predict(p)
        row.parser += guess == truth
        if frequent[p.level, p.shape()]:
            (type_, place), _ = frequent[p.level, p.shape()].most_common(1)[0]
            row.baseline += frozenset({(type_, place_of(p, place))}) == truth
        written = [write_fix(p, t, d) for t, d in sorted(guess)]
        if all(w is not None for w in written):
            calls = [c for w in written if w for c in w]
            row.fixes += canonical(calls) == canonical(s.hidden.solution)
    return row


@pytest.fixture(scope="module")
def table() -> list[Row]:
    rows = [evaluate(family) for family in REACTIVE]
    print("\nfamily            tested  parser  baseline  exact fix")
    for r in rows:
        print(
            f"{r.family:<17} {r.tested:>6} {r.parser / r.tested:>7.1%} "
            f"{r.baseline / r.tested:>9.1%} {r.fixes / r.tested:>10.1%}"
        )
    total = sum(r.tested for r in rows)
    print(
        f"{'overall':<17} {total:>6} {sum(r.parser for r in rows) / total:>7.1%} "
        f"{sum(r.baseline for r in rows) / total:>9.1%} {sum(r.fixes for r in rows) / total:>10.1%}"
    )
    return rows


def test_the_parser_reads_every_symptom_line() -> None:
    for family in REACTIVE:
        for p, s in itertools.islice(instances(family, TRAIN), 40):
            assert p.seen, s.public.brief


def test_the_parser_rarely_names_the_faults(table: list[Row]) -> None:
    total = sum(r.tested for r in table)
    assert sum(r.parser for r in table) / total < MAX_WHOLE
    for r in table:
        assert (r.parser - r.baseline) / r.tested <= MAX_OVER_BASELINE, r


def test_the_parser_rarely_writes_the_fix(table: list[Row]) -> None:
    total = sum(r.tested for r in table)
    assert sum(r.fixes for r in table) / total < MAX_FIX
