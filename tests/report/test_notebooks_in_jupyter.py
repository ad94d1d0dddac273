"""Every notebook runs as Jupyter runs it: nbclient, one kernel, working directory notebooks/.

JupyterLab, ``jupyter nbconvert --execute`` and ``jupytext --execute`` all start the kernel in
the notebook's own folder. The notebooks' defaults read the runs committed under
``tests/fixtures/runs/``, written from the project root: they must resolve from there.
"""

from __future__ import annotations

from pathlib import Path

import nbclient
import papermill
import pytest

from evalkit.optimize import OptimizeConfig, optimize
from evalkit.report import project_path, read_notebook
from tests.optimize.probes import write_monotone_suite
from tests.report.conftest import ROOT

NOTEBOOK_DIR = ROOT / "notebooks"
#: A figure (``<figure id="fig-...">``) each notebook shows when run with its defaults.
SHOWS = {
    "run_report": "fig-pass-rate-condition",
    "compare": "fig-forest",
    "lift": "fig-lift",
    "flips": "fig-flip-heatmap",
    "trend": "fig-trend-overall",
    "optimize": "fig-trajectory",
    "tutorial": "fig-tutorial-forest",
    "labels": "ek-labels",
    "judge": "fig-judge-confusion",
    "pairwise": "fig-pairwise-forest",
    "ablation": "ablation-verdicts",
}


def _run_as_jupyter(nb: object) -> list[dict[str, object]]:
    """Execute like Jupyter (kernel cwd = notebooks/); return every output of every cell."""
    client = nbclient.NotebookClient(
        nb,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOK_DIR)}},
    )
    executed = client.execute()
    return [output for cell in executed.cells for output in cell.get("outputs", [])]


def _optimization(tmp_path: Path) -> Path:
    suite = write_monotone_suite(tmp_path / "suite")
    seed = tmp_path / "seed.md"
    seed.write_text("# Probe skill\n")
    optimize(suite, OptimizeConfig(
        skill="probe", optimizer="python:tests.optimize.probes:append_marker", trials=1,
        max_iterations=2, stall=None, runs_dir=tmp_path / "runs", run_id="opt", seed_skill=seed,
        backend="threading", n_resamples=200,
    ))
    return tmp_path / "runs" / "opt"


def test_every_notebook_is_covered() -> None:
    assert {p.stem for p in NOTEBOOK_DIR.glob("*.py")} == set(SHOWS)


@pytest.mark.slow
@pytest.mark.parametrize("stem", list(SHOWS))
def test_notebook_runs_in_its_own_folder(stem: str, tmp_path: Path) -> None:
    nb = read_notebook(NOTEBOOK_DIR / f"{stem}.py")
    if stem == "optimize":
        # A fresh optimisation besides the committed one: inject the parameter (papermill's
        # cell right after the parameters cell, nothing executed), then run as Jupyter does.
        parameters = {"optimization": str(_optimization(tmp_path))}
        nb = papermill.execute_notebook(nb, None, parameters=parameters, prepare_only=True)
    outputs = _run_as_jupyter(nb)
    errors = [o for o in outputs if o["output_type"] == "error"]
    assert not errors, errors
    stderr = [o["text"] for o in outputs if o.get("name") == "stderr"]
    assert not stderr, stderr
    html = "".join(str(o.get("data", {}).get("text/html", "")) for o in outputs)
    assert f'id="{SHOWS[stem]}"' in html


def test_optimize_notebook_asks_for_its_parameter() -> None:
    nb = read_notebook(NOTEBOOK_DIR / "optimize.py")
    nb = papermill.execute_notebook(nb, None, parameters={"optimization": ""}, prepare_only=True)
    with pytest.raises(nbclient.exceptions.CellExecutionError, match="set `optimization`"):
        _run_as_jupyter(nb)


def test_optimize_notebook_runs_as_it_stands() -> None:
    """Run All with no parameter: the committed example optimisation (tests/fixtures/optimize)."""
    outputs = _run_as_jupyter(read_notebook(NOTEBOOK_DIR / "optimize.py"))
    errors = [o for o in outputs if o["output_type"] == "error"]
    assert not errors, errors
    html = "".join(str(o.get("data", {}).get("text/html", "")) for o in outputs)
    assert 'id="fig-trajectory"' in html


def test_project_paths_resolve_from_any_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    after = project_path("tests/fixtures/runs/after")
    assert after == str(ROOT / "tests" / "fixtures" / "runs" / "after")
    assert project_path("after") == "after", "a run id stays a run id"
    assert project_path(str(tmp_path)) == str(tmp_path)
    (tmp_path / "local").mkdir()
    assert project_path("local") == "local", "only relative to cwd: left to the caller"
    assert project_path("") == ""
