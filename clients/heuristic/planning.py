"""The heuristic on a planning model: it surveys the model and answers nothing.

A deterministic solver that reads only the schema cannot know what a query asks without
reading its phrasing, which varies past any template (tests/unit/test_capacity_parser.py); so
the baseline reports what the model holds and leaves it as it is, which is safe and unsolved.
"""

from __future__ import annotations

from netdojo.clients.session import ToolSession

SURVEY = """
import collections, json
model = json.load(open("model.json"))
kinds = collections.Counter(e["kind"] for e in model["entities"])
print(len(model["entities"]), "entities,", len(model["relations"]), "relations:",
      ", ".join(f"{n} {k}" for k, n in kinds.most_common()))
"""


async def survey_model(session: ToolSession) -> str:
    done = await session.call("python", {"code": SURVEY})
    found = str(done.get("stdout", "")).strip() or "nothing readable"
    return f"surveyed the model ({found}); changed nothing and answered nothing"
