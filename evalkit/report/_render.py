"""``report``: execute a report notebook with papermill, render it to HTML with nbconvert.

Both files a report leaves (the executed notebook and the page) pass the redactor
(:mod:`evalkit._redact`): runs written by evalkit hold no secret already, but imported runs and
runs from older versions may.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import os
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evalkit._plain import plain_fields
from evalkit._redact import redact_text, redact_value
from evalkit._resources import resource_dir
from evalkit._settings import RUNS_DIR
from evalkit._terminal import underneath
from evalkit._version import __version__
from evalkit.errors import ConfigError, InputError, ReportError, ReportInputError
from evalkit.report._html import add_toc, neutralize_page, sanitize_html
from evalkit.report._notebooks import read_notebook
from evalkit.report._params import validate_parameters
from evalkit.results import RESULTS_FILE, resolve_run_dir

#: Report kinds and the notebook (jupytext percent-format source in ``notebooks/``) of each.
NOTEBOOKS: Mapping[str, str] = {
    "run": "run_report.py",
    "compare": "compare.py",
    "lift": "lift.py",
    "flips": "flips.py",
    "trend": "trend.py",
    "optimize": "optimize.py",
    "labels": "labels.py",
    "judge": "judge.py",
    "ablation": "ablation.py",
    "pairwise": "pairwise.py",
}
KINDS: tuple[str, ...] = tuple(NOTEBOOKS)
TEMPLATE = "evalkit"
#: The item browser's script (in the template's ``static/``), embedded in pages that show one.
BROWSER_SCRIPT = "static/browser.js"
#: What marks an item browser in a notebook's HTML output (see ``_browser.py``).
BROWSER_MARKER = '<section class="ek-browser"'
#: The labelling page's script, embedded in pages that show a labelling table.
LABELS_SCRIPT = "static/labels.js"
#: What marks a labelling table in a notebook's HTML output (see ``_labels.py``).
LABELS_MARKER = '<section class="ek-labels"'
#: Default per-cell execution timeout, in seconds.
CELL_TIMEOUT_S = 600.0
#: What the kernel imports as it starts besides the notebook's own imports: the rich displays
#: and the figures (loaded at a notebook's first display or figure).
WARM_MODULES: tuple[str, ...] = (
    "evalkit.report._rich",
    "evalkit.report._figures",
    "matplotlib.figure",
    "matplotlib.backends.backend_agg",
)


def _input_error_names() -> set[str]:
    names: set[str] = set()
    pending: list[type[BaseException]] = [InputError]
    while pending:
        cls = pending.pop()
        names.add(cls.__name__)
        pending.extend(cls.__subclasses__())
    return names


@dataclass(frozen=True)
class ReportResult:
    """A rendered report.

    Attributes:
        kind: ``run``, ``compare``, ``lift``, ``flips`` or ``trend``.
        html_path: The self-contained HTML page.
        notebook_path: The executed notebook, kept beside the page.
        notebook: The report notebook that was executed.
        parameters: The parameters it was executed with.
        execute_s: Seconds spent executing (kernel start included).
        render_s: Seconds spent rendering HTML.
    """

    kind: str
    html_path: Path
    notebook_path: Path
    notebook: Path
    parameters: dict[str, Any] = field(default_factory=dict)
    execute_s: float = 0.0
    render_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """The ``evalkit report --json`` object.

        Returns:
            ``{"kind", "html_path", "notebook_path", "notebook", "parameters", "execute_s",
            "render_s"}`` with paths as strings.
        """
        return plain_fields(self) | {
            "execute_s": round(self.execute_s, 3),
            "render_s": round(self.render_s, 3),
        }


def _default_output(kind: str, name: str, baseline: str | None) -> Path:
    stem = f"{name}-{kind}" if not baseline else f"{baseline}-vs-{name}-{kind}"
    return Path("reports") / f"{stem}.html"


def _first_line(source: str) -> str:
    for line in source.splitlines():
        if line.strip():
            text = line.strip()
            return text if len(text) <= 120 else text[:117] + "..."
    return ""


def _source_index(notebook: Path, executed_cell: Mapping[str, Any]) -> int | None:
    """Index of the executed cell in the source notebook (matched by cell id, then source)."""
    source = read_notebook(notebook)
    cell_id = executed_cell.get("id")
    for index, cell in enumerate(source.cells):
        if cell_id and cell.get("id") == cell_id:
            return index
    for index, cell in enumerate(source.cells):
        if cell.get("source") == executed_cell.get("source"):
            return index
    return None


def _cell_error(notebook: Path, executed: Path, exc: Any) -> ReportError:
    """Turn papermill's execution error into a :class:`ReportError` naming the cell."""
    import nbformat

    source_line = _first_line(str(getattr(exc, "source", "") or ""))
    index: int | None = None
    try:
        nb = nbformat.read(executed, as_version=4)  # type: ignore[no-untyped-call]
        cells = [
            c for c in nb.cells if "papermill-error-cell-tag" not in c.metadata.get("tags", [])
        ]
        position = int(exc.cell_index)
        if 0 <= position < len(cells):
            index = _source_index(notebook, cells[position])
    except (OSError, ValueError, TypeError, AttributeError):
        index = None
    count = getattr(exc, "exec_count", None)
    ename = str(getattr(exc, "ename", "") or "Error")
    evalue = str(getattr(exc, "evalue", "") or "").strip()
    where = f"cell {index}" if index is not None else "a cell"
    if count is not None:
        where += f" (In [{count}])"
    message = (
        f"report notebook '{notebook.name}' failed in {where}: `{source_line}` raised "
        f"{ename}: {evalue.rstrip('.')}. The executed notebook is kept at '{executed}'."
    )
    kind = ReportInputError if ename in _input_error_names() else ReportError
    return kind(
        message,
        notebook=notebook,
        executed_path=executed,
        cell_index=index,
        execution_count=count if isinstance(count, int) else None,
        source_line=source_line,
        ename=ename,
        evalue=evalue,
    )


