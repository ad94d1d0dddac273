"""``evalkit import --format harbor`` against job directories written by the real Harbor.

Harbor (pip ``harbor``) needs Python >= 3.12; this suite runs on 3.11. A session fixture
makes a Python 3.12 venv (``PYENV_VERSION=3.12.1 python3.12``), installs a pinned ``harbor``
release with what its models import (cached in pytest's cache directory, so later sessions
reuse it) and runs ``scripts/make_harbor_jobs.py`` there: Harbor's own ``TrialConfig``/
``TrialResult``/``JobResult`` models write two jobs (with and without skills; 4 tasks x 2
agents x 3 trials each), with agent timeouts, environment failures, graded agent failures
and trials without a verifier result. The tests check that evalkit's rows reproduce every
reward, status and token count of what Harbor wrote. Without any Python >= 3.12 the tests
are skipped, saying so.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import evalkit
from evalkit.errors import ConfigError, InputError
from evalkit.interop import (
    Importer,
    import_results,
    importer_names,
)
from evalkit.results import item_reasons, read_run, read_scores
from tests.conftest import evalkit_cli
from tests.plugin_fixtures import install_entry_points, read_pairs

ROOT = Path(__file__).resolve().parents[2]
WRITER = ROOT / "scripts" / "make_harbor_jobs.py"
#: The Harbor release the jobs are written with. Its models need only what is installed
#: beside it (``--no-deps``): the rest of its dependencies (docker clients, model SDKs, a web
#: server) run trials, which the writer does not, and would take a minute to install.
HARBOR = "harbor==0.26.0"
MODEL_DEPENDENCIES = ("pydantic>=2", "toml", "shortuuid")

# one worker builds the venv and writes the jobs; the others go on with other tests
pytestmark = pytest.mark.xdist_group("harbor")


def _python312() -> list[str] | None:
    """A command that starts Python >= 3.12, or None."""
    env = {**os.environ, "PYENV_VERSION": "3.12.1"}
    for exe in ("python3.12", "python3.13"):
        if shutil.which(exe) is None:
            continue
        probe = subprocess.run(
            [exe, "-c", "import sys; print(sys.version_info >= (3, 12))"],
            capture_output=True, text=True, env=env, timeout=60,
        )
        if probe.returncode == 0 and probe.stdout.strip() == "True":
            return [exe]
    return None


@pytest.fixture(scope="session")
def harbor_python(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The interpreter of a Python 3.12 venv with ``harbor`` installed (built once, cached)."""
    base = _python312()
    if base is None:
        pytest.skip("no Python >= 3.12 on this machine (Harbor needs it): harbor tests skipped")
    cache = getattr(request.config, "cache", None)
    root = cache.mkdir("evalkit-harbor-venv") if cache is not None else (
        tmp_path_factory.getbasetemp() / "harbor-venv"
    )
    root.mkdir(parents=True, exist_ok=True)
    venv = root / "venv"
    python = venv / "bin" / "python"
    env = {**os.environ, "PYENV_VERSION": "3.12.1"}
    with open(root / ".lock", "w") as lock:  # xdist workers build it once between them
        fcntl.flock(lock, fcntl.LOCK_EX)
        check = [str(python), "-c", "import harbor.models.trial.result; import harbor, sys; "
                 f"sys.exit(harbor.__version__ != {HARBOR.split('==')[1]!r})"]
        if not python.exists() or subprocess.run(check, capture_output=True).returncode:
            shutil.rmtree(venv, ignore_errors=True)
            subprocess.run([*base, "-m", "venv", str(venv)], check=True, env=env, timeout=300)
            pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
            subprocess.run([*pip, "--no-deps", HARBOR], check=True, timeout=600)
            subprocess.run([*pip, *MODEL_DEPENDENCIES], check=True, timeout=600)
    return python


