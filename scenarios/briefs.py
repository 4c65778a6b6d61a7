"""Briefs in many surface forms: the facts stay exact, the wording, order and format vary.

A reactive brief reports symptoms (which hosts cannot reach which, adjacencies that are
missing) and the goal; it never names a fault type or where it is.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

OPENERS = (
    "Users are complaining.",
    "We have an incident on the lab network.",
    "A change went in last night and things are not right since.",
    "The NOC escalated this ticket to you.",
    "Monitoring raised an alarm a few minutes ago.",
    "Something is off in this routed network.",
    "Please take a look at this network, it misbehaves.",
    "Heads up: the on-call engineer could not finish this one.",
)
PAIR_FORMS = (
    "{a} ({aa}) cannot reach {b} ({ba})",
    "traffic between {a} and {b} fails",
    "{a} gets no reply when it pings {b} at {ba}",
    "there is no connectivity from {a} to {b}",
    "{b} ({ba}) is unreachable from {a}",
    "{a} <-> {b}: broken",
)
ISOLATION_FORMS = (
    "{a} ({aa}) cannot reach anything beyond its own subnet",
    "{a} seems cut off from the rest of the network",
    "nothing answers {a} ({aa}) from the other sites",
)
ADJACENCY_FORMS = (
    "the routers report {n} fewer OSPF adjacencies than the design calls for",
    "{n} router-to-router OSPF adjacenc{ies} expected by the design {is_are} not up",
    "the OSPF neighbour count is {n} short of what it should be",
)
GOALS = (
    "Restore full connectivity between all hosts.",
    "Make every host reachable from every other host again.",
    "Bring the network back to its intended, fully working state.",
    "Find the cause and repair it so that all hosts can talk to each other.",
    "Fix it: the network must be healthy again with all hosts reachable.",
)
CAREFUL = (
    "Do not break anything that works today.",
    "Keep the changes minimal; what works must keep working.",
    "Avoid collateral damage: leave working parts alone.",
)
CLOSERS = ("Call submit when you are done.", "Submit when finished.", "Submit once it is fixed.")


@dataclass(frozen=True)
class Symptoms:
    broken_pairs: list[tuple[str, str]]  # unordered pairs, sorted
    isolated: list[str]  # hosts that reach no other host
    missing_adjacencies: int
    addresses: dict[str, str]  # host -> address
    reports: list[str] = field(default_factory=list)  # symptoms already in words


def _pair_lines(symptoms: Symptoms, rng: random.Random) -> list[str]:
    lines = []
    isolated = set(symptoms.isolated)
    for host in symptoms.isolated:
        form = rng.choice(ISOLATION_FORMS)
        lines.append(form.format(a=host, aa=symptoms.addresses[host]))
    for a, b in symptoms.broken_pairs:
        if a in isolated or b in isolated:
            continue
        if rng.random() < 0.5:
            a, b = b, a
        form = rng.choice(PAIR_FORMS)
        lines.append(form.format(a=a, b=b, aa=symptoms.addresses[a], ba=symptoms.addresses[b]))
    lines.extend(symptoms.reports)
    if symptoms.missing_adjacencies:
        n = symptoms.missing_adjacencies
        form = rng.choice(ADJACENCY_FORMS)
        plural = n != 1
        lines.append(
            form.format(n=n, ies="ies" if plural else "y", is_are="are" if plural else "is")
        )
    rng.shuffle(lines)
    return lines


def reactive_brief(symptoms: Symptoms, constraints: list[str], rng: random.Random) -> str:
    lines = _pair_lines(symptoms, rng)
    style = rng.choice(("prose", "bullets", "ticket", "chat"))
    opener, goal = rng.choice(OPENERS), rng.choice(GOALS)
    rules = [rng.choice(CAREFUL), *constraints]
    closer = rng.choice(CLOSERS)
    if style == "prose":
        body = "; ".join(lines)
        return f"{opener} Reported: {body}. {goal} {' '.join(rules)} {closer}"
    if style == "bullets":
        bullet = rng.choice(("-", "*", "•"))
        listed = "\n".join(f"{bullet} {line}" for line in lines)
        return f"{opener}\n\nWhat we see:\n{listed}\n\n{goal}\n" + "\n".join(rules) + f"\n{closer}"
    if style == "ticket":
        numbered = "\n".join(f"  {i}. {line}" for i, line in enumerate(lines, 1))
        ticket = rng.randint(1000, 99999)
        rules_text = "\n".join(f"  - {rule}" for rule in rules)
        return (
            f"TICKET #{ticket}\nSummary: {opener}\nObserved:\n{numbered}\n"
            f"Expected outcome: {goal}\nConstraints:\n{rules_text}\n{closer}"
        )
    return f"hey, {opener.lower()} {', and '.join(lines)}. {goal.lower()} {' '.join(rules)}"