def execute(
    notebook: Path,
    executed: Path,
    parameters: Mapping[str, Any],
    *,
    timeout: float | None,
    progress: bool = False,
    kernel: Any = None,
) -> None:
    """Execute a notebook with papermill into ``executed`` (written while it runs and at the end).

    The source (percent-format ``.py`` or ``.ipynb``) is read with jupytext and papermill
    executes the resulting ``NotebookNode``: no ``.ipynb`` copy of the source is written.

    Args:
        notebook: The source notebook.
        executed: Where the executed notebook goes.
        parameters: Validated parameters.
        timeout: Per-cell timeout in seconds (None: no limit).
        progress: Show papermill's cell progress bar on stderr.
        kernel: A kernel started ahead (:func:`evalkit.report._kernel.start_kernel`) to run
            the cells on, shut down when they end; None: one is started here the same way.

    Raises:
        ReportError: A cell failed, timed out, or the kernel died.
    """
    import papermill
    from papermill.exceptions import PapermillExecutionError
    from traitlets.config import Config

    from evalkit.report._engine import register
    from evalkit.report._kernel import KERNEL_CONFIG, start_kernel

    if kernel is None:  # every report kernel starts one way, with the engine's environment
        kernel = start_kernel(executed.parent)
    try:
        papermill.execute_notebook(
            read_notebook(notebook),
            str(executed),
            parameters=dict(parameters),
            kernel_name="python3",
            engine_name=register(),  # the notebook written every few seconds, not every cell
            # tqdm's bar redraws with carriage returns: it writes past the text-only wrapper
            progress_bar={"desc": f"executing {notebook.name}", "unit": "cell",
                          "file": underneath(sys.stderr)} if progress else False,
            log_output=False,
            request_save_on_cell_execute=True,
            cwd=str(executed.parent),
            execution_timeout=timeout,
            config=Config(KERNEL_CONFIG),
            # Every output is in by then: stop the kernel instead of asking it to (~0.3 s).
            shutdown_kernel="immediate",
            km=kernel,
        )
    except PapermillExecutionError as exc:
        redact_notebook(executed)
        raise _cell_error(notebook, executed, exc) from None
    except Exception as exc:  # kernel death, cell timeout, kernel start failure
        redact_notebook(executed)
        raise ReportError(
            f"report notebook '{notebook.name}' could not be executed: "
            f"{type(exc).__name__}: {exc}. Whatever ran is kept at '{executed}'.",
            notebook=notebook,
            executed_path=executed,
            ename=type(exc).__name__,
            evalue=str(exc),
        ) from exc
    redact_notebook(executed)