@pytest.fixture(scope="session")
def harbor_jobs(harbor_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two Harbor jobs written by Harbor's own models, with ``expected.json`` beside them."""
    out = tmp_path_factory.mktemp("harbor") / "jobs"
    subprocess.run([str(harbor_python), str(WRITER), str(out), "--seed", "3"], check=True,
                   timeout=300)
    return out


def _expected(jobs: Path) -> pd.DataFrame:
    return pd.DataFrame(json.loads((jobs / "expected.json").read_text()))


def _imported(jobs: Path, runs: Path, **options: Any) -> pd.DataFrame:
    result = import_results(
        [jobs / "job-no-skills", jobs / "job-with-skills"], "harbor", "hb", runs_dir=runs,
        **options,
    )
    assert result.items == len(_expected(jobs))
    return read_run(runs / "hb")


def _merged(jobs: Path, rows: pd.DataFrame) -> pd.DataFrame:
    """evalkit's rows beside Harbor's trials (matched on start time within a cell)."""
    expected = _expected(jobs).rename(columns={"task": "case_id"})
    expected["provider"] = expected["agent"] + "/" + expected["model"]
    expected["started_at"] = pd.to_datetime(expected["started_at"], utc=True)
    merged = rows.merge(expected, on=["case_id", "provider", "started_at"], how="outer",
                        indicator=True, suffixes=("", "_harbor"))
    assert (merged["_merge"] == "both").all(), "every Harbor trial is one row, and no other"
    return merged


@pytest.mark.slow
def test_rows_reproduce_every_reward_status_and_token_count(harbor_jobs: Path,
                                                            tmp_path: Path) -> None:
    rows = _imported(harbor_jobs, tmp_path / "runs")
    merged = _merged(harbor_jobs, rows)
    assert len(merged) == 48
    # the condition comes from the trial's skills
    skills = merged["skills"].map(bool)
    assert (merged.loc[skills, "condition"] == "self-load").all()
    assert (merged.loc[~skills, "condition"] == "none").all()
    # tokens and cost from agent_result, latency from the agent-execution timing (Harbor
    # stores timestamps to the microsecond)
    for mine, theirs, tolerance in (("input_tokens", "input_tokens_harbor", 0.0),
                                    ("output_tokens", "output_tokens_harbor", 0.0),
                                    ("cost_usd", "cost_usd_harbor", 1e-12),
                                    ("latency_s", "agent_seconds", 2e-6)):
        pd.testing.assert_series_equal(
            merged[mine].astype("float64"), merged[theirs].astype("float64"),
            check_names=False, rtol=0.0, atol=tolerance,
        )
    # rewards and statuses
    kinds = merged["exception"].fillna("none")
    has_reward = merged["reward"].notna()
    assert {"AgentTimeoutError", "EnvironmentStartTimeoutError", "NonZeroAgentExitCodeError",
            "none"} <= set(kinds), "the fixture holds each failure kind"
    assert (~has_reward & (kinds == "none")).any(), "and a trial without a verifier result"
    ok = merged["status"] == "ok"
    assert (merged.loc[ok, "score"] == merged.loc[ok, "reward"]).all()
    assert (merged.loc[ok, "passed"] == (merged.loc[ok, "reward"] >= 1.0)).all()
    assert set(kinds[ok]) <= {"none", "NonZeroAgentExitCodeError"}
    timeout = kinds == "AgentTimeoutError"
    assert (merged.loc[timeout, "status"] == "timeout").all()
    assert not merged.loc[timeout, "passed"].any(), "an agent timeout is a failure"
    assert (merged.loc[timeout, "score"] == merged.loc[timeout, "reward"]).all()
    infra = kinds == "EnvironmentStartTimeoutError"
    assert (merged.loc[infra, "status"] == "error").all()
    assert merged.loc[infra, "error_message"].str.startswith("infrastructure:").all()
    no_verifier = ~has_reward & (kinds == "none")
    assert (merged.loc[no_verifier, "status"] == "error").all()
    assert (merged.loc[no_verifier, "error_class"] == "NoVerifierResult").all()
    assert not merged.loc[~has_reward, "passed"].any(), "no verifier result is never a pass"
    failed = kinds != "none"
    assert (merged.loc[failed, "error_class"] == kinds[failed]).all()
    # model and harness
    assert set(rows["model"]) == {"anthropic/claude-opus-4-5", "openai/gpt-5.5"}
    assert set(rows["provider_version"]) == {"2.1.3", "0.17.2"}


def test_every_trial_says_why_from_its_verifier_or_its_exception(harbor_jobs: Path,
                                                                  tmp_path: Path) -> None:
    """The reason of a graded trial is its reward against 1.0 and its verifier's last lines."""
    rows = _imported(harbor_jobs, tmp_path / "runs")
    reasons = item_reasons(rows, read_scores("hb", tmp_path / "runs"))
    merged = _merged(harbor_jobs, rows.assign(reason=reasons["reason"].to_numpy(),
                                              cause=reasons["cause"].to_numpy()))
    graded = merged["status"] != "error"
    with_reward = graded & merged["reward"].notna()
    for _, trial in merged[with_reward].iterrows():
        last = trial["verifier_last_line"].strip("= ")
        passed = trial["reward"] >= 1.0
        head = (f"passed on verifier reward {trial['reward']:.2f} >= 1.00" if passed
                else f"verifier failed: reward {trial['reward']:.2f} < 1.00")
        if trial["status"] == "timeout":  # the timeout explains it; a failed verifier follows
            assert trial["cause"] == "timeout"
            assert trial["reason"].startswith("timeout: AgentTimeoutError: agent: ")
            assert (head in trial["reason"]) != passed
        else:
            assert trial["reason"].startswith(head), trial["reason"]
            assert trial["reason"].endswith(last)
            graded_failure = trial["exception"] == "NonZeroAgentExitCodeError"
            assert (f"{head} (agent ended with NonZeroAgentExitCodeError: "
                    in trial["reason"]) == graded_failure
    errors = merged[~graded]
    assert (errors["cause"] == "error: " + errors["error_class"]).all()
    assert errors["reason"].str.contains("infrastructure: |the verifier did not run").all()


def test_trials_are_numbered_by_start_time_within_a_cell(harbor_jobs: Path,
                                                          tmp_path: Path) -> None:
    rows = _imported(harbor_jobs, tmp_path / "runs")
    for _, cell in rows.groupby(["case_id", "condition", "provider"]):
        ordered = cell.sort_values("trial")
        assert ordered["trial"].tolist() == list(range(len(cell))) == [0, 1, 2]
        assert ordered["started_at"].is_monotonic_increasing


def test_condition_from_job_and_task_path(harbor_jobs: Path, tmp_path: Path) -> None:
    rows = _imported(harbor_jobs, tmp_path / "a", condition_from="job")
    assert set(rows["condition"]) == {"job-no-skills", "job-with-skills"}
    rows = _imported(harbor_jobs, tmp_path / "b",
                     condition_from="task-path:tasks_(no_skills|with_skills)/")
    assert set(rows["condition"]) == {"no_skills", "with_skills"}
    with pytest.raises(InputError, match=r"does not match --condition-from task-path:nope"):
        _imported(harbor_jobs, tmp_path / "c", condition_from="task-path:nope")
    with pytest.raises(InputError, match="'skills' \\(default\\), 'job' or 'task-path:REGEX'"):
        _imported(harbor_jobs, tmp_path / "d", condition_from="model")


def test_pass_threshold(harbor_jobs: Path, tmp_path: Path) -> None:
    rows = _imported(harbor_jobs, tmp_path / "runs", pass_threshold=0.0)
    ok = rows["status"] == "ok"
    assert rows.loc[ok, "passed"].all(), "every graded trial reaches a reward of 0"
    with pytest.raises(ConfigError, match="--pass-threshold applies to harbor"):
        import_results(harbor_jobs / "job-no-skills", "csv", "x", runs_dir=tmp_path / "x",
                       pass_threshold=0.5)


def test_imported_jobs_compare_by_provider(harbor_jobs: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    argv = ["import", str(harbor_jobs / "job-no-skills"), str(harbor_jobs / "job-with-skills"),
            "--format", "harbor", "--run-id", "hb", "--runs-dir", str(runs), "--json"]
    done = evalkit_cli(*argv)
    assert done.returncode == 0
    assert json.loads(done.stdout)["items"] == 48
    done = evalkit_cli("compare", "hb", "--conditions", "none,self-load", "--runs-dir", str(runs),
                       "--json", "--resamples", "500")
    assert done.returncode == 0
    out = json.loads(done.stdout)
    assert set(out["by_provider"]) == {"claude-code/anthropic/claude-opus-4-5",
                                       "codex/openai/gpt-5.5"}
    assert out["n_cases"] == 4, "each task counts once, pooled over the two providers"


def test_a_trial_directory_can_be_passed_directly(harbor_jobs: Path, tmp_path: Path) -> None:
    trial = next(p for p in sorted((harbor_jobs / "job-no-skills").iterdir()) if p.is_dir())
    result = import_results(trial, "harbor", "one", runs_dir=tmp_path)
    assert result.items == 1


def test_a_copied_trial_is_not_counted_twice(harbor_jobs: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(harbor_jobs / "job-no-skills", copy)
    once = import_results(harbor_jobs / "job-no-skills", "harbor", "once", runs_dir=tmp_path)
    both = import_results([harbor_jobs / "job-no-skills", copy], "harbor", "x",
                          runs_dir=tmp_path)
    assert both.items == once.items  # the copy's trials count once, with a warning
    assert any("repeat a trial already read" in w for w in both.warnings)


# ---- errors that need no Harbor -----------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ('{"case_id": "a", "passed": true}', "not a Harbor trial result"),
        ("[1, 2]", "a JSON list, not an object"),
        ('{"n_total_trials": 3, "id": "x", "stats": {}}', "Harbor job summary"),
        ("{not json", "not valid JSON"),
        ('{"task_name": "t", "trial_name": "x", "config": {"task": {}}, "agent_info": 3}',
         "agent_info"),
    ],
)
def test_not_a_harbor_result_exits_2_naming_the_file(
    content: str, needle: str, tmp_path: Path
) -> None:
    bad = tmp_path / "trial" / "result.json"
    bad.parent.mkdir()
    bad.write_text(content)
    argv = ["import", str(bad), "--format", "harbor", "--run-id", "x", "--runs-dir",
            str(tmp_path / "runs")]
    done = evalkit_cli(*argv)
    assert done.returncode == 2
    err = done.stderr
    assert str(bad) in err and needle in err and "Traceback" not in err


def test_a_misspelled_format_lists_the_formats(tmp_path: Path) -> None:
    proc = evalkit_cli("import", tmp_path / "missing", "--format", "harbour", "--run-id", "x",
                       "--runs-dir", tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "'harbour' was passed" in proc.stderr and "harbor" in proc.stderr


# ---- the registry -------------------------------------------------------------------------


def test_a_registered_format_imports_and_is_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit.interop import _import_registry

    monkeypatch.setattr(_import_registry.IMPORTERS, "registered", {})
    source = tmp_path / "r.pairs"
    source.write_text("a none fail\na skill pass\nb none pass\n")
    evalkit.register("importer", "pairs-test", Importer("pairs-test", read_pairs, (".pairs",),
                                                        "pairs files"))
    assert "pairs-test" in importer_names()
    result = import_results(tmp_path, "pairs-test", "p", runs_dir=tmp_path / "runs")
    assert (result.items, result.pass_rate) == (3, pytest.approx(2 / 3))
    with pytest.raises(ConfigError, match="--condition-from applies to inspect, promptfoo, harbor"):
        import_results(source, "pairs-test", "q", runs_dir=tmp_path / "runs",
                       condition_from="x")


def test_an_entry_point_format_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A package publishing ``importer.NAME`` in ``evalkit.plugins`` adds a format.

    The package is a real dist-info on sys.path.
    """
    from evalkit.interop import _import_registry

    package = tmp_path / "site"
    (package / "pairs_plugin").mkdir(parents=True)
    (package / "pairs_plugin" / "__init__.py").write_text(
        "from evalkit.interop import Importer\n"
        "IMPORTER = Importer('pairs-ep', 'tests.plugin_fixtures:read_pairs', ('.pairs',),\n"
        "                    'pairs')\n"
    )
    install_entry_points(package, "pairs-plugin", "evalkit.plugins",
                         "importer.pairs-ep = pairs_plugin:IMPORTER\n")
    monkeypatch.syspath_prepend(str(package))
    _import_registry.IMPORTERS.reload_plugins()
    try:
        assert "pairs-ep" in importer_names()
        source = tmp_path / "x.pairs"
        source.write_text("a none pass\n")
        assert import_results(source, "pairs-ep", "e", runs_dir=tmp_path / "runs").items == 1
    finally:
        _import_registry.IMPORTERS.reload_plugins()


def test_jsonl_on_a_harbor_result_json_points_to_harbor(tmp_path: Path) -> None:
    trial = tmp_path / "trial" / "result.json"
    trial.parent.mkdir()
    trial.write_text('{\n  "task_name": "t",\n  "trial_name": "x"\n}\n')
    with pytest.raises(InputError, match="imports with --format harbor"):
        import_results(trial, "jsonl", "x", runs_dir=tmp_path / "runs")


# ---- timeouts the verifier graded, and refusals that name every bad trial -----------------


def _with_a_passing_timeout(jobs: Path, tmp_path: Path) -> tuple[Path, str]:
    """A copy of the jobs whose agent-timeout trial the verifier graded with reward 1."""
    copy = tmp_path / "jobs"
    shutil.copytree(jobs, copy)
    timeouts = [
        path for path in sorted(copy.glob("job-*/*/result.json"))
        if (json.loads(path.read_text()).get("exception_info") or {}).get("exception_type")
        == "AgentTimeoutError"
    ]
    assert timeouts, "the fixture holds an agent timeout"
    data = json.loads(timeouts[0].read_text())
    assert data["verifier_result"]["rewards"], "which the verifier graded"
    data["verifier_result"]["rewards"] = {"reward": 1.0}
    timeouts[0].write_text(json.dumps(data))
    return copy, data["trial_name"]


@pytest.mark.parametrize(
    ("policy", "status", "passed"),
    [(None, "timeout", False), ("failed", "timeout", False), ("graded", "ok", True),
     ("error", "error", False)],
)
def test_timeout_policy_decides_a_graded_agent_timeout(
    harbor_jobs: Path, tmp_path: Path, policy: str | None, status: str, passed: bool
) -> None:
    jobs, trial_name = _with_a_passing_timeout(harbor_jobs, tmp_path)
    runs = tmp_path / "runs"
    result = import_results(
        [jobs / "job-no-skills", jobs / "job-with-skills"], "harbor", "hb", runs_dir=runs,
        timeout_policy=policy,
    )
    assert result.items == 48
    rows = read_run(runs / "hb")
    scores = read_scores("hb", runs)
    reasons = item_reasons(rows, scores).set_index("item_key")["reason"]
    row = rows[rows["error_class"] == "AgentTimeoutError"]
    assert len(row) == 1, f"one agent timeout ({trial_name}) whatever the policy"
    timeout = row.iloc[0]
    assert (timeout["status"], bool(timeout["passed"])) == (status, passed)
    assert timeout["score"] == 1.0, "the verifier's reward is kept whatever the policy"
    reason = reasons[timeout["item_key"]]
    if status == "ok":
        assert reason.startswith("passed on verifier reward 1.00 >= 1.00 (agent ended with "
                                 "AgentTimeoutError")
    elif status == "error":
        assert "the verifier then graded it: reward 1.00; --timeout-policy error" in reason
    else:
        assert reason.startswith("timeout: AgentTimeoutError: agent: ")
    said = [w for w in result.warnings if "timed out and were still graded" in w]
    assert len(said) == 1 and said[0].startswith("1 trial(s)")
    assert f"--timeout-policy {policy or 'failed'}" in said[0]
    # every other trial is what the default makes of it
    others = rows[rows["item_key"] != timeout["item_key"]]
    default = _imported(harbor_jobs, tmp_path / "default")
    default = default[default["item_key"] != timeout["item_key"]]
    pd.testing.assert_series_equal(
        others.set_index("item_key")["status"].sort_index(),
        default.set_index("item_key")["status"].sort_index(),
    )


def test_refusal_names_every_bad_trial_up_to_a_cap(harbor_jobs: Path, tmp_path: Path) -> None:
    copy = tmp_path / "jobs"
    shutil.copytree(harbor_jobs, copy)
    trials = sorted(copy.glob("job-*/*/result.json"))
    broken = trials[:23]
    for n, path in enumerate(broken):
        if n % 2:
            path.write_text("{not json")
        else:
            data = json.loads(path.read_text())
            del data["agent_info"]
            path.write_text(json.dumps(data))
    done = evalkit_cli(
        "import", copy / "job-no-skills", copy / "job-with-skills", "--format", "harbor",
        "--run-id", "x", "--runs-dir", tmp_path / "runs",
    )
    assert done.returncode == 2
    err = done.stderr
    assert "Traceback" not in err
    assert f"23 of {len(trials)} Harbor trial result(s) cannot be imported; nothing was " \
        "imported" in err
    named = [path for path in broken if str(path) in err]
    assert len(named) == 20 and "... and 3 more" in err
    assert "not valid JSON" in err and "no agent_info: not a Harbor trial result" in err
    assert not (tmp_path / "runs" / "x").exists()
