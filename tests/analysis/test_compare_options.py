"""evalkit.compare takes its decision settings as flat keywords and builds one CompareOptions."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.analysis import compare
from evalkit.errors import ConfigError
from evalkit.stats import CompareOptions
from tests.conftest import evalkit_cli

RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "runs"


def test_the_flat_keywords_build_the_one_options_object() -> None:
    flat = compare("before", "after", runs_dir=RUNS, threshold=0.1, seed=3, n_resamples=2000)
    assert (flat.threshold, flat.delta.confidence) == (0.1, 0.95)
    with pytest.raises(TypeError, match="unexpected keyword argument 'options'"):
        compare("before", "after", runs_dir=RUNS,  # type: ignore[call-arg]
                options=CompareOptions(threshold=0.1, seed=3, n_resamples=2000))


def test_a_bad_metric_is_refused_when_the_options_are_built() -> None:
    with pytest.raises(ConfigError, match="metric"):
        compare("before", "after", runs_dir=RUNS, metric="nonsense", n_resamples=2000)


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
