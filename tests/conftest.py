"""Shared fixtures: paths to the bundled suites, a scratch runs directory, the CLI runners.

Running the suite in parallel (``make test``: ``pytest -n`` two workers per core for most, then a
serial pass):

* Tests that must have the machine to themselves (they send signals and wait on timing,
  measure memory, or measure I/O efficiency) carry ``@pytest.mark.serial`` (on a test, or
  ``pytestmark = pytest.mark.serial`` for a module). ``make test`` runs them in a second pass
  without xdist, after the parallel pass (``-m "not serial"``); both passes must pass, and a
  pass that collects nothing (exit 5) fails too.
* Tests that share an expensive module- or session-scoped fixture (a built wheel, a fresh venv)
  carry ``@pytest.mark.xdist_group("NAME")``: ``--dist loadgroup`` sends them to one worker
  (tests/test_xdist_groups.py checks that it still does: a pytest release once broke it).
* Tests that take more than 5 s here carry ``@pytest.mark.slow``: ``make test-fast`` leaves them
  (and the ``serial`` ones) out for the edit-test loop, ``make test`` runs them. At the end of a
  run, tests over 5 s without the mark are listed (a note, never a failure: timing varies by
  machine); ``scripts/mark_slow_tests.py`` marks them from a ``--durations=0`` report.
* Call the CLI through :func:`evalkit_cli` (in this process: no interpreter start-up, no
  import cost) unless the process itself is what is tested (exit on a signal, environment
  variables, import cost, locks held by another process, resource limits): then
  :func:`evalkit_process` (``python -m evalkit`` in a child). Both return a :class:`CliResult`
  with ``returncode``, ``stdout`` and ``stderr``, like ``subprocess.CompletedProcess``.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser

ROOT = Path(__file__).resolve().parent.parent
#: Seconds (setup, call and teardown together) over which a test belongs in the ``slow`` tier.
SLOW_TEST_S = 5.0
_unmarked_seconds: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Add up the time of each test not marked ``slow`` or ``serial`` (on the controller too)."""
    if "slow" not in report.keywords and "serial" not in report.keywords:
        _unmarked_seconds[report.nodeid] = _unmarked_seconds.get(report.nodeid, 0.0) + (
            report.duration
        )


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Name the tests over :data:`SLOW_TEST_S` that ``make test-fast`` still runs."""
    over = sorted(((s, n) for n, s in _unmarked_seconds.items() if s > SLOW_TEST_S), reverse=True)
    if over:
        terminalreporter.write_line(
            f"note: {len(over)} test(s) took over {SLOW_TEST_S:g} s without @pytest.mark.slow "
            "(make test-fast runs them; scripts/mark_slow_tests.py marks them from a "
            "--durations=0 report): " + ", ".join(f"{n} ({s:.1f} s)" for s, n in over[:10])
        )
TINY = ROOT / "tests" / "fixtures" / "suites" / "tiny"
DEMO = ROOT / "cases" / "demo"


#: Resets SIGINT to its default and execs the rest of the command line (exec keeps SIG_DFL).
_SIGINT_DEFAULT = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)


def with_default_sigint(argv: list[str]) -> list[str]:
    """``argv`` started with SIGINT at its default, as a terminal's foreground job has it.

    A process started from a background job of a non-interactive shell (``make test &``, a CI
    step) inherits SIGINT *ignored*, and Python then installs no ``KeyboardInterrupt`` handler:
    the Ctrl-C a test sends would be ignored, as it should be there. Tests that send SIGINT
    start their process through this so they test the terminal's case wherever they run.
    """
    return [sys.executable, "-c", _SIGINT_DEFAULT, *argv]


@pytest.fixture
def tiny_suite(tmp_path: Path) -> Path:
    """A writable copy of the tiny suite."""
    dest = tmp_path / "tiny"
    shutil.copytree(TINY, dest)
    return dest


@pytest.fixture
def runs_dir(tmp_path: Path) -> Path:
    """An empty runs directory."""
    path = tmp_path / "runs"
    path.mkdir()
    return path


def until_verdict_args(runs_dir: Path, run_id: str, *extra: str) -> list[str]:
    """``run cases/demo --until-verdict --round-cases 5`` (simulated agent, no cache): CLI args."""
    return [
        "run",
        str(DEMO),
        "--conditions",
        "none,preloaded",
        "--until-verdict",
        "--round-cases",
        "5",
        "--no-progress",
        "--no-cache",
        "--runs-dir",
        str(runs_dir),
        "--run-id",
        run_id,
        *extra,
    ]


def until_verdict_argv(runs_dir: Path, run_id: str, *extra: str) -> list[str]:
    """:func:`until_verdict_args` as a child's command line (``python -m evalkit ...``)."""
    return [sys.executable, "-m", "evalkit", *until_verdict_args(runs_dir, run_id, *extra)]


