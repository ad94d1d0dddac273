"""The viewer's pages: the runs index, a run, a comparison, a case's flip forensics.

Every figure comes from the functions the static reports and the CLI use
(:func:`evalkit.analysis.compare`, :func:`evalkit.analysis.explain`,
:func:`evalkit.stats.pass_rates`, :func:`evalkit.report.item_browser`), computed in the
server process; every fragment they render passes the reports' sanitizer, and the viewer's
own markup escapes every value. Scripts come only from ``/static/`` (the page's
Content-Security-Policy allows nothing else), and they turn no text into markup.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from urllib.parse import quote, urlencode

import pandas as pd

from evalkit.analysis import RunComparison, compare, explain
from evalkit.report import (
    case_named_column,
    comparison_fragment,
    explanation_fragment,
    html_table,
    interval,
    interval_table,
    item_browser,
    note,
    run_facts,
    sanitize_html,
)
from evalkit.results import load_manifest
from evalkit.stats import pass_rates
from evalkit.viewer._shown import shortened
from evalkit.viewer._state import run_state


def esc(value: object) -> str:
    """Text as HTML (quotes too)."""
    return html.escape(str(value), quote=True)


def page(title: str, body: str, *, scripts: Sequence[str] = ()) -> str:
    """A whole page: the reports' stylesheet, a navigation bar, ``body``, same-origin scripts."""
    tags = "".join(f'<script src="/static/{esc(s)}"></script>' for s in scripts)
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{esc(title)} · evalkit view</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="stylesheet" href="/static/evalkit.css">'
        '<link rel="stylesheet" href="/static/view.css"></head>'
        '<body class="ek-view"><nav class="ek-view-nav"><a href="/">runs</a></nav>'
        f'<main class="ek-view-main"><h1>{esc(title)}</h1>{body}</main>{tags}</body></html>'
    )


def index_page() -> str:
    """The runs index: a table ``view.js`` fills from ``/api/runs`` and refreshes."""
    heads = ("run", "suite", "providers", "conditions", "trials", "items done / planned",
             "state", "started", "from the cache", "pass rate by condition")
    head = "".join(f"<th>{esc(h)}</th>" for h in heads)
    body = (
        '<p class="ek-note">Every run of this directory; runs in progress move on their own '
        '(refreshed every 2 s). <span id="ek-view-updated"></span></p>'
        f'<table class="ek-table ek-view-runs"><thead><tr>{head}</tr></thead>'
        '<tbody id="ek-view-runs"></tbody></table>'
        '<h2>Compare</h2><p class="ek-note">Two runs, or two conditions of one run (open the '
        "run for those).</p>"
        '<form class="ek-view-compare" action="/compare" method="get">'
        '<label>baseline <select name="baseline" id="ek-view-baseline"></select></label> '
        '<label>candidate <select name="candidate" id="ek-view-candidate"></select></label> '
        '<button type="submit">compare</button></form>'
    )
    return page("Runs", body, scripts=("view.js",))


def _link(path: str, **query: str) -> str:
    return path + ("?" + urlencode(query) if query else "")


