"""The brief of a capacity task, phrased from the seed.

Each step is written from one of several templates of its kind, with entities mentioned in
varied forms (a word for the kind, the schema's kind name, or the bare name), a parameter that
comes from an earlier step written as a reference to it (never as the name it resolves to),
speeds and thresholds in varied units, small numbers in words or digits. The brief also holds
the schema, where the model lives, how to write it back and the exact shape of the answer.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import NamedTuple

from netdojo.scenarios.capacity import phrases as P
from netdojo.scenarios.capacity.chain import Step
from netdojo.scenarios.capacity.naming import Naming
from netdojo.scenarios.capacity.params import (
    AddQuery,
    CountQuery,
    ListQuery,
    MoveQuery,
    RankQuery,
    RemoveQuery,
    SetSpeedQuery,
    WhatIfQuery,
)
from netdojo.scenarios.capacity.schema import PlanModel, Role, Schema

GBPS = 10**9
NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                "ten", "eleven", "twelve")  # fmt: skip


class Phrase(NamedTuple):
    text: str
    template: str
    """Which template wrote it: ``"<table>/<index>"``."""


def _scaled(value: int, by: int) -> str:
    """``value / by`` written exactly, with thousands separators."""
    whole, rest = divmod(value, by)
    if not rest:
        return f"{whole:,}"
    return f"{whole:,}.{str(rest).zfill(len(str(by)) - 1).rstrip('0')}"


def speed_text(bps: int, rng: random.Random) -> str:
    """A capacity (a whole number of Gbps) in one of several exact forms."""
    gbps = bps // GBPS
    assert gbps * GBPS == bps
    forms = [
        f"{gbps:,} Gbps",
        f"{gbps:,} Gb/s",
        f"{gbps:,} gigabits per second",
        f"{gbps * 1000:,} Mbps",
    ]
    if gbps < 1000:
        forms.append(f"{gbps}G")
    if gbps % 100 == 0:
        forms.append(f"{_scaled(gbps, 1000)} Tbps")
    return rng.choice(forms)


def number_text(n: int, rng: random.Random) -> str:
    if n < len(NUMBER_WORDS) and rng.random() < 0.5:
        return NUMBER_WORDS[n]
    return str(n)


@dataclass
class Wording:
    """What phrasing one task needs: its schema and naming, every name's role, its steps."""

    schema: Schema
    naming: Naming
    roles: dict[str, Role]
    root: str
    steps: list[Step]
    rng: random.Random

    def noun(self, role: Role, plural: bool = False) -> str:
        if self.rng.random() < 0.2:
            kind = self.schema.kind(role)
            return f'"{kind}" entities' if plural else f'"{kind}" entity'
        rack = self.schema.rack
        pool = P.CHASSIS if role == "rack" and rack and "chassis" in rack.lower() else P.NOUNS[role]
        return self.rng.choice(pool)[plural]

    def mention(self, name: str) -> str:
        form = self.rng.choice(P.MENTIONS)
        return form.format(noun=self.noun(self.roles[name]), name=name)

    def slot(self, step: Step, field: str, name: str) -> str:
        """``name`` as the step's parameter ``field``: a mention, or a reference to the step
        it comes from."""
        ref = step.refs.get(field)
        if ref is None:
            return self.mention(name)
        if ref.pick == "scope":
            pool = P.SCOPES.get(self.steps[ref.step].kind, ()) + P.REFS["scope"]
        else:
            pool = P.REFS[ref.pick]
        return self.rng.choice(pool).format(noun=self.noun(self.roles[name]), n=ref.step + 1)

    def pick(self, table: str) -> tuple[str, str]:
        pool: tuple[str, ...] = getattr(P, table)
        index = self.rng.randrange(len(pool))
        return pool[index], f"{table}/{index}"


def _ports(w: Wording, step: Step, query: AddQuery) -> str:
    names, ref, rng = query.ports, step.refs.get("ports"), w.rng
    if ref is not None:
        holder = query.linecard or query.name
        second = w.naming.name("port", holder, w.naming.start + 1)
        counted = rng.choice(P.COUNT_REFS).format(n=ref.step + 1)
        return f"{counted}, named {names[0]}, {second} and so on in sequence"
    listed = ", ".join(names) if len(names) <= 4 else f"{names[0]}, {names[1]}, …, {names[-1]}"
    count = number_text(len(names), rng)
    word = w.noun("port", plural=len(names) != 1)
    return f"{count} {word} named {listed}" if rng.random() < 0.5 else f"{count} {word} ({listed})"


def _add(w: Wording, step: Step, query: AddQuery) -> Phrase:
    rng, speed = w.rng, speed_text(query.capacity_bps, w.rng)
    parent = w.slot(step, "parent", query.parent)
    if query.what == "port":
        template, used = w.pick("ADD_PORT")
        text = template.format(port=w.noun("port"), name=query.name, parent=parent, speed=speed)
        return Phrase(text, used)
    assert query.controller is not None
    if query.new_controller:
        controller = rng.choice(P.NEW_CONTROLLERS)
        controller = controller.format(cd=query.controller, root=w.mention(w.root))
    else:
        controller = rng.choice(P.CONTROLLERS).format(cd=query.controller)
    card = ""
    if query.linecard is not None:
        card = rng.choice(P.CARDS).format(noun=w.noun("linecard"), card=query.linecard)
    template, used = w.pick("ADD_SWITCH")
    text = template.format(
        switch=w.noun("switch"),
        name=query.name,
        parent=parent,
        ports=_ports(w, step, query),
        speed=speed,
        card=card,
        controller=controller,
    )
    return Phrase(text, used)


