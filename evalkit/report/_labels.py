"""The labelling page: a reviewer marks each sampled statement pass or fail and exports a CSV.

The markup is plain escaped HTML (it survives the report sanitizer and reads without any
script): one table row per statement with its item, the statement, the prompt and the answer
excerpt, and the label given so far. On a report page, a small embedded script
(``templates/evalkit/static/labels.js``, allowed by the page's Content-Security-Policy through
its hash) adds a *pass* and a *fail* button to each row, counts what is labelled, and exports
the rows as a labels CSV that ``evalkit judge calibrate`` reads. It works from ``file://``
with no network. The judge's verdict and evidence are never on the page: a labeller who sees
them agrees with them more often than the answer deserves.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from evalkit.errors import InputError
from evalkit.report._render import LABELS_MARKER
from evalkit.report._tables import Fragment, esc
from evalkit.results import LABEL_COLUMNS, LABELS_FIX, read_labels_csv

_NORMAL = {"pass": "pass", "passed": "pass", "true": "pass", "yes": "pass", "1": "pass",
           "fail": "fail", "failed": "fail", "false": "fail", "no": "fail", "0": "fail"}


def read_label_rows(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a labels CSV (``evalkit judge sample``'s template, labelled or not) for the page.

    Returns:
        One row per statement with every column of :data:`~evalkit.results.LABEL_COLUMNS`
        (missing optional ones empty); ``label`` is ``pass``, ``fail`` or empty.

    Raises:
        InputError: The file is missing, not CSV, or lacks ``item_key``, ``expectation`` or
            ``label`` (the message names the file and how to make one).
    """
    file = Path(path)
    frame = read_labels_csv(file)
    if "pair_id" in frame.columns:  # a pairwise sheet (judge sample --pairwise)
        return _pair_rows(frame, file)
    missing = [c for c in ("item_key", "expectation", "label") if c not in frame.columns]
    if missing:
        raise InputError(
            f"--labels {file}: missing column(s) {', '.join(missing)}; {LABELS_FIX}"
        )
    for column in LABEL_COLUMNS:
        if column not in frame.columns:
            frame[column] = ""
    frame["label"] = [_NORMAL.get(v.strip().lower(), "") for v in frame["label"]]
    return frame[list(LABEL_COLUMNS)].reset_index(drop=True)


#: Columns of a pairwise labelling sheet (``evalkit judge sample --pairwise``).
PAIR_COLUMNS = ("pair_id", "case_id", "trial", "task", "response_1", "response_2", "label")


def _pair_rows(frame: pd.DataFrame, file: Path) -> pd.DataFrame:
    missing = [c for c in PAIR_COLUMNS if c not in frame.columns]
    if missing:
        raise InputError(
            f"--labels {file}: missing column(s) {', '.join(missing)}; make the sheet with "
            "'evalkit judge sample RUN --pairwise -n 50 -o pairs.csv'"
        )
    labels = [v.strip().lower().removeprefix("response").strip() for v in frame["label"]]
    frame["label"] = [v if v in ("1", "2", "tie") else "" for v in labels]
    return frame[list(PAIR_COLUMNS)].reset_index(drop=True)


def _pair_page(rows: pd.DataFrame, run_id: str) -> Fragment:
    """The pairwise labelling table: the two answers side by side, buttons 1, 2 and tie."""
    body = []
    for index, row in enumerate(rows.to_dict("records")):
        label = str(row.get("label", "") or "")
        body.append(
            f'<tr class="ek-label-row" id="ek-label-{index}">'
            f'<td class="ek-l-pair_id">{esc(row["pair_id"])}</td>'
            f'<td class="ek-l-case_id">{esc(row["case_id"])}</td>'
            f'<td class="ek-l-trial">{esc(row["trial"])}</td>'
            f'<td class="ek-l-task"><pre>{esc(row["task"])}</pre></td>'
            f'<td class="ek-l-response_1"><pre>{esc(row["response_1"])}</pre></td>'
            f'<td class="ek-l-response_2"><pre>{esc(row["response_2"])}</pre></td>'
            f'<td class="ek-l-label ek-label-{esc(label or "none")}">{esc(label)}</td></tr>'
        )
    name = f"{run_id}-pairs.csv" if run_id else "pairs.csv"
    return Fragment(
        f'{LABELS_MARKER} id="ek-labels" title="{esc(name)}">'
        '<p class="ek-labels-help">For each row, read the task and the two responses side by '
        "side and decide which is <strong>better</strong>: <strong>1</strong>, "
        "<strong>2</strong> or <strong>tie</strong>. Which variant wrote which response is "
        "not shown, nor what the judge said. Then export the CSV and run <code>evalkit judge "
        f"calibrate {esc(run_id or 'RUN')} --labels {esc(name)} --pairwise</code>.</p>"
        f'<p class="ek-labels-status">{int((rows["label"] != "").sum())} of {len(rows)} '
        "pairs labelled</p>"
        '<table class="ek-labels-table ek-pair-labels"><thead><tr><th>pair</th><th>case</th>'
        "<th>trial</th><th>task</th><th>response 1</th><th>response 2</th><th>label</th>"
        f"</tr></thead><tbody>{''.join(body)}</tbody></table></section>"
    )


def labelling_page(rows: pd.DataFrame, *, run_id: str = "") -> Fragment:
    """The labelling table of ``rows`` (the columns of :func:`read_label_rows`).

    Args:
        rows: Statements to label.
        run_id: The run they come from (names the exported file).

    Returns:
        The fragment: a ``section.ek-labels`` holding the table; the page's script adds the
        buttons and the export.
    """
    if "pair_id" in rows.columns:
        return _pair_page(rows, run_id)
    body = []
    for index, row in enumerate(rows.to_dict("records")):
        label = str(row.get("label", "") or "")
        cells = "".join(
            f'<td class="ek-l-{column}">{esc(row.get(column, ""))}</td>'
            for column in ("item_key", "case_id", "condition", "trial", "component")
        )
        body.append(
            f'<tr class="ek-label-row" id="ek-label-{index}">{cells}'
            f'<td class="ek-l-expectation"><strong>{esc(row.get("expectation", ""))}</strong></td>'
            f'<td class="ek-l-prompt"><pre>{esc(row.get("prompt", ""))}</pre></td>'
            f'<td class="ek-l-answer"><pre>{esc(row.get("answer", ""))}</pre></td>'
            f'<td class="ek-l-label ek-label-{esc(label or "none")}">{esc(label)}</td></tr>'
        )
    name = f"{run_id}-labels.csv" if run_id else "labels.csv"
    html = (
        f'{LABELS_MARKER} id="ek-labels" title="{esc(name)}">'
        '<p class="ek-labels-help">For each row, read the prompt and the answer and decide '
        "whether the <strong>statement</strong> holds for this answer: <strong>pass</strong> "
        "or <strong>fail</strong>. Then export the CSV and run <code>evalkit judge calibrate "
        f"{esc(run_id or 'RUN')} --labels {esc(name)}</code>. The judge's verdicts are not "
        "shown, so that they cannot sway you.</p>"
        f'<p class="ek-labels-status">{int((rows["label"] != "").sum())} of {len(rows)} '
        "statements labelled</p>"
        '<table class="ek-labels-table"><thead><tr><th>item</th><th>case</th>'
        "<th>condition</th><th>trial</th><th>statement #</th><th>statement</th><th>prompt</th>"
        f"<th>answer</th><th>label</th></tr></thead><tbody>{''.join(body)}</tbody></table>"
        "</section>"
    )
    return Fragment(html)
