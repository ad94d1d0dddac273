"""``lift --roles`` for renamed conditions, ``report --roles`` checks, ``power`` plan notes."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.conftest import TINY, evalkit_cli

RENAMED = {"none": "plain", "self-load": "skill", "preloaded": "oracle", "stale": "old"}


@pytest.fixture(scope="module")
def renamed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run whose conditions are then renamed in its results file."""
    runs = tmp_path_factory.mktemp("runs")
    argv = ["run", str(TINY), "--runs-dir", str(runs), "--run-id", "r", "--trials", "2",
            "--json", "--no-progress"]
    done = evalkit_cli(*argv)
    assert done.returncode == 0
    path = runs / "r" / "results.parquet"
    table = pq.read_table(path)
    conditions = [RENAMED.get(c, c) for c in table.column("condition").to_pylist()]
    index = table.schema.get_field_index("condition")
    table = table.set_column(index, table.schema.field(index), [conditions])
    pq.write_table(table, path)
    return runs


def test_lift_roles_maps_renamed_conditions(
    renamed: Path
) -> None:
    done = evalkit_cli("lift", "r", "--runs-dir", str(renamed), "--json", "--resamples", "300")
    assert done.returncode == 2
    assert "--roles" in done.stderr
    roles = "plain=A,skill=B,oracle=C,old=D"
    argv = ["lift", "r", "--runs-dir", str(renamed), "--json", "--resamples", "300",
            "--roles", roles]
    done = evalkit_cli(*argv)
    assert done.returncode == 0
    data = json.loads(done.stdout)
    assert data["roles"] == {"A": "plain", "B": "skill", "C": "oracle", "D": "old"}
    realized = next(m for m in data["metrics"] if m["metric"] == "realized_lift")
    success = {s["condition"]: s["estimate"] for s in data["success"]}
    assert realized["estimate"] == pytest.approx(success["skill"] - success["plain"])


@pytest.mark.parametrize(
    ("roles", "message"),
    [("plain", "not CONDITION=ROLE"), ("plain=Z", "not a role"), ("a=A,b=A", "given twice")],
)
def test_bad_roles_exit_2_with_the_fix(
    renamed: Path, roles: str, message: str
) -> None:
    for argv in (
        ["lift", "r", "--runs-dir", str(renamed), "--roles", roles],
        ["report", "r", "--kind", "lift", "--runs-dir", str(renamed), "--roles", roles],
    ):
        done = evalkit_cli(*argv)
        assert done.returncode == 2
        err = done.stderr
        assert message in err and "Traceback" not in err


def test_power_below_threshold_explains() -> None:
    done = evalkit_cli("power", "--effect", "0.04", "--trials", "3", "--json")
    assert done.returncode == 0
    data = json.loads(done.stdout)
    assert data["n_cases"] is None and "no number of cases" in data["note"]
    done = evalkit_cli("power", "--effect", "0.04", "--trials", "3")
    assert done.returncode == 0
    assert "practical threshold of 5 pp" in done.stdout


def test_lift_text_defines_each_metric_in_one_line(
    renamed: Path
) -> None:
    """Each metric shown is defined once, on one line, with the run's own condition names."""
    argv = ["lift", "r", "--runs-dir", str(renamed), "--resamples", "300",
            "--roles", "plain=A,skill=B,oracle=C,old=D"]
    done = evalkit_cli(*argv)
    assert done.returncode == 0
    out = done.stdout
    lines = out.splitlines()
    data_metrics = {"realized_lift", "oracle_lift", "routing_gap", "stale_harm",
                    "regression_rate", "unlock_rate", "routing_efficiency"}
    for metric in data_metrics:
        defined = [line for line in lines if line.startswith(f"  {metric}: ")]
        assert len(defined) == 1, metric
    stale = next(line for line in lines if line.startswith("  stale_harm: "))
    assert "success(old) - success(oracle)" in stale and "fewer passes" in stale
    efficiency = next(line for line in lines if line.startswith("  routing_efficiency: "))
    assert "(skill - plain) / max(0.01, oracle - plain)" in efficiency
    assert "above 1" in efficiency
    assert "pp = percentage points" in out
