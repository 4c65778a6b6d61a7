"""The parser an adversary trains on the public half: scorers over device features, each
naming the most likely fault per instance, and the one that cross-validates best."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .brief_reader import Pair, Public


class NaiveBayes:
    """P(faulty | features) per fault type, with add-one smoothing."""

    def __init__(self) -> None:
        self.everyone: Counter[str] = Counter()  # features over every device seen
        self.devices = 0
        self.faulty: dict[str, Counter[str]] = defaultdict(Counter)  # per type
        self.faults: Counter[str] = Counter()
        self.weights: dict[tuple[str, str], float] = {}  # (type, token) -> its log odds

    def learn(self, p: Public, truth: frozenset[Pair]) -> None:
        self.weights.clear()
        devices = p.routers + p.hosts
        self.everyone.update(token for device in devices for token in p.features(device))
        self.devices += len(devices)
        for type_, device in truth:
            self.faulty[type_].update(p.features(device))
            self.faults[type_] += 1

    def weight(self, type_: str, token: str) -> float:
        """How much ``token`` speaks for a fault of ``type_`` (worked out once per fit)."""
        if (type_, token) not in self.weights:
            positive = self.faults[type_]
            negative = self.devices - positive
            hits = self.faulty[type_][token]
            odds = (hits + 1) / (positive + 2)
            against = (self.everyone[token] - hits + 1) / (negative + 2)
            self.weights[type_, token] = math.log(odds / against)
        return self.weights[type_, token]

    def scores(self, p: Public, types: list[str]) -> Iterator[tuple[float, str, str]]:
        for type_ in types:
            positive = self.faults[type_]
            if not positive:
                continue
            prior = math.log(positive / self.devices)
            for device in p.routers + p.hosts:
                result = prior
                for token in p.features(device):
                    result += self.weight(type_, token)
                yield result, type_, device


SIGNATURE_SKIP = ("on-path:", "on-every-path:", "distance:", "paths-crossed:")
COARSE = ("place:", "role:", "gateway-of:", "named:", "server", "admin", "guarded:")
Describe = Callable[[Public, str], list[tuple[str, ...]]]


def fine(p: Public, device: str) -> list[tuple[str, ...]]:
    """The device's whole description, as one signature."""
    return [tuple(sorted({t for t in p.features(device) if not t.startswith(SIGNATURE_SKIP)}))]


def coarse(p: Public, device: str) -> list[tuple[str, ...]]:
    return [tuple(sorted({t for t in p.features(device) if t.startswith(COARSE)}))]


def single(p: Public, device: str) -> list[tuple[str, ...]]:
    """Each place or role of the device on its own (the best one scores it)."""
    return [(t,) for t in p.features(device) if t.startswith(COARSE)]


def topological(p: Public, device: str) -> list[tuple[str, ...]]:
    return [(t,) for t in p.features(device) if t.startswith("place:")]


class Signatures:
    """P(a fault of a type at a device), per device signature and per set of report kinds:
    faults seen at a signature over the devices that had it, backing off to coarser keys; a
    device with several signatures scores its best. With ``blind`` it reads no report (the
    baseline's knowledge)."""

    def __init__(self, describe: Describe, blind: bool) -> None:
        self.describe, self.blind = describe, blind
        self.faults: dict[tuple[str, ...], Counter[tuple[str, tuple[str, ...]]]] = defaultdict(
            Counter
        )
        self.devices: dict[tuple[str, ...], Counter[tuple[str, ...]]] = defaultdict(Counter)

    def described(self, p: Public, device: str) -> list[tuple[str, ...]]:
        """The device's signatures (worked out once per instance)."""
        key = (self.describe, device)
        if key not in p.signatures:
            p.signatures[key] = self.describe(p, device)
        return p.signatures[key]

    def keys(self, p: Public) -> list[tuple[str, ...]]:
        if self.blind:
            return [(p.shape(),), ()]
        kinds = "+".join(sorted({s.kind for s in p.seen}))
        return [(kinds, str(len(p.hosts)), p.shape()), (kinds, str(len(p.hosts))), (kinds,), ()]

    def learn(self, p: Public, truth: frozenset[Pair]) -> None:
        described = {d: self.described(p, d) for d in p.routers + p.hosts}
        every = [sig for signatures in described.values() for sig in signatures]
        for key in self.keys(p):
            self.devices[key].update(every)
            for type_, device in truth:
                self.faults[key].update((type_, sig) for sig in described[device])

    def scores(self, p: Public, types: list[str]) -> Iterator[tuple[float, str, str]]:
        keys = self.keys(p)
        for device in p.routers + p.hosts:
            rates: dict[str, float] = defaultdict(float)
            for sig in self.described(p, device):
                key = next((k for k in keys if self.devices[k][sig] >= 3), ())
                seen = self.devices[key][sig] + 1
                for type_ in types:
                    rate = (self.faults[key][type_, sig] + 0.01) / seen
                    rates[type_] = max(rates[type_], rate)
            for type_, rate in rates.items():
                yield rate, type_, device


Scorer = NaiveBayes | Signatures


SCORERS: dict[str, Callable[[], Scorer]] = {
    "bayes": NaiveBayes,
    "fine": lambda: Signatures(fine, blind=False),
    "coarse": lambda: Signatures(coarse, blind=False),
    "single": lambda: Signatures(single, blind=False),
    "topology": lambda: Signatures(topological, blind=True),
}
FOLDS = 5


@dataclass
class Parser:
    """One fault guessed per instance: naming two or more faults right is so much rarer than
    one that a single guess names more instances."""

    scorer: Scorer
    types: list[str]

    def predict(self, p: Public) -> frozenset[Pair]:
        _, type_, device = max(self.scorer.scores(p, self.types))
        return frozenset({(type_, device)})


def fitted(kind: str, seen: list[tuple[Public, frozenset[Pair]]]) -> Parser:
    scorer = SCORERS[kind]()
    for p, truth in seen:
        scorer.learn(p, truth)
    return Parser(scorer, sorted({t for _, truth in seen for t, _ in truth}))


def trained(seen: list[tuple[Public, frozenset[Pair]]]) -> Parser:
    """The scorer that names the most instances in a cross-validation on ``seen``."""

    def named(kind: str) -> int:
        hits = 0
        for fold in range(FOLDS):
            parser = fitted(kind, [x for i, x in enumerate(seen) if i % FOLDS != fold])
            held = [x for i, x in enumerate(seen) if i % FOLDS == fold]
            hits += sum(parser.predict(p) == truth for p, truth in held)
        return hits

    return fitted(max(SCORERS, key=named), seen)