def run_page(run_dir: Path, rows: pd.DataFrame, runs_dir: Path) -> str:
    """A run: its facts, pass rates by condition and provider, comparisons, its items."""
    manifest = load_manifest(run_dir)
    recorded = shortened(manifest.model_dump(mode="json")) if manifest else {}
    facts = run_facts(rows, recorded)
    parts = [_state_note(run_dir, recorded), sanitize_html(facts.html)]
    graded = rows[rows["status"] != "ungraded"] if "status" in rows else rows
    by = [c for c in ("condition", "provider") if c in graded and graded[c].nunique() > 0]
    if not graded.empty:
        rates = pass_rates(graded, by=by)
        parts.append("<h2>Pass rates</h2>")
        parts.append(sanitize_html(interval_table(rates, by).html))
    conditions = sorted(str(c) for c in rows["condition"].dropna().unique())
    if len(conditions) > 1:
        def options(chosen: str) -> str:
            return "".join(
                f'<option value="{esc(c)}"{" selected" if c == chosen else ""}>{esc(c)}</option>'
                for c in conditions
            )

        baseline = "none" if "none" in conditions else conditions[0]
        candidate = next(c for c in conditions if c != baseline)
        parts.append(
            "<h2>Compare two conditions</h2>"
            '<form class="ek-view-compare" action="/compare" method="get">'
            f'<input type="hidden" name="run" value="{esc(run_dir.name)}">'
            f'<label>baseline <select name="a">{options(baseline)}</select></label> '
            f'<label>candidate <select name="b">{options(candidate)}</select></label> '
            '<button type="submit">compare</button></form>'
        )
    flipped = _flipped_cases(rows)
    if flipped:
        links = ", ".join(
            f'<a href="{esc(_link("/explain", run=run_dir.name, case=c))}">{esc(c)}</a>'
            for c in flipped[:50]
        )
        more = f" (and {len(flipped) - 50} more)" if len(flipped) > 50 else ""
        parts.append(f"<h2>Cases that flip</h2><p>Why each flips: {links}{more}</p>")
    parts.append("<h2>Items</h2>")
    parts.append(sanitize_html(item_browser(run_dir, rows, runs_dir=runs_dir).html))
    return page(f"Run {run_dir.name}", "".join(parts), scripts=("browser.js",))


def _state_note(run_dir: Path, manifest: Mapping[str, object]) -> str:
    """What the run is doing (running, interrupted with its resume command, failed, ...)."""
    state = run_state(run_dir, dict(manifest))
    if not state.state:
        return ""
    text = f"{state.state}: {state.note}" if state.note else state.state
    if state.resume:
        text += f". Resume it with: {state.resume}"
    kind = {"complete": "ok", "running": "info"}.get(state.state, "warn")
    return (f'<div class="ek-view-state ek-view-state-{esc(state.state)}">'
            f"{sanitize_html(note(text, kind).html)}</div>")


def _flipped_cases(rows: pd.DataFrame) -> list[str]:
    """Cases with a passing and a failing trial in one condition and provider."""
    if rows.empty or "passed" not in rows:
        return []
    keys = [c for c in ("case_id", "condition", "provider") if c in rows]
    ok = rows[rows["status"] == "ok"] if "status" in rows else rows
    spread = ok.groupby(keys)["passed"].agg(["min", "max"])
    moved = spread[spread["min"] != spread["max"]].reset_index()
    return sorted(str(c) for c in moved["case_id"].unique())


def comparison(
    runs_dir: Path, query: Mapping[str, str]
) -> tuple[RunComparison, str, dict[str, str]]:
    """``compare`` of the query's two runs or two conditions of one run, as the CLI runs it.

    The query names ``baseline`` and ``candidate`` runs, or a ``run`` and its conditions ``a``
    and ``b``; the defaults are ``evalkit compare``'s. Each run is given to ``compare`` as its
    directory inside ``runs_dir``, never as a name ``compare`` could find elsewhere (the
    current directory first). Returns the result, a title and the query used.
    """
    if query.get("run"):
        run, a, b = query["run"], query.get("a", ""), query.get("b", "")
        result = compare(runs_dir / run, conditions=(a, b), runs_dir=runs_dir)
        return result, f"{run}: {b} vs {a}", {"run": run, "a": a, "b": b}
    base, cand = query.get("baseline", ""), query.get("candidate", "")
    result = compare(runs_dir / base, runs_dir / cand, runs_dir=runs_dir)
    return result, f"{cand} vs {base}", {"baseline": base, "candidate": cand}


