"""The reference solution of a capacity task as the agent would give it: one program for the
`python` tool that edits the model file and writes the answer file.

Each step's change is written as data: a removal names its target (the program takes what it
contains, as the schema requires), any other change lists the entities and relations it adds,
drops or alters. The program is a second implementation of the changes, over plain JSON, so
the audit, by running it in the device, checks the reference solver against it.
"""

from __future__ import annotations

import json
from typing import Any

from netdojo.scenarios.capacity.lab import ANSWER_PATH, MODEL_PATH
from netdojo.scenarios.capacity.params import RemoveQuery
from netdojo.scenarios.capacity.queries import CapacityTask
from netdojo.scenarios.capacity.schema import PlanModel

PROGRAM = """
import json
model = json.load(open({model!r}))
CONTAINS = {contains!r}


def below(root):
    children = {{}}
    for r in model["relations"]:
        if r["kind"] == CONTAINS:
            children.setdefault(r["source"], []).append(r["target"])
    found, todo = set(), [root]
    while todo:
        name = todo.pop()
        found.add(name)
        todo += children.get(name, [])
    return found


def relation(r):
    return (r["kind"], r["source"], r["target"])


for change in {changes!r}:
    if "remove" in change:
        gone = below(change["remove"])
    else:
        gone = set(change["drop"])
    dropped = {{tuple(r) for r in change.get("unlink", [])}}
    altered = change.get("alter", {{}})
    model["entities"] = [
        altered.get(e["name"], e) for e in model["entities"] if e["name"] not in gone
    ] + change.get("add", [])
    model["relations"] = [
        r for r in model["relations"]
        if r["source"] not in gone and r["target"] not in gone and relation(r) not in dropped
    ] + change.get("link", [])
json.dump(model, open({model!r}, "w"))
json.dump({answer!r}, open({answer_path!r}, "w"))
"""


CHANGES = ("add", "remove", "set_speed", "move")
"""The query kinds that change the model."""


def _diff(before: PlanModel, after: PlanModel) -> dict[str, Any]:
    """What turns ``before`` into ``after``, as the program applies it."""
    old = {e.name: e for e in before.entities}
    new = {e.name: e for e in after.entities}
    old_links = {(r.kind, r.source, r.target) for r in before.relations}
    new_links = {(r.kind, r.source, r.target) for r in after.relations}
    return {
        "drop": sorted(set(old) - set(new)),
        "add": [new[name].model_dump(mode="json") for name in sorted(set(new) - set(old))],
        "alter": {
            name: new[name].model_dump(mode="json")
            for name in sorted(set(old) & set(new))
            if old[name] != new[name]
        },
        "unlink": [list(key) for key in sorted(old_links - new_links)],
        "link": [
            {"kind": kind, "source": source, "target": target}
            for kind, source, target in sorted(new_links - old_links)
        ],
    }


def solution_code(task: CapacityTask) -> str:
    """The program carrying out ``task`` and writing its answer."""
    changes: list[dict[str, Any]] = []
    before = task.model
    for step in task.steps:
        if step.kind not in CHANGES:
            continue
        if isinstance(step.params, RemoveQuery):
            changes.append({"remove": step.params.target})
        else:
            changes.append(_diff(before, step.model_after))
        before = step.model_after
    return PROGRAM.format(
        model=MODEL_PATH,
        contains=task.plan_schema.contains,
        changes=json.loads(json.dumps(changes)),
        answer=json.loads(json.dumps(task.expected_answer)),
        answer_path=ANSWER_PATH,
    )
