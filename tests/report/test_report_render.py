"""evalkit report: notebooks executed by papermill and rendered to self-contained HTML."""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType

import jupytext
import nbformat
import pandas as pd
import papermill
import pytest
from jupytext.config import find_jupytext_configuration_file, load_jupytext_configuration_file

import evalkit
from evalkit.errors import ConfigError, InputError, RunNotFoundError
from evalkit.report import _render
from tests.conftest import evalkit_cli
from tests.report.conftest import (
    AFTER,
    BEFORE,
    BROWSER_PAGES,
    EXPECTED_FIGURES,
    EXPECTED_TITLES,
    IMG_PAYLOAD,
    ROOT,
    RUNS,
    SCRIPT_PAYLOAD,
    SHOWS_CASE_IDS,
    Rendered,
)

# the session fixture `rendered` renders six reports: one worker renders them for all (make test:
# --dist loadgroup)
pytestmark = pytest.mark.xdist_group("rendered-reports")

# The package, even if ``evalkit.report`` is also bound to the ``report`` function.
rk = importlib.import_module("evalkit.report")
analysis = importlib.import_module("evalkit.analysis")

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.py"))
PAGES = list(EXPECTED_FIGURES)


def _script(name: str) -> ModuleType:
    path = ROOT / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_evalkit_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


# -- the notebooks as committed ------------------------------------------------------------------


def test_every_kind_has_a_notebook() -> None:
    names = {p.name for p in NOTEBOOKS}
    assert set(rk.NOTEBOOKS.values()) <= names
    assert "tutorial.py" in names
    assert not list((ROOT / "notebooks").glob("*.ipynb")), "the .py files are the only source"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_are_percent_files_with_one_parameters_cell(path: Path) -> None:
    nb = rk.read_notebook(path)
    nbformat.validate(nb)
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, "exactly one cell tagged 'parameters'"
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# ")
    assert nb.metadata["kernelspec"]["name"] == "python3"
    assert papermill.inspect_notebook(nb), "papermill infers the parameters from the node"
    assert [c.id for c in nb.cells] == [c.id for c in rk.read_notebook(path).cells], "stable ids"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_are_saved_as_jupyter_saves_them(path: Path) -> None:
    # JupyterLab (with jupytext) rewrites a percent file on save with the project's jupytext
    # settings: a notebook opened and saved unchanged must leave no diff.
    config = load_jupytext_configuration_file(find_jupytext_configuration_file(str(path.parent)))
    text = path.read_text(encoding="utf-8")
    saved = jupytext.writes(jupytext.reads(text, fmt="py:percent"), "py:percent", config=config)
    assert saved == text


def test_notebooks_compute_no_statistics_inline() -> None:
    forbidden = re.compile(r"1\.96|np\.|numpy|scipy|statsmodels|\.mean\(|\.std\(|sqrt|<[a-z]+[ >]")
    for path in NOTEBOOKS:
        nb = rk.read_notebook(path)
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert not forbidden.search(cell.source), f"{path.name}: {cell.source[:80]}"


# -- the committed fixture runs -------------------------------------------------------------------


def test_fixture_runs_are_small_and_reproducible() -> None:
    size = sum(p.stat().st_size for p in RUNS.rglob("*") if p.is_file())
    assert size < 300 * 1024, f"fixture runs are {size / 1024:.0f} KiB"
    make = _script("make_report_fixtures")
    for spec in make.fixture_specs():
        rows, _ = make.synthesize(spec)
        committed = evalkit.read_run(RUNS / spec.run_id)
        assert len(committed) == len(rows)
        pd.testing.assert_series_equal(
            committed["passed"].reset_index(drop=True), rows["passed"].reset_index(drop=True)
        )
        assert committed["case_id"].tolist() == rows["case_id"].tolist()


def test_fixture_compare_names_a_regressed_and_an_improved_case() -> None:
    result = evalkit.compare(BEFORE, AFTER)
    assert result.regressed_cases == ["quote-variables"]
    assert result.improved_cases == ["sum-numbers"]


