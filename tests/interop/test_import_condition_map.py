"""``evalkit import --condition-map``: conditions from the source get names, checked.

Every case runs the real CLI (a subprocess) on committed fixtures: the Inspect plugin A/B
(``inspect-timeouts/``, its condition the task argument ``plugin_url``) and a CSV table.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.results import read_run
from tests.conftest import ROOT, evalkit_cli

FIX = ROOT / "tests" / "fixtures" / "imports"
LOGS = FIX / "inspect-timeouts"
PLUGIN_URL = "http://localhost:9101"


def _import(runs: Path, *extra: str, run_id: str = "ab") -> tuple[int, str, str]:
    done = evalkit_cli("import", LOGS, "--format", "inspect", "--run-id", run_id, "--runs-dir",
                       runs, "--condition-from", "task_arg:plugin_url", *extra)
    return done.returncode, done.stdout, done.stderr


def test_without_a_map_the_conditions_are_the_raw_values(tmp_path: Path) -> None:
    code, _, err = _import(tmp_path)
    assert code == 0, err
    assert set(read_run("ab", tmp_path)["condition"]) == {"false", PLUGIN_URL}


def test_the_map_names_the_conditions_and_the_manifest_keeps_the_source_values(
    tmp_path: Path,
) -> None:
    code, out, err = _import(tmp_path, "--condition-map", f"{PLUGIN_URL}=plugin,false=baseline")
    assert code == 0, err
    assert "  baseline: 24 items, 16.7% passed" in out
    assert "  plugin: 24 items, 66.7% passed" in out
    rows = read_run("ab", tmp_path)
    assert set(rows["condition"]) == {"plugin", "baseline"}
    assert rows["item_key"].str.contains(":plugin:").sum() == 24  # the keys use the names
    manifest = json.loads((tmp_path / "ab" / "manifest.json").read_text())
    assert manifest["conditions"]["plugin"]["source_value"] == PLUGIN_URL
    assert manifest["conditions"]["baseline"]["source_value"] == "false"
    # the renamed run is analysed by its names
    done = evalkit_cli("compare", "ab", "--conditions", "baseline,plugin", "--runs-dir",
                       tmp_path, "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert (data["baseline_label"], data["candidate_label"]) == ("baseline", "plugin")
    # the same items as without the map: the item hashes come from the source, not the name
    code, _, err = _import(tmp_path, run_id="raw")
    assert code == 0, err
    raw = read_run("raw", tmp_path)
    assert sorted(raw["item_hash"]) == sorted(rows["item_hash"])


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        (f"{PLUGIN_URL}=plugin,false=plugin",
         f"conditions '{PLUGIN_URL}' and 'false' would both become 'plugin'"),
        ("http://localhost:9102=plugin,false=baseline",
         "no imported row has condition 'http://localhost:9102'"),
        ("false=baseline", f"condition '{PLUGIN_URL}' has no name"),
        ("false=baseline,false=plain", "condition 'false' is named twice"),
        ("false", "entry 'false=' must be VALUE=NAME"),
        (f"{PLUGIN_URL}=,false=baseline", f"entry '{PLUGIN_URL}=' must be VALUE=NAME"),
    ],
)
def test_a_map_that_does_not_fit_is_a_clear_error(tmp_path: Path, spec: str, said: str) -> None:
    code, out, err = _import(tmp_path, "--condition-map", spec)
    assert code == 2
    assert "Traceback" not in err and out == ""
    assert err.startswith("error: --condition-map / condition_map: ")
    assert said in err
    assert not (tmp_path / "ab").exists(), "no run is written"


def test_a_table_import_takes_the_map_too(tmp_path: Path) -> None:
    table = tmp_path / "r.csv"
    table.write_text("case_id,condition,passed\na,0,fail\na,1,pass\nb,0,pass\nb,1,pass\n")
    done = evalkit_cli("import", table, "--format", "csv", "--run-id", "t", "--runs-dir",
                       tmp_path / "runs", "--condition-map", "0=none,1=preloaded", "--json")
    assert done.returncode == 0, done.stderr
    assert set(read_run("t", tmp_path / "runs")["condition"]) == {"none", "preloaded"}
    manifest = json.loads((tmp_path / "runs" / "t" / "manifest.json").read_text())
    assert manifest["conditions"]["none"]["source_value"] == "0"


def test_the_logs_field_path_names_the_task_argument_too(tmp_path: Path) -> None:
    done = evalkit_cli("import", LOGS, "--format", "inspect", "--run-id", "ab", "--runs-dir",
                       tmp_path, "--condition-from", "task_args.plugin_url", "--condition-map",
                       f"{PLUGIN_URL}=plugin,false=baseline")
    assert done.returncode == 0, done.stderr
    assert set(read_run("ab", tmp_path)["condition"]) == {"plugin", "baseline"}
    wrong = evalkit_cli("import", LOGS, "--format", "inspect", "--run-id", "ab2", "--runs-dir",
                        tmp_path, "--condition-from", "task_args.nope")
    assert wrong.returncode == 2 and "Traceback" not in wrong.stderr
    assert "no task argument 'nope'" in wrong.stderr and "plugin_url" in wrong.stderr
