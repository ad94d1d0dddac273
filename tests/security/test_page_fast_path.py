"""A run report rendered through the one-pass page exporter and the redactor's folded fast path.

The page is made without nbconvert's BeautifulSoup pass (``evalkit.report._page``) and the
redactor reads only the escapes and non-ASCII characters of the page folded
(``evalkit._redact._FOLDABLE``). A hostile run puts a secret (raw, fullwidth, as character
references), terminal escape sequences, bidi controls and HTML/script into case ids, item keys,
transcripts and outputs; the rendered page must hold none of them live.
"""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from evalkit._redact import MARK
from evalkit.report import report
from evalkit.report._html import BIDI_CONTROLS

FIXTURE_RUN = Path(__file__).resolve().parents[1] / "fixtures" / "runs" / "after"
MARKER = "window.__pwned=1"  # occurs in the fixture's hostile case ids, item keys, transcripts
#: A secret of this process's environment (the redactor's known secrets).
SECRET = "q7-Zr9tLw2Xv8Kp4Hs6Nd3Fb5Jm1Yc0Ge"
#: A key recognised by its shape, with no environment variable behind it.
KEY = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
RLO = "\u202e"
ESC = "\x1b"
SCRIPT = "<script>alert('page')</script>"


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def _references(text: str) -> str:
    return "".join(f"&#x{ord(c):x};" for c in _fullwidth(text))


#: What each hostile string carries after the fixture's marker.
PAYLOAD = (
    f"{SECRET} {KEY} {_fullwidth(KEY)} {_references(SECRET)} {ESC}[31mred{ESC}[0m "
    f"{ESC}]8;;https://evil.example{ESC}\\link {RLO}gnp.exe {SCRIPT}"
)


def _hostile_table(table: pa.Table) -> pa.Table:
    columns = []
    for column in table.columns:
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            column = pc.replace_substring(column, MARKER, f"{MARKER} {PAYLOAD}")
        columns.append(column)
    return pa.Table.from_arrays(columns, schema=table.schema)


def _hostile_run(root: Path) -> Path:
    run_dir = root / "hostile"
    shutil.copytree(FIXTURE_RUN, run_dir)
    for path in run_dir.glob("*.parquet"):
        pq.write_table(_hostile_table(pq.read_table(path)), path)
    in_json = json.dumps(f"{MARKER} {PAYLOAD}")[1:-1]  # the escape characters as \u001b
    for path in (run_dir / "transcripts").glob("*.jsonl"):
        text = path.read_text(encoding="utf-8").replace(MARKER, in_json)
        # every model answer and tool output carries the payload too
        text = text.replace('"I think it works now.', f'"I think it works now. {in_json}')
        text = text.replace('"exit 0', f'"exit 0 {in_json}')
        path.write_text(text, encoding="utf-8")
    return run_dir


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("fast-path")
    run_dir = _hostile_run(root)
    assert SECRET in pq.read_table(run_dir / "results.parquet").to_pandas()["case_id"].str.cat()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EVALKIT_PAGE_TEST_API_KEY", SECRET)
        result = report(run_dir, kind="run", output=root / "hostile.html")
    text = result.html_path.read_text(encoding="utf-8")
    assert "Browse items" in text and text.count(MARK) > 10, "the hostile items are shown"
    return text


@pytest.mark.slow
def test_no_spelling_of_the_secret_or_the_key_reaches_the_page(page: str) -> None:
    # the references as the page escapes a model's text (``&amp;#xff51;``), which the reader's
    # browser shows as ``&#xff51;`` and anyone can decode
    escaped = html.escape(_references(SECRET))
    for spelled in (SECRET, KEY, _fullwidth(KEY), _fullwidth(SECRET), _references(SECRET),
                    escaped):
        assert spelled not in page
        assert spelled[len(spelled) // 3 :] not in page, "no tail of it either"
    assert KEY[8:] not in page


@pytest.mark.slow
def test_escape_sequences_and_bidi_controls_do_not_reach_the_page(page: str) -> None:
    assert ESC not in page
    for char in BIDI_CONTROLS:
        assert char not in page, f"U+{ord(char):04X} reached the page"
    assert "\u27e8U+202E\u27e9gnp.exe" in page, "the RLO is shown as a visible marker"


@pytest.mark.slow
def test_hostile_markup_is_text_and_every_script_is_the_pages_own(page: str) -> None:
    assert SCRIPT not in page and "<script>window.__pwned" not in page
    assert '<img src=x onerror' not in page
    assert "&lt;script&gt;alert(" in page, "the hostile markup is shown as text"
    scripts = re.findall(r"<script\b[^>]*>", page, flags=re.I)
    assert all("application/json" in tag or tag == "<script>" for tag in scripts), scripts
    # the one-pass exporter still describes every image, as nbconvert's second pass did
    images = re.findall(r"<img\b[^>]*>", page)
    assert images and all(" alt=" in tag for tag in images)
