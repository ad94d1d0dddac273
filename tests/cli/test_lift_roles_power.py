"""``lift --roles`` for renamed conditions, ``report --roles`` checks, ``power`` plan notes."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from evalkit.cli import main
from tests.conftest import TINY

RENAMED = {"none": "plain", "self-load": "skill", "preloaded": "oracle", "stale": "old"}


@pytest.fixture(scope="module")
def renamed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run whose conditions are then renamed in its results file."""
    runs = tmp_path_factory.mktemp("runs")
    argv = ["run", str(TINY), "--runs-dir", str(runs), "--run-id", "r", "--trials", "2",
            "--json", "--no-progress"]
    assert main(argv) == 0
    path = runs / "r" / "results.parquet"
    table = pq.read_table(path)
    conditions = [RENAMED.get(c, c) for c in table.column("condition").to_pylist()]
    index = table.schema.get_field_index("condition")
    table = table.set_column(index, table.schema.field(index), [conditions])
    pq.write_table(table, path)
    return runs


def test_lift_roles_maps_renamed_conditions(
    renamed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["lift", "r", "--runs-dir", str(renamed), "--json", "--resamples", "300"]) == 2
    assert "--roles" in capsys.readouterr().err
    roles = "plain=A,skill=B,oracle=C,old=D"
    argv = ["lift", "r", "--runs-dir", str(renamed), "--json", "--resamples", "300",
            "--roles", roles]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["roles"] == {"A": "plain", "B": "skill", "C": "oracle", "D": "old"}
    realized = next(m for m in data["metrics"] if m["metric"] == "realized_lift")
    success = {s["condition"]: s["estimate"] for s in data["success"]}
    assert realized["estimate"] == pytest.approx(success["skill"] - success["plain"])


@pytest.mark.parametrize(
    ("roles", "message"),
    [("plain", "not CONDITION=ROLE"), ("plain=Z", "not a role"), ("a=A,b=A", "given twice")],
)
def test_bad_roles_exit_2_with_the_fix(
    renamed: Path, capsys: pytest.CaptureFixture[str], roles: str, message: str
) -> None:
    capsys.readouterr()
    for argv in (
        ["lift", "r", "--runs-dir", str(renamed), "--roles", roles],
        ["report", "r", "--kind", "lift", "--runs-dir", str(renamed), "--roles", roles],
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err


def test_power_below_threshold_explains(capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["power", "--effect", "0.04", "--trials", "3", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["n_cases"] is None and "no number of cases" in data["note"]
    assert main(["power", "--effect", "0.04", "--trials", "3"]) == 0
    assert "practical threshold of 5 pp" in capsys.readouterr().out


def test_lift_text_defines_each_metric_in_one_line(
    renamed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each metric shown is defined once, on one line, with the run's own condition names."""
    capsys.readouterr()
    argv = ["lift", "r", "--runs-dir", str(renamed), "--resamples", "300",
            "--roles", "plain=A,skill=B,oracle=C,old=D"]
    assert main(argv) == 0
    out = capsys.readouterr().out
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
