"""evalkit.compare takes its decision settings as flat keywords or as one CompareOptions."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.analysis import compare
from evalkit.errors import ConfigError, InputError
from evalkit.stats import CompareOptions
from tests.conftest import evalkit_cli

RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "runs"


def test_the_options_object_gives_the_flat_keywords_result() -> None:
    flat = compare("before", "after", runs_dir=RUNS, threshold=0.1, seed=3, n_resamples=2000)
    boxed = compare("before", "after", runs_dir=RUNS,
                    options=CompareOptions(threshold=0.1, seed=3, n_resamples=2000))
    assert boxed.to_dict() == flat.to_dict()
    assert boxed.threshold == 0.1


def test_metric_beside_options_must_agree() -> None:
    scored = CompareOptions(metric="score", n_resamples=2000)
    agreed = compare("before", "after", runs_dir=RUNS, metric="score", options=scored)
    assert agreed.metric == "score"
    assert compare("before", "after", runs_dir=RUNS, options=scored).metric == "score"
    with pytest.raises(InputError, match="pass `metric` inside `options`"):
        compare("before", "after", runs_dir=RUNS, metric="passed", options=scored)
    with pytest.raises(InputError, match="pass `threshold` inside `options`"):
        compare("before", "after", runs_dir=RUNS, threshold=0.2, options=scored)


def test_a_bad_value_names_the_flag_and_the_field_in_python_and_on_the_command_line(
    tmp_path: Path,
) -> None:
    with pytest.raises(ConfigError, match=r"--threshold / threshold must be a number in \[0, 1\]"):
        compare("before", "after", runs_dir=RUNS, threshold=1.5)
    with pytest.raises(ConfigError, match=r"--threshold / threshold must be a number in \[0, 1\]"):
        CompareOptions(threshold=1.5)
    done = evalkit_cli("compare", "before", "after", "--runs-dir", RUNS, "--threshold", "1.5")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--threshold / threshold must be a number in [0, 1]" in done.stderr
    done = evalkit_cli("compare", "before", "after", "--runs-dir", RUNS, "--resamples", "5")
    assert done.returncode == 2
    assert "--resamples / n_resamples must be an integer >= 100" in done.stderr
