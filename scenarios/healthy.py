"""Healthy controls: reactive instances in which nothing is wrong.

About one instance in ten of every reactive family and level is a control: exactly one seed in
each run of ten (0-9, 10-19, ...) for each family and level, at a position drawn from the
family, the level and the run, so that which seeds are controls differs between families and
levels and cannot be read off a seed. A control is the instance's own network without any
fault. Its brief reports symptoms in the very forms a faulted instance's brief uses (a symptom
that is not real, or already gone), so its wording cannot give it away. Its hidden half has no
fault, no target and no reference change: its guards are the whole healthy network, and the
right answer is to change nothing and say so.
"""

from __future__ import annotations

import hashlib
import itertools
import random

from netdojo.scenarios.briefs import reactive_brief, routing_rule
from netdojo.scenarios.firewall import (
    Policy,
    choose_policy,
    install_policy,
    policy_matrix,
    policy_text,
)
from netdojo.scenarios.forwarding import Impact
from netdojo.scenarios.hidden_tests import HiddenTest
from netdojo.scenarios.model import HiddenHalf
from netdojo.scenarios.network import Network, render_lab
from netdojo.scenarios.reactive import link_guards, ping_test
from netdojo.scenarios.registry import Family
from netdojo.scenarios.symptoms import Observation

RUN = 10
"""One seed in each run of this many is a healthy control."""
REPORTED = {1: 1, 2: 3, 3: 1}
"""How many false reports a control's brief carries -> weight."""


def is_healthy_control(family: str, level: int, seed: int) -> bool:
    """Whether instance (``family``, ``level``, ``seed``) is a healthy control: the one place
    the choice is made."""
    run = seed // RUN
    drawn = hashlib.sha256(f"healthy/{family}/{level}/{run}".encode()).digest()
    return seed % RUN == int.from_bytes(drawn[:8], "big") % RUN


def healthy_task(
    spec: Family, network: Network, lab_name: str, rng: random.Random
) -> tuple[HiddenHalf, str, list[str]]:
    """The hidden half, the brief and the constraints of a control on ``network``."""
    routing = spec.network_routing
    policy = choose_policy(network, rng) if spec.firewall else None
    hosts = sorted(network.lans)
    guards: list[HiddenTest] = [
        ping_test(network, a, b, "guard") for a, b in itertools.combinations(hosts, 2)
    ]
    guards += link_guards(network, Impact(), routing)
    lab = render_lab(network, routing, lab_name)
    if spec.furnish is not None:
        spec.furnish(lab, network)
    constraints: list[str] = []
    if policy is not None:
        install_policy(lab, network, policy)
        guards += policy_matrix(network, policy)
        constraints.append(policy_text(network, policy, rng))
    constraints.append(routing_rule(spec.repair or routing, rng))
    hidden = HiddenHalf(lab=lab, faults=[], solution=[], targets=[], guards=guards, healthy=True)
    reported = false_reports(network, routing, policy, rng)
    addresses = {h: network.host_address(h) for h in network.lans}
    brief = reactive_brief(reported, routing, addresses, constraints, rng)
    return hidden, brief, constraints


def false_reports(
    network: Network, routing: str, policy: Policy | None, rng: random.Random
) -> list[Observation]:
    """Symptoms as a faulted instance's brief reports them, none of them real here."""
    hosts = sorted(network.lans)
    count = rng.choices(list(REPORTED), list(REPORTED.values()))[0]
    kinds = ["broken", "broken", "isolated"]
    if routing != "static":  # as `symptoms` reports a routing protocol gone quiet
        kinds.append("quiet")
    if policy is not None:
        kinds += ["blocked", "open"]
    chosen: set[Observation] = set()
    for _ in range(count):
        kind = rng.choice(kinds)
        if kind == "broken":
            chosen.add(Observation("broken", tuple(sorted(rng.sample(hosts, 2)))))
        elif kind == "isolated":
            chosen.add(Observation("isolated", (rng.choice(hosts),)))
        elif kind == "quiet":
            chosen.add(Observation("quiet", lost=rng.random() < 0.5))
        elif policy is not None:
            client = rng.choice(policy.clients(network))
            port = policy.web if kind == "blocked" else policy.admin_port
            if kind == "open" and client == policy.admin:
                continue
            chosen.add(Observation(kind, (client, policy.server), port=port))
    isolated = {seen.hosts[0] for seen in chosen if seen.kind == "isolated"}
    return sorted(
        seen for seen in chosen if seen.kind != "broken" or not isolated & set(seen.hosts)
    ) or [Observation("isolated", (rng.choice(hosts),))]


def healthy_half(hidden: HiddenHalf) -> HiddenHalf:
    """A family-built instance's hidden half made a control: its faults dropped, and what its
    targets check (which holds on the healthy network) guarded along with its guards."""
    promoted = [
        test.model_copy(update={"id": "guard:" + test.id.split(":", 1)[-1]})
        for test in hidden.targets
    ]
    return hidden.model_copy(
        update={
            "faults": [],
            "solution": [],
            "targets": [],
            "guards": [*promoted, *hidden.guards],
            "adherence": [],
            "healthy": True,
        }
    )