class CliResult(NamedTuple):
    """What one ``evalkit ...`` call gave: exit code and both streams."""

    returncode: int
    stdout: str
    stderr: str


def evalkit_cli(
    *args: str | Path, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> CliResult:
    """``evalkit ARGS`` in this process (``evalkit.cli.main``), streams captured; cwd ROOT.

    The working directory, ``os.environ`` (``--no-sandbox`` sets ``EVALKIT_SANDBOX``) and
    ``sys.argv`` are restored afterwards, so calls do not leak into one another.
    """
    from evalkit.cli import main
    from evalkit.sandbox import _policy

    argv = [str(a) for a in args]
    if "--no-sandbox" in argv or "EVALKIT_SANDBOX" in (env or {}):
        # loky's reusable workers would keep the switched-off sandbox for later tests
        raise ValueError("switching the sandbox off: use evalkit_process, not evalkit_cli")
    saved_env, saved_cwd, saved_argv = dict(os.environ), os.getcwd(), sys.argv
    saved_warned = _policy._warned
    out, err = io.StringIO(), io.StringIO()
    try:
        os.environ.update(env or {})
        sys.argv = ["evalkit", *argv]  # as the console script sees it (a run records it)
        _policy._warned = False  # the sandbox-off warning is once per process: once per call
        os.chdir(cwd or ROOT)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:  # argparse: usage errors and --help
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        sys.argv = saved_argv
        _policy._warned = saved_warned
    return CliResult(code, out.getvalue(), err.getvalue())


def evalkit_process(
    *args: str | Path,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 600,
    inherit_env: bool = True,
    preexec_fn: Callable[[], object] | None = None,
) -> CliResult:
    """``python -m evalkit ARGS`` in a child process (this checkout first on PYTHONPATH).

    Args:
        args: The command's arguments.
        cwd: Its working directory (default the checkout).
        env: Added to this process's environment (``EVALKIT_SANDBOX`` left out unless given);
            with ``inherit_env=False``, the child's whole environment (a test of what reaches
            the child), with this checkout's PYTHONPATH when it names none.
        timeout: Seconds before the child is killed and the test fails.
        inherit_env: Whether the child starts from this process's environment.
        preexec_fn: Run in the child before it starts (resource limits: ``RLIMIT_FSIZE``, ...).
    """
    if inherit_env:
        base = {k: v for k, v in os.environ.items() if k != "EVALKIT_SANDBOX"}
        child_env = {**base, "PYTHONPATH": str(ROOT), **(env or {})}
    else:
        child_env = {"PYTHONPATH": str(ROOT), **(env or {})}
    done = subprocess.run(
        [sys.executable, "-m", "evalkit", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        env=child_env,
        timeout=timeout,
        check=False,
        preexec_fn=preexec_fn,  # resource limits, set in the child before it execs
    )
    return CliResult(done.returncode, done.stdout, done.stderr)


#: Headless Chromium flags of the browser tests (no GPU, no shared-memory limits in CI, no
#: traffic of its own: a page's every request is its own).
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-dev-shm-usage",
]


@pytest.fixture(scope="session")
def chromium() -> Iterator[Browser]:
    """Debian's Chromium driven by playwright (``playwright install`` is not used).

    One browser per test process (each xdist worker), shared by every test that opens a page:
    tests isolate themselves with their own page or context. It is defined here, once: two
    session fixtures would start two sync Playwright drivers in one thread, and the second
    refuses to start inside the first's event loop. ``EVALKIT_CHROMIUM`` names another
    executable.
    """
    from playwright.sync_api import sync_playwright

    executable = os.environ.get("EVALKIT_CHROMIUM") or shutil.which("chromium")
    if executable is None or not Path(executable).exists():
        pytest.fail("chromium is not on PATH: install it with `bash scripts/install-chromium.sh`")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield browser
        browser.close()