# -- rendered pages (rendered once per session in conftest) -------------------------------------


@pytest.mark.parametrize("name", PAGES)
def test_page_is_self_contained_without_code(rendered: dict[str, Rendered], name: str) -> None:
    page = rendered[name]
    html = page.html
    assert page.notebook_path.exists() and page.notebook_path.suffix == ".ipynb"
    assert page.notebook_path.with_suffix(".html") == page.html_path, "notebook kept beside"
    assert f"<title>{EXPECTED_TITLES[name]}</title>" in html
    scripts = re.findall(r"<script\b[^>]*>(.*?)</script>", html, re.S | re.I)
    if name in BROWSER_PAGES:
        # Exactly one script, evalkit's item browser, allowed by the CSP through its hash.
        assert len(scripts) == 1 and html.lower().count("<script") == 1
        assert scripts[0] == (ROOT / "templates/evalkit/static/browser.js").read_text("utf-8")
        csp = re.search(
            r'<meta (?=[^>]*http-equiv="Content-Security-Policy")[^>]*content="([^"]*)"', html
        )
        assert csp is not None
        assert f"script-src '{_render.script_hash(scripts[0])}';" in csp.group(1)
        assert "unsafe-inline'; script" not in csp.group(1).split("script-src", 1)[1]
    else:
        assert "<script" not in html.lower(), "no script at all (hostile ones are escaped)"
        assert "script-src" not in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html), "no external URL"
    assert "require.js" not in html and "mathjax" not in html.lower()
    assert "jp-InputArea-editor" not in html and "import evalkit" not in html, "no code cells"
    assert "Content-Security-Policy" in html
    for figure in EXPECTED_FIGURES[name]:
        assert f'id="fig-{figure}"' in html, f"figure {figure} missing"


@pytest.mark.parametrize("name", PAGES)
def test_page_has_a_table_of_contents(rendered: dict[str, Rendered], name: str) -> None:
    html = rendered[name].html
    found = re.search(r'<nav[^>]*class="ek-toc"[^>]*>(.*?)</nav>', html, re.S)
    assert found, "no contents"
    nav = found.group(1)
    links = re.findall(r'href="#([^"]+)"', nav)
    assert len(links) >= 3
    for anchor in links:
        assert f'id="{anchor}"' in html, f"TOC link #{anchor} has no target"


@pytest.mark.parametrize("name", SHOWS_CASE_IDS)
def test_hostile_case_ids_and_transcripts_are_escaped(
    rendered: dict[str, Rendered], name: str
) -> None:
    html = rendered[name].html
    assert SCRIPT_PAYLOAD not in html
    assert IMG_PAYLOAD not in html
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in html
    assert re.search(r"&lt;img src=x onerror=(&quot;|\")window.__pwned=1(&quot;|\")&gt;", html)


@pytest.mark.parametrize("name", PAGES)
def test_executed_notebook_is_clean(rendered: dict[str, Rendered], name: str) -> None:
    nb = nbformat.read(rendered[name].notebook_path, as_version=4)
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1, "papermill injected the parameters"
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            assert output.output_type != "error", cell.source
            assert not (output.output_type == "stream" and output.name == "stderr"), (
                f"{name}: unexpected stderr (a warning?) in cell: {cell.source[:80]}\n"
                f"{output.text[:500]}"
            )


def test_run_report_sections(rendered: dict[str, Rendered]) -> None:
    html = rendered["run"].html
    for section in (
        "Summary",
        "Pass rates",
        "By provider and condition",
        "By lane and condition",
        "Skill lift",
        "Routing",
        "Errors and timeouts",
        "Slowest items",
        "Most expensive items",
        "Failing transcripts",
    ):
        assert re.search(rf"<h[23][^>]*>{re.escape(section)}", html), section
    for table in ("trigger-confusion", "errors", "slowest", "costliest", "lift-metrics"):
        assert f'id="{table}"' in html, table
    assert "realized_lift" in html and "rate_limited" in html and "ek-excerpt" in html