def comparison_page(result: RunComparison, title: str, query: Mapping[str, str]) -> str:
    """The verdict, its interval, the per-case table and the next step, as ``compare`` says."""
    data = result.to_dict()
    api = _link("/api/compare", **dict(query))
    parts = [
        sanitize_html(comparison_fragment(result).html),
        f'<p class="ek-note">The same figures as <code>evalkit compare --json</code>: '
        f'<a href="{esc(api)}">JSON</a>.</p>',
    ]
    step = data.get("next_step") or {}
    if isinstance(step, dict) and step.get("text"):
        parts.append(sanitize_html(note(f"next step: {step['text']}").html))
    if result.failure_changes:
        changes = pd.DataFrame(list(result.failure_changes)).rename(columns={
            "baseline": result.baseline_label, "candidate": result.candidate_label})
        table = html_table(changes, formats={"change": lambda v: f"{int(v):+d}"},
                           caption="Failing items by outcome (did not finish: a timeout, a "
                           "limit, a cancellation, a sandbox kill or an error; answered "
                           "wrong: the rest) and primary cause", table_id="failure-changes")
        parts.append(f"<h2>What the failures are made of</h2>{sanitize_html(table.html)}")
    run = query.get("run") or query.get("candidate", "")

    def explain_link(case: str) -> str:
        target = {"run": run, "case": case}
        if query.get("baseline"):
            target["baseline"] = query["baseline"]
        return f'<a href="{esc(_link("/explain", **target))}">{esc(case)}</a>'

    named = [*result.regressed_cases, *result.improved_cases]
    if named:
        links = ", ".join(explain_link(case) for case in named)
        parts.append(f'<p class="ek-view-named">Why each named case flips: {links}</p>')
    cases = result.cases.assign(
        change=[interval(e, lo, hi, "pp") for e, lo, hi in zip(
            result.cases["estimate"], result.cases["ci_low"], result.cases["ci_high"],
            strict=True)],
        case_named=case_named_column(result.stats),
    )
    columns = ("condition", "provider", "change", "verdict", "case_named")
    if not cases.empty:
        heads_of = _HEADS | {"change": f"change [{result.delta.confidence:.0%} CI]"}
        rows = []
        for record in cases.to_dict("records"):
            cells = "".join(
                f"<td>{esc(_cell(record.get(k)))}</td>" for k in columns if k in record
            )
            rows.append(f"<tr><td>{explain_link(str(record.get('case_id')))}</td>{cells}</tr>")
        heads = "".join(
            f"<th>{esc(heads_of.get(k, k))}</th>"
            for k in ("case", *columns) if k == "case" or k in cases
        )
        parts.append(
            "<h2>Cases</h2><p class=\"ek-note\">One row per case in each condition and provider "
            "(verdict: the row's own, corrected across rows; case named: the case's, from its "
            "pooled row above). A case opens why it flips.</p>"
            f'<table class="ek-table" id="ek-view-cases"><thead><tr>{heads}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>"
        )
    return page(f"Compare {title}", "".join(parts))


#: Headers of the viewer's case table that differ from their column names.
_HEADS = {"verdict": "row verdict", "case_named": "case named"}


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:+.3f}" if value == value else "—"
    return "" if value is None else str(value)


def explain_page(runs_dir: Path, query: Mapping[str, str]) -> str:
    """Why a case flips (:func:`evalkit.analysis.explain`), as the flip forensics show it."""
    run, case = query.get("run", ""), query.get("case", "")
    baseline = query.get("baseline") or None
    result = shortened(explain(runs_dir / run, case,
                               baseline=runs_dir / baseline if baseline else None,
                               runs_dir=runs_dir))
    back = f'<p><a href="/run/{esc(quote(run, safe=""))}">back to run {esc(run)}</a></p>'
    return page(f"Why {shortened(case)} flips",
                back + sanitize_html(explanation_fragment(result).html))


def full_case_id(cut: Mapping[str, str], case: str) -> str:
    """The whole case id a page showed cut short (``case`` itself when it was not cut)."""
    return cut.get(case, case)


def error_page(title: str, message: str) -> str:
    """An error the reader can act on (escaped)."""
    return page(title, sanitize_html(note(message, "warn").html))
