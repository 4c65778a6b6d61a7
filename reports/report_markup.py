"""The HTML report's building blocks: text escaped after removing secrets, tables and cells,
outcome badges and the anchors that link an episode's row to its trajectory."""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import Any

from netdojo.reports.markdown import pct
from netdojo.reports.plots import OUTCOME_COLOURS
from netdojo.reports.records import EpisodeRecord, Rate
from netdojo.reports.redact import environment_secrets, scrub_text


class Text:
    """Escapes for HTML after removing secrets."""

    def __init__(self) -> None:
        self.secrets = environment_secrets()

    def __call__(self, value: Any) -> str:
        return html.escape(scrub_text(str(value), self.secrets))


def anchor(index: int, record: EpisodeRecord) -> str:
    return f"ep-{index}-{record.episode_id}"


def table(header: Iterable[str], rows: Iterable[Iterable[str]]) -> str:
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def td(text: str, numeric: bool = False) -> str:
    return f'<td class="num">{text}</td>' if numeric else f"<td>{text}</td>"


def badge(outcome: str) -> str:
    shade = OUTCOME_COLOURS.get(outcome, "#616161")
    return f'<span class="badge" style="background:{shade}">{html.escape(outcome)}</span>'


def yes(flag: bool) -> str:
    return '<span class="pass">yes</span>' if flag else '<span class="fail">no</span>'


def rate_cells(rates: Iterable[Rate]) -> list[str]:
    return [td(html.escape(pct(r)), numeric=True) for r in rates]
