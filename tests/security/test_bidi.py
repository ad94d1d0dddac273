"""Bidi control characters in case ids and model text are shown neutralised in reports."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from evalkit.report import report
from evalkit.report._html import BIDI_CONTROLS

FIXTURE_RUN = Path(__file__).resolve().parents[1] / "fixtures" / "runs" / "after"
RLO = "\u202e"
#: Shown as "evilexe.png" by a bidi-aware renderer; the report must show the RLO instead.
TROJAN = f"evil{RLO}gnp.exe"
MARKER = "window.__pwned=1"  # occurs in hostile case ids, item keys and transcripts


def _with_bidi(table: pa.Table) -> pa.Table:
    columns = []
    for column in table.columns:
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            column = pc.replace_substring(column, MARKER, f"{MARKER} {TROJAN}")
        columns.append(column)
    return pa.Table.from_arrays(columns, schema=table.schema)


def _hostile_run(tmp_path: Path) -> Path:
    run_dir = tmp_path / "bidi"
    shutil.copytree(FIXTURE_RUN, run_dir)
    for path in run_dir.glob("*.parquet"):
        pq.write_table(_with_bidi(pq.read_table(path)), path)
    for path in (run_dir / "transcripts").glob("*.jsonl"):
        text = path.read_text(encoding="utf-8").replace(MARKER, f"{MARKER} {TROJAN}")
        # the model's hostile answers also carry every other bidi control, raw in the JSON
        text = text.replace("Answer: ", "Answer: " + "".join(sorted(BIDI_CONTROLS)))
        path.write_text(text, encoding="utf-8")
    return run_dir


@pytest.mark.slow
def test_rlo_in_case_id_and_transcript_is_neutralised(tmp_path: Path) -> None:
    run_dir = _hostile_run(tmp_path)
    assert RLO in pq.read_table(run_dir / "results.parquet").to_pandas()["case_id"].str.cat()
    result = report(run_dir, kind="run", output=tmp_path / "bidi.html")
    page = result.html_path.read_text(encoding="utf-8")
    for char in BIDI_CONTROLS:
        assert char not in page, f"U+{ord(char):04X} reached the page"
    assert "evil\u27e8U+202E\u27e9gnp.exe" in page, "the RLO is shown as a visible marker"
    for code in ("2066", "2069", "200F", "061C"):
        assert f"\u27e8U+{code}\u27e9" in page