def test_compare_report_shows_verdict_and_case_pairs(rendered: dict[str, Rendered]) -> None:
    html = rendered["compare"].html
    assert 'class="ek-banner ek-banner-inconclusive"' in html
    assert html.count('class="ek-pair"') == 2, "one regressed and one improved pair"
    assert "regressed: case quote-variables (preloaded)" in html
    assert "improved: case sum-numbers (none)" in html
    # inconclusive: the page says what would settle it, in the banner and its own section
    assert re.search(r"<h2[^>]*>What would settle it", html)
    assert "next step:" in html and "cases to tell a" in html
    # two runs: one row per condition, and the headline names what the overall figure pools
    assert '<table class="ek-table" id="by-condition">' in html
    assert "stratified by case (each case counts once" in html
    conditions = rendered["compare-conditions"].html
    assert "preloaded vs none" in conditions
    assert "after · none" in conditions and "after · preloaded" in conditions


def test_flips_report_shows_flipped_items_side_by_side(rendered: dict[str, Rendered]) -> None:
    html = rendered["flips"].html
    assert re.search(r"<h2[^>]*>Flipped items side by side", html)
    captions = re.findall(r'<p class="ek-pair-caption">([^<]*)</p>', html)
    within = [c for c in captions if re.search(r"trial \d+ passed, trial \d+ failed$", c)]
    between = [c for c in captions if re.search(r" in before, (passed|failed) in after$", c)]
    assert len(within) == 5 and len(between) == 5, captions
    assert "<style" not in html.split("</head>", 1)[1], "the notebook stylesheet is dropped"
    assert 'class="ek-event ek-event-tool-call' in html


def test_trend_marks_the_dataset_version_change(rendered: dict[str, Rendered]) -> None:
    html = rendered["trend"].html
    assert "c3e8f1d27a9b6e05" in html and "5d1c0a7e9b2f4a10" in html
    history = analysis.trend(RUNS, n_resamples=200)
    assert [str(p.date()) for p in history.changes()] == ["2026-10-26"]
    assert set(history.runs["run_dir"]) == {"w41", "w42", "before", "after"}


def test_cli_prints_the_paths(rendered: dict[str, Rendered]) -> None:
    data = json.loads(rendered["lift"].stdout)
    assert data["kind"] == "lift"
    assert Path(data["html_path"]).exists() and Path(data["notebook_path"]).exists()
    assert data["parameters"] == {"run": str(AFTER.resolve())}


# -- bad input: exit 2 before any kernel starts ---------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["report", "no-such-run", "--runs-dir", str(RUNS)], "run 'no-such-run' not found"),
        (["report", str(AFTER), "-p", "bogus=1"], "unknown notebook parameter(s) ['bogus']"),
        (["report", str(AFTER), "-p", "top_n=many"], "`top_n` must be of type int"),
        (["report", str(AFTER), "-p", "top_n"], "expects NAME=VALUE"),
        (["report", str(AFTER), "--kind", "pie"], "invalid choice: 'pie'"),
        (["report", str(AFTER), "--kind", "lift", "--baseline", str(BEFORE)], "--baseline is"),
        (["report", str(AFTER), "-p", "run=x"], "set from the command's arguments"),
        (["report", str(AFTER / "nothing"), "--kind", "trend"], "not a directory"),
        (["report", str(AFTER), "-o", "report.pdf"], "must be an .html file"),
    ],
)
def test_bad_input_exits_2(argv: list[str], message: str) -> None:
    code, out, err = evalkit_cli(*argv)
    assert code == 2
    assert out == ""
    assert message in err


def test_library_raises_input_errors() -> None:
    with pytest.raises(RunNotFoundError):
        rk.report("no-such-run", runs_dir=RUNS)
    with pytest.raises(ConfigError, match="must be one of"):
        rk.report(AFTER, kind="pie")
    with pytest.raises(ConfigError, match="accepts: run \\(str\\)"):
        rk.report(AFTER, parameters={"nope": 1})
    with pytest.raises(ConfigError, match="must be of type float"):
        rk.report(AFTER, parameters={"confidence": "high"})