def phrase_step(w: Wording, at: int) -> Phrase:
    """Step ``at`` of ``w.steps`` in words (without its number or a linking phrase)."""
    step = w.steps[at]
    query = step.params
    if isinstance(query, AddQuery):
        return _add(w, step, query)
    if isinstance(query, ListQuery | RankQuery | CountQuery):
        role = query.of_role if isinstance(query, CountQuery) else query.child_role
        table = {"list": "LIST", "rank": "RANK", "count": "COUNT"}[query.kind]
        template, used = w.pick(table)
        where = w.slot(step, "scope" if isinstance(query, CountQuery) else "parent", _about(query))
        text = template.format(
            children=w.noun(role, plural=True),
            child=w.noun(role),
            parent=where,
            scope=where,
            ties=w.rng.choice(P.TIES),
        )
        return Phrase(text, used)
    if isinstance(query, RemoveQuery):
        template, used = w.pick("REMOVE")
        target = w.slot(step, "target", query.target)
        return Phrase(template.format(target=target), used)
    if isinstance(query, SetSpeedQuery):
        template, used = w.pick("SET_SPEED")
        switch = w.slot(step, "switch", query.switch)
        speed = speed_text(query.capacity_bps, w.rng)
        return Phrase(template.format(switch=switch, speed=speed), used)
    if isinstance(query, MoveQuery):
        template, used = w.pick("MOVE")
        switch = w.slot(step, "switch", query.switch)
        holder = w.noun(w.roles[query.to])
        return Phrase(template.format(switch=switch, to=w.mention(query.to), holder=holder), used)
    assert isinstance(query, WhatIfQuery)
    target = w.slot(step, "target", query.target)
    if query.scenario == "drain":
        assert query.threshold_bps is not None
        template, used = w.pick("DRAIN")
        text = template.format(
            block=target,
            threshold=speed_text(query.threshold_bps, w.rng),
            superblock=w.noun("superblock"),
            superblocks=w.noun("superblock", plural=True),
        )
        return Phrase(text, used)
    assert query.scope is not None
    template, used = w.pick("FAIL")
    unit = w.rng.choice(P.UNIT_NAMES[query.unit])
    return Phrase(template.format(switch=target, scope=w.mention(query.scope), unit=unit), used)


def _about(query: ListQuery | RankQuery | CountQuery) -> str:
    return query.scope if isinstance(query, CountQuery) else query.parent


def answer_shape(step: Step) -> str:
    """The exact JSON the answer to ``step`` is."""
    query = step.params
    if isinstance(query, RankQuery):
        return "a JSON array of entity names, in ranking order"
    if isinstance(query, ListQuery):
        return "a JSON array of entity names (any order)"
    if isinstance(query, CountQuery):
        return "a JSON integer"
    if isinstance(query, WhatIfQuery):
        if query.scenario == "drain":
            return "a JSON array of superblock names (any order; [] if there are none)"
        return f"a JSON integer, the capacity in {query.unit}"
    return "null (this step only changes the model)"


def roles_of(model: PlanModel, schema: Schema, steps: list[Step]) -> dict[str, Role]:
    """The role of every name the brief may mention: the model's and every added entity's."""
    roles = {entity.name: schema.role_map[entity.kind] for entity in model.entities}
    for step in steps:
        query = step.params
        if isinstance(query, AddQuery):
            roles[query.name] = "port" if query.what == "port" else "switch"
            roles.update(dict.fromkeys(query.ports, "port"))
            if query.linecard:
                roles[query.linecard] = "linecard"
            if query.controller:
                roles.setdefault(query.controller, "control_domain")
    return roles


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def write_brief(
    schema: Schema,
    naming: Naming,
    model: PlanModel,
    steps: list[Step],
    model_path: str,
    rng: random.Random,
) -> str:
    """The whole brief of a task whose model, before any step, is ``model``."""
    root = next(e.name for e in model.entities if e.kind == schema.root)
    w = Wording(schema, naming, roles_of(model, schema, steps), root, steps, rng)
    numbering = rng.choice(P.NUMBERING)
    lines = [rng.choice(P.TASK_HEADERS)]
    for at in range(len(steps)):
        link = rng.choice(P.LINKS) if at else ""
        text = _capital(link + phrase_step(w, at).text)
        lines.append(numbering.format(n=at + 1) + text)
    task = "\n".join(lines)
    where = rng.choice(P.LOCATIONS).format(path=model_path)
    described = "Schema of this model:\n" + schema.describe() + "\n\n" + P.CONVENTIONS
    opener = rng.choice(P.OPENERS)
    body = (
        [opener, where, described, task] if rng.random() < 0.6 else [opener, task, where, described]
    )
    answers = [rng.choice(P.SUBMIT).format(count=len(steps))]
    answers += [f"- step {at + 1}: {answer_shape(step)}" for at, step in enumerate(steps)]
    closing = rng.choice(P.WRITE_BACK).format(path=model_path) + "\n" + "\n".join(answers)
    return "\n\n".join([*body, closing]) + "\n"
