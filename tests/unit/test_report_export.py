"""Exports against their JSON Schemas, and the report's HTML and Markdown, from built runs."""

from __future__ import annotations

import base64
import json
import re
import secrets
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from netdojo.reports.compare import compare_runs
from netdojo.reports.export import atif, export_lines, sft
from netdojo.reports.markdown import summary_markdown
from netdojo.reports.report_page import render_report
from netdojo.reports.runs import Run

from .episodes import record, run, trajectory

SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "schemas"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "show",
            "description": "Read a device's state.",
            "parameters": {"type": "object", "properties": {"device": {"type": "string"}}},
        },
    }
]


def validator(name: str) -> Draft202012Validator:
    schema = json.loads((SCHEMAS / name).read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def errors(v: Draft202012Validator, document: dict[str, Any]) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in v.iter_errors(document)]


def _runs(token: str = "") -> tuple[Run, Run]:
    a = run(
        "agent-a",
        [
            record("a1", "solved", instance="i1"),
            record("a2", "unsafe", instance="i2", correct=True, safe=False),
            record("a3", "infra_error", instance="i3"),
        ],
        path="runs/a",
        trajectories={n: trajectory(n, extra=token) for n in ("a1", "a2")},
    )
    b = run(
        "agent-b",
        [record("b1", "unsolved", instance="i1"), record("b2", "solved", instance="i2")],
        path="runs/b",
        trajectories={n: trajectory(n) for n in ("b1", "b2")},
    )
    return a, b


def test_sft_lines_match_the_schema_and_answer_every_call() -> None:
    a, _ = _runs()
    line = sft(a, a.result.episodes[0], a.trajectories["a1"], "You operate a network.", TOOLS)
    assert errors(validator("sft.schema.json"), line) == []
    messages = line["messages"]
    assert [m["role"] for m in messages[:3]] == ["system", "user", "assistant"]
    assert messages[1]["content"] == "Make h1 reach h2."
    calls = [c for m in messages for c in m.get("tool_calls", [])]
    answers = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    assert [c["id"] for c in calls] == answers == ["call_0", "call_1", "call_2", "call_3"]
    assert json.loads(calls[2]["function"]["arguments"]) == {
        "device": "r1", "command": "ip link set eth0 up",
    }  # fmt: skip
    assert messages[5]["content"] == "error: no device r9"
    assert messages[-1] == {"role": "assistant", "content": "answer of a1"}
    assert line["metadata"]["reward"] == 1.0 and line["metadata"]["safe"] is True


def test_atif_matches_the_schema_and_links_results_to_calls() -> None:
    a, _ = _runs()
    document = atif(a, a.result.episodes[1], a.trajectories["a2"], TOOLS)
    assert errors(validator("atif-v1.7.schema.json"), document) == []
    steps = document["steps"]
    assert [s["step_id"] for s in steps] == list(range(1, len(steps) + 1))
    assert steps[0] == {"step_id": 1, "source": "user", "message": "Make h1 reach h2."}
    for step in steps[1:-1]:
        ids = {c["tool_call_id"] for c in step["tool_calls"]}
        assert {r["source_call_id"] for r in step["observation"]["results"]} == ids
    assert steps[-1]["message"] == "answer of a2"
    assert document["final_metrics"]["extra"] == {
        "outcome": "unsafe", "reward": 0.0, "correct": True, "safe": False,
        "targets_passed": 1.0, "targets_passed_at_start": 0.0, "tool_calls": 5,
        "state_changing_calls": 1, "wall_s": 10.0,
    }  # fmt: skip
    assert document["agent"]["tool_definitions"] == TOOLS


def test_an_atif_schema_violation_is_caught() -> None:
    a, _ = _runs()
    document = atif(a, a.result.episodes[0], a.trajectories["a1"])
    document["steps"][0]["tool_calls"] = document["steps"][1]["tool_calls"]  # on a user step
    assert errors(validator("atif-v1.7.schema.json"), document)


def test_export_keeps_solved_safe_episodes_with_a_trajectory() -> None:
    a, b = _runs()
    every = [json.loads(x) for x in export_lines([a, b], "sft", system="s")]
    assert [x["metadata"]["episode_id"] for x in every] == ["a1", "a2", "b1", "b2"]  # a3: none
    kept = [json.loads(x) for x in export_lines([a, b], "atif", system="s", only="solved-safe")]
    assert [x["session_id"] for x in kept] == ["a1", "b2"]


def test_exports_never_carry_a_token() -> None:
    token = secrets.token_urlsafe(32)
    a, b = _runs(token=f"Authorization: Bearer {token}")
    for fmt in ("sft", "atif"):
        text = "\n".join(export_lines([a, b], fmt, system="s"))  # type: ignore[arg-type]
        assert token not in text and "[redacted]" in text


def test_report_links_every_episode_and_escapes_what_devices_print() -> None:
    a, b = _runs()
    page = render_report([a, b], [compare_runs(a, b)])
    for i, r in enumerate([*a.result.episodes, *b.result.episodes]):
        anchor = f"ep-{0 if i < 3 else 1}-{r.episode_id}"
        assert f'href="#{anchor}"' in page and f'id="{anchor}"' in page
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "Make h1 reach h2." in page and "target:ping:h1-h2" in page
    assert "Paired comparison" in page
    assert "Left out of every rate" in page and "the lab did not come up" in page
    images = re.findall(r'<img class="plot" alt="[^"]+" src="data:image/svg\+xml;base64,([^"]+)"',
                        page)  # fmt: skip
    assert len(images) == 5
    assert all(base64.b64decode(i).lstrip().startswith(b"<?xml") for i in images)
    assert not re.search(r'(src|href)="(https?:)?//', page)
    assert "default-src 'none'" in page


def test_the_report_header_shows_no_status_line_unless_rendering_failed() -> None:
    a, b = _runs()
    page = render_report([a, b])
    header = page[page.index("<h1>") : page.index("<nav>")]
    assert "id='render-status'" not in page and "{" not in header
    assert "<p id='render-problem' class='fail' hidden></p>" in header
    assert "setAttribute('data-render-status', JSON.stringify(status))" in page


def test_report_draws_trials_when_instances_ran_several() -> None:
    trials = run("agent", [record(f"t{i}", "solved" if i else "unsolved", instance="i", trial=i)
                           for i in range(3)])  # fmt: skip
    page = render_report([trials])
    assert page.count('<img class="plot"') == 6 and "pass^k" in page


def test_markdown_summary_has_breakdowns_left_out_episodes_and_the_comparison() -> None:
    a, b = _runs()
    text = summary_markdown([a, b], [compare_runs(a, b)])
    assert "| correct | 50.0% | 9.5% to 90.5% | 2 |" in text
    assert "### By family" in text and "### By kind" in text
    assert "| a3 | infra_error | 1 | the lab did not come up |" in text
    assert "## Paired: A = agent-a" in text and "2 pairs on 2 shared instances" in text