def redact_notebook(path: Path) -> None:
    """Rewrite an executed notebook with every string redacted (nothing when it is missing).

    Args:
        path: The executed notebook.
    """
    import nbformat

    if not path.is_file():
        return
    nb = nbformat.read(path, as_version=4)  # type: ignore[no-untyped-call]
    redacted = nbformat.from_dict(redact_value(nb))  # type: ignore[no-untyped-call]
    nbformat.write(redacted, path)  # type: ignore[no-untyped-call]


def render_html(
    executed: Path,
    html_path: Path,
    *,
    title: str,
    kind: str,
    notebook: Path,
) -> None:
    """Render an executed notebook as a self-contained, code-free HTML page.

    Args:
        executed: The executed notebook.
        html_path: Where the page goes.
        title: Page title (escaped by the template).
        kind: Report kind (a CSS class on the page).
        notebook: The source notebook (named in the footer).
    """
    import nbformat

    nb = nbformat.read(executed, as_version=4)  # type: ignore[no-untyped-call]
    nb.metadata["title"] = title
    exporter = page_exporter()
    resources = {
        "evalkit": {
            "version": __version__,
            "kind": kind,
            "notebook": notebook.name,
            "executed": executed.name,
            "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        }
    }
    scripts = [
        (resource_dir("templates") / TEMPLATE / name).read_text("utf-8")
        for name, marker in ((BROWSER_SCRIPT, BROWSER_MARKER), (LABELS_SCRIPT, LABELS_MARKER))
        if _shows(nb, marker)
    ]
    if scripts:
        script = "\n".join(scripts)
        resources["evalkit"]["script"] = script
        resources["evalkit"]["script_hash"] = script_hash(script)
    with _EXPORTING:  # one exporter per process: pages rendered from two threads take turns
        body, _ = exporter.from_notebook_node(nb, resources=resources)
    html_path.write_text(neutralize_page(add_toc(redact_text(body))), encoding="utf-8")


#: Held while the shared exporter renders or compiles its template.
_EXPORTING = threading.Lock()


@functools.lru_cache(maxsize=1)
def page_exporter() -> Any:
    """The exporter of every page, made once per process (its template compiled on first use).

    Returns:
        A :class:`~evalkit.report._page.PageExporter` set up with evalkit's template.
    """
    from evalkit.report._page import PageExporter

    return PageExporter(  # type: ignore[no-untyped-call]
        template_name=TEMPLATE,
        extra_template_basedirs=[str(resource_dir("templates"))],
        exclude_input=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
        # One schema check after the preprocessors instead of one after each of the twelve
        # (most of them disabled): the executed notebook was checked when it was read.
        optimistic_validation=True,
        filters={"evalkit_sanitize": sanitize_html},
    )


def prepare_render() -> None:
    """Import what rendering needs and compile the page template ahead of the first page.

    ``report`` runs this in a thread while the kernel executes the notebook (the calling
    process only waits on the kernel then), so the page is rendered by a warm exporter.
    """
    import nbformat

    try:
        nbformat.validate(nbformat.v4.new_notebook())  # type: ignore[no-untyped-call]
        with _EXPORTING:
            _ = page_exporter().template
    except Exception:  # noqa: BLE001 - the render itself raises it, with its message
        return


def script_hash(script: str) -> str:
    """The Content-Security-Policy source allowing exactly this inline script.

    Args:
        script: The text between ``<script>`` and ``</script>``.

    Returns:
        ``sha256-<base64 digest>``.

    Examples:
        >>> script_hash("")
        'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='
    """
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


def _shows(nb: Any, marker: str) -> bool:
    """Whether an executed notebook displays ``marker`` (an item browser, a labelling table)."""
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            markup = output.get("data", {}).get("text/html", "")
            text = "".join(markup) if isinstance(markup, list) else str(markup)
            if marker in text:
                return True
    return False


def _labels_file(labels: Any) -> str:
    """The labels CSV of ``--kind labels``, absolute (the notebook runs in the output folder)."""
    if not labels:
        raise ConfigError(
            "--kind labels needs a labels CSV: pass --labels FILE (make one with 'evalkit judge "
            "sample RUN -n 50 -o labels.csv'; the command line makes one when it is omitted)"
        )
    path = Path(str(labels))
    if not path.is_file():
        raise InputError(
            f"--labels {path}: file not found; make one with 'evalkit judge sample RUN -n 50 "
            "-o labels.csv'"
        )
    return str(path.resolve())


def _runs_root(run: str | os.PathLike[str]) -> Path:
    root = Path(run)
    if not root.is_dir():
        raise InputError(f"--kind trend takes a runs directory, but '{root}' is not a directory.")
    if not any(root.glob(f"*/{RESULTS_FILE}")):
        raise InputError(
            f"--kind trend found no run in '{root}': it needs '{root}/<run>/{RESULTS_FILE}'."
        )
    return root


def report(
    run: str | os.PathLike[str],
    *,
    baseline: str | os.PathLike[str] | None = None,
    kind: str = "run",
    output: str | os.PathLike[str] | None = None,
    runs_dir: str | os.PathLike[str] = RUNS_DIR.default,
    parameters: Mapping[str, Any] | None = None,
    timeout: float | None = CELL_TIMEOUT_S,
    progress: bool = False,
) -> ReportResult:
    """Render a reviewer-facing HTML report of a run (``evalkit report``).

    The kind's notebook (``notebooks/<kind>.py``, read by jupytext) is executed by papermill
    with the run (and baseline) as parameters, then rendered by nbconvert with the
    ``templates/evalkit`` template: one self-contained page (no code, a table of contents, no
    script but the item browser's own, allowed by the page's CSP through its hash). The
    executed notebook is kept beside the page (``FILE.ipynb``), also when a cell fails.

    Args:
        run: Run directory or run id; for ``kind="trend"``, a runs directory.
        baseline: Baseline run: the other side of ``compare`` (without it, ``compare``
            compares two conditions of ``run``: pass ``parameters={"conditions": "A,B"}``),
            or a second run for between-run ``flips``.
        kind: ``"run"``, ``"compare"``, ``"lift"``, ``"flips"`` or ``"trend"``.
        output: The HTML file (default ``reports/<run>-<kind>.html``).
        runs_dir: Where run ids are looked up.
        parameters: More notebook parameters, checked against the notebook's parameters
            cell (``papermill.inspect_notebook``); unknown names are an error.
        timeout: Per-cell timeout in seconds (None: none).
        progress: Say each stage (execute, render) on stderr, with the cells executed so far
            (``evalkit report`` on a terminal).

    Returns:
        A :class:`ReportResult` with the HTML and executed-notebook paths.

    Raises:
        InputError: Unknown kind, run or parameter, or a parameter of the wrong type.
        ReportError: A notebook cell failed (the message names the cell; the executed
            notebook is kept); a :class:`ReportInputError` (also an ``InputError``) when the
            cell stopped on bad input, e.g. an unknown condition.
    """
    if kind not in NOTEBOOKS:
        raise ConfigError(
            f"The value for `kind` must be one of {list(KINDS)}, but {kind!r} was passed."
        )
    given = dict(parameters or {})
    values: dict[str, Any] = {}
    if kind in ("optimize", "ablation"):
        if baseline:
            raise ConfigError(f"--baseline is not used by --kind {kind}.")
        parameter, title_word, study_dir = _study_directory(kind, run, runs_dir)
        values[parameter] = str(study_dir.resolve())
        name, base_name = study_dir.resolve().name, None
        title = f"{title_word} — {name}"
    elif kind == "trend":
        if baseline:
            raise ConfigError("--baseline is not used by --kind trend (it reads every run).")
        root = _runs_root(run)
        values["runs_dir"] = str(root.resolve())
        name, base_name = root.resolve().name, None
        title = f"Trend — {name}"
    else:
        run_dir = resolve_run_dir(run, runs_dir)
        values["run"] = str(run_dir.resolve())
        name, base_name = run_dir.name, None
        if baseline:
            if kind not in ("compare", "flips"):
                raise ConfigError(
                    f"--baseline is used by --kind compare and flips, not by --kind {kind}."
                )
            base_dir = resolve_run_dir(baseline, runs_dir)
            values["baseline"] = str(base_dir.resolve())
            base_name = base_dir.name
        if kind == "labels":
            values["labels"] = _labels_file(given.pop("labels", None))
        title = {
            "labels": f"Labels — {name}",
            "judge": f"Judge calibration — {name}",
            "pairwise": f"Pairwise comparison — {name}",
            "run": f"Run report — {name}",
            "compare": f"Comparison — {base_name} → {name}"
            if base_name
            else f"Comparison — {name}",
            "lift": f"Skill lift — {name}",
            "flips": f"Flip rates — {name}",
        }[kind]
    clash = sorted(set(given) & set(values))
    if clash:
        raise ConfigError(
            f"parameter(s) {clash} are set from the command's arguments (RUN, --baseline); "
            "do not pass them again as notebook parameters."
        )
    notebook = resource_dir("notebooks") / NOTEBOOKS[kind]
    html_path = Path(output) if output is not None else _default_output(kind, name, base_name)
    if html_path.suffix.lower() not in (".html", ".htm"):
        raise ConfigError(f"the report output must be an .html file, not '{html_path}'.")
    html_path.parent.mkdir(parents=True, exist_ok=True)
    executed = html_path.with_suffix(".ipynb")
    start = time.perf_counter()
    kernel = _start_kernel(executed.resolve().parent, notebook)
    try:
        # the kernel boots, and imports what the cells import, while this process reads the
        # notebook and checks the parameters
        checked = validate_parameters(notebook, {**values, **given})
        if progress:
            print(f"executing {notebook.name} ({kind} report)", file=sys.stderr, flush=True)
        warming = threading.Thread(target=prepare_render, name="evalkit-render", daemon=True)
        warming.start()
        execute(
            notebook, executed.resolve(), checked, timeout=timeout, progress=progress,
            kernel=kernel,
        )
        warming.join()
    finally:
        _stop_kernel(kernel)
    middle = time.perf_counter()
    if progress:
        print(f"rendering {html_path.name} (executed in {middle - start:.1f} s)",
              file=sys.stderr, flush=True)
    render_html(executed, html_path, title=title, kind=kind, notebook=notebook)
    end = time.perf_counter()
    return ReportResult(
        kind=kind,
        html_path=html_path,
        notebook_path=executed,
        notebook=notebook,
        parameters=checked,
        execute_s=middle - start,
        render_s=end - middle,
    )


def _start_kernel(cwd: Path, notebook: Path) -> Any:
    """The report's kernel, started now and importing what ``notebook`` imports."""
    from evalkit.report._kernel import start_kernel
    from evalkit.report._notebooks import imported_modules

    return start_kernel(cwd, warm=imported_modules(notebook) + WARM_MODULES)


def _stop_kernel(kernel: Any) -> None:
    """Stop the kernel if the cells never ran on it (a parameter was refused, say)."""
    from evalkit.report._kernel import stop_kernel

    stop_kernel(kernel)


def _study_directory(
    kind: str, run: str | os.PathLike[str], runs_dir: str | os.PathLike[str]
) -> tuple[str, str, Path]:
    """The directory of an optimisation or ablation study: its notebook parameter and title.

    Raises:
        InputError: ``run`` is not a study of that kind (naming its record file).
    """
    from evalkit.ablation import is_ablation
    from evalkit.report._optimize import is_optimization

    study_dir = Path(run) if Path(run).is_dir() else Path(runs_dir) / str(run)
    if kind == "optimize" and not is_optimization(study_dir):
        raise InputError(
            f"--kind optimize takes an optimisation run directory (with optimize.json), "
            f"but '{run}' is not one."
        )
    if kind == "ablation" and not is_ablation(study_dir):
        raise InputError(
            f"--kind ablation takes an ablation study directory (with ablation.json), "
            f"but '{run}' is not one; make one with 'evalkit ablate SUITE --skill NAME'."
        )
    if kind == "optimize":
        return "optimization", "Optimisation", study_dir
    return "study", "Ablation", study_dir