def test_cli_values_are_converted_to_declared_types() -> None:
    notebook = ROOT / "notebooks" / "run_report.py"
    checked = rk.validate_parameters(
        notebook, {"top_n": "5", "confidence": "0.9", "run": "x", "seed": 3}
    )
    assert checked == {"top_n": 5, "confidence": 0.9, "run": "x", "seed": 3}
    with pytest.raises(ConfigError):
        rk.validate_parameters(notebook, {"top_n": True})


# -- a failing cell: exit 1, the cell named, the executed notebook kept ---------------------------


@pytest.fixture
def broken_notebooks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('run: str = ""  # the run\nlimit: int = 1  # unused')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Broken"),
        params,
        nbformat.v4.new_code_cell("ok = 1"),
        nbformat.v4.new_code_cell("\nratio = ok / 0  # boom\nprint(ratio)"),
        nbformat.v4.new_code_cell("print('never reached')"),
    ]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    folder = tmp_path / "notebooks"
    folder.mkdir()
    jupytext.write(nb, folder / "run_report.py", fmt="py:percent")
    real = _render.resource_dir
    monkeypatch.setattr(
        _render, "resource_dir", lambda name: folder if name == "notebooks" else real(name)
    )
    return folder


def test_failing_cell_names_the_cell_and_keeps_the_notebook(
    broken_notebooks: Path, tmp_path: Path
) -> None:
    output = tmp_path / "out" / "page.html"
    code, out, err = evalkit_cli("report", AFTER, "-o", output)
    assert code == 1
    assert out == ""
    assert "failed in cell 3 (In [4])" in err
    assert "`ratio = ok / 0  # boom`" in err and "ZeroDivisionError" in err
    assert not output.exists(), "no HTML for a failed report"
    executed = nbformat.read(output.with_suffix(".ipynb"), as_version=4)
    errors = [o for c in executed.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert [e.ename for e in errors] == ["ZeroDivisionError"]


@pytest.mark.slow
def test_bad_input_inside_the_notebook_is_an_input_error(tmp_path: Path) -> None:
    output = tmp_path / "c.html"
    with pytest.raises(rk.ReportInputError) as caught:
        rk.report(AFTER, kind="compare", output=output, parameters={"conditions": "none,nosuch"})
    assert isinstance(caught.value, InputError)
    assert caught.value.cell_index == 3 and caught.value.ename == "InputError"
    assert "condition 'nosuch' is not in the run" in str(caught.value)
    assert output.with_suffix(".ipynb").exists()


# -- the tutorial runs top to bottom, live section included --------------------------------------


@pytest.mark.slow
def test_tutorial_executes(tmp_path: Path) -> None:
    nb = papermill.execute_notebook(
        rk.read_notebook(ROOT / "notebooks" / "tutorial.py"),
        str(tmp_path / "tutorial.ipynb"),
        parameters={
            "run": str(AFTER),
            "baseline": str(BEFORE),
            "live": True,
            "suite": str(ROOT / "cases" / "demo"),
            "scratch": str(tmp_path / "runs"),
        },
        kernel_name="python3",
        progress_bar=False,
        cwd=str(tmp_path),
    )
    texts = [o.get("data", {}).get("text/html", "") for c in nb.cells for o in c.get("outputs", [])]
    assert any('id="fig-tutorial-forest"' in t for t in texts)
    assert any("ek-banner" in t for t in texts), "the live comparison ran"
    # the tutorial shows each rich display: compare, lift, flips, power and a run overview
    banners = [t for t in texts if "ek-banner" in t]
    for shown in ("SKILL LIFT", "FLIP RATE", "POWER", "matched cases", "next step:"):
        assert any(shown in t for t in banners), shown
    assert any("ek-browser" in t for t in texts), "the run overview"
    assert not any(t.startswith("('") for c in nb.cells for o in c.get("outputs", [])
                   for t in [o.get("data", {}).get("text/plain", "")]), "a tuple repr"
    assert (tmp_path / "runs" / "skill-v2" / "results.parquet").exists()
