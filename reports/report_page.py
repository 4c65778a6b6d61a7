"""The HTML report: one self-contained file that works offline.

Figures are SVG documents inlined as data URIs, the style sheet and a small check script are
inline, and a content security policy forbids loading anything from elsewhere. The check
script runs when the page has loaded: it confirms that every figure decoded to a non-empty
image and that no resource was fetched or refused, and writes the result on the body
(`data-render` is ``ok`` or ``failed``, `data-render-status` the details as JSON), where a
headless browser can read it. A reader sees it only when something failed, in plain words.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from netdojo.reports.compare import RunComparison
from netdojo.reports.plots import all_plots, series_of
from netdojo.reports.report_episodes import episodes_section, trajectories_section
from netdojo.reports.report_markup import Text
from netdojo.reports.report_sections import (
    breakdown_section,
    comparison_section,
    diagnosis_section,
    figures_section,
    headline_section,
    runs_section,
)
from netdojo.reports.runs import Run

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#212121;
background:#fafafa}
main{max-width:1180px;margin:0 auto;padding:16px 24px 64px}
h1{font-size:22px;margin:8px 0}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd}
h3{font-size:15px;margin:18px 0 6px}
table{border-collapse:collapse;margin:6px 0 12px;background:#fff}
td,th{border:1px solid #e0e0e0;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f1f1f1}td.num{text-align:right;font-variant-numeric:tabular-nums}
figure{background:#fff;border:1px solid #e0e0e0;margin:12px 0;padding:8px;display:inline-block;
vertical-align:top}
figure img{display:block;max-width:100%;height:auto}figcaption{font-size:12px;color:#555}
.badge{display:inline-block;padding:0 6px;border-radius:3px;color:#fff;font-size:12px}
pre{background:#f5f5f5;border:1px solid #e0e0e0;padding:6px 8px;white-space:pre-wrap;
word-break:break-word;max-height:420px;overflow:auto;font-size:12px;margin:4px 0}
section.episode{background:#fff;border:1px solid #e0e0e0;padding:8px 16px;margin:16px 0}
ol.steps{padding-left:28px}ol.steps li{margin:6px 0}
.call{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px}
.flag{font-size:11px;border:1px solid #999;border-radius:3px;padding:0 4px;margin-left:4px}
.changed{border-color:#ef6c00;color:#ef6c00}.refused{border-color:#c62828;color:#c62828}
.pass{color:#2e7d32}.fail{color:#c62828}.muted{color:#757575}
nav a{margin-right:12px}
"""

CHECK_SCRIPT = """
window.__problems = [];
window.addEventListener('error', function (e) {
  window.__problems.push('error: ' + (e.message || (e.target && (e.target.src || e.target.href))));
}, true);
document.addEventListener('securitypolicyviolation', function (e) {
  window.__problems.push('blocked: ' + e.blockedURI);
});
window.addEventListener('load', function () {
  var plots = Array.prototype.slice.call(document.querySelectorAll('img.plot'));
  var failed = plots.filter(function (img) {
    return !(img.complete && img.naturalWidth > 0 && img.naturalHeight > 0);
  }).map(function (img) { return img.alt; });
  var fetched = performance.getEntriesByType('resource').map(function (r) { return r.name; })
    .filter(function (name) { return name.indexOf('data:') !== 0; });
  var status = {plots: plots.length, rendered: plots.length - failed.length, failed: failed,
                fetched: fetched, problems: window.__problems};
  var ok = plots.length > 0 && !failed.length && !fetched.length && !window.__problems.length;
  document.body.setAttribute('data-render-status', JSON.stringify(status));
  document.body.setAttribute('data-render', ok ? 'ok' : 'failed');
  if (!ok) {
    var note = document.getElementById('render-problem');
    var missing = failed.length ? ' (missing: ' + failed.join(', ') + ')' : '';
    var reported = fetched.concat(window.__problems).map(function (r) { return r.slice(0, 80); });
    note.textContent = 'This page did not render fully: ' + status.rendered + ' of ' +
      status.plots + ' figures shown' + missing +
      (reported.length ? '; the browser reported: ' + reported.join('; ') : '') + '.';
    note.hidden = false;
  }
});
"""

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'"


def render_report(runs: Sequence[Run], comparisons: Sequence[RunComparison] = ()) -> str:
    """The whole report for ``runs`` (the first is A in every comparison)."""
    if not runs:
        raise ValueError("a report needs at least one run")
    text = Text()
    series = series_of(runs)
    plots = all_plots(series)
    title = "netdojo report: " + ", ".join(x.label for x in series)
    nav = "".join(
        f'<a href="#{key}">{name}</a>'
        for key, name in (
            ("runs", "runs"),
            ("headline", "headline"),
            ("figures", "figures"),
            ("breakdowns", "breakdowns"),
            ("paired", "paired"),
            ("episodes", "episodes"),
            ("trajectories", "trajectories"),
        )
        if key != "paired" or comparisons
    )
    generated = datetime.now(UTC).isoformat(timespec="seconds")
    body = "\n".join(
        [
            f"<h1>{text(title)}</h1>",
            f"<p class='muted'>Generated {generated}.</p>",
            "<p id='render-problem' class='fail' hidden></p>",
            f"<nav>{nav}</nav>",
            runs_section(series, text),
            headline_section(series, text),
            diagnosis_section(series),
            figures_section(plots),
            breakdown_section(series),
            comparison_section(comparisons, text),
            episodes_section(series, text),
            trajectories_section(series, text),
        ]
    )
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{text(title)}</title><style>{CSS}</style><script>{CHECK_SCRIPT}</script>"
        f"</head><body><main>\n{body}\n</main></body></html>\n"
    )
