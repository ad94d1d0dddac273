"""``evalkit ablate`` on a skill whose components carry known effects (real simulated runs).

The fixture suite ``tests/fixtures/suites/ablation`` is built so that, under the simulated
agent, ``section/quoting`` and ``file/references/waiting.md`` are necessary (each covers one
of the two patterns every case is scored on), ``section/legacy-tips`` is harmful (its advice
matches the forbidden pattern), and ``section/history``, ``section/waiting`` and the
description are inert.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from evalkit.ablation import AblationConfig, AblationResult, ablate, read_ablation
from evalkit.cases import directory_hash
from evalkit.errors import InputError
from evalkit.results import load_manifest, read_run
from tests.conftest import evalkit_cli

# the module-scoped fixtures (seconds each) are built once, by one worker, for all its tests
pytestmark = pytest.mark.xdist_group("study")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "suites"
SUITE = FIXTURES / "ablation"
INERT = ("description", "section/history", "section/waiting")


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> AblationResult:
    runs = tmp_path_factory.mktemp("runs")
    config = AblationConfig(
        skill="shell", splits=("dev",), runs_dir=runs, run_id="study", progress=False,
        backend="threading",
    )
    return ablate(SUITE, config)


def test_known_effects_are_recovered(study: AblationResult) -> None:
    table = study.components.set_index("component")
    assert sorted(study.necessary) == ["file/references/waiting.md", "section/quoting"]
    assert study.harmful == ["section/legacy-tips"]
    for component in INERT:
        row = table.loc[component]
        assert row["verdict"] == "no detectable effect"
        # the minimum detectable effect is stated, and it is a real number of the scale
        assert 0 < row["mde"] < 0.5
        assert row["ci_low"] < row["estimate"] < row["ci_high"]
    assert (table["n_cases"] == 60).all()
    assert table["confidence"].iloc[0] == pytest.approx(1 - 0.05 / 6)


def test_every_ablation_is_a_real_copy_in_the_manifest(study: AblationResult) -> None:
    manifest = load_manifest(study.study_dir / "study")
    assert manifest is not None and manifest.ablation is not None
    record = manifest.ablation
    assert record.full_tree_hash == directory_hash(study.study_dir / "skills" / "full")
    assert len(record.components) == 6
    for component in record.components:
        copy = study.study_dir / component.path
        assert (copy / "SKILL.md").is_file()
        assert component.tree_hash == directory_hash(copy)
        assert component.condition in manifest.conditions
    frame = read_run(study.study_dir / "study")
    ablated = {c.condition for c in record.components}
    assert set(frame["condition"]) == {"none", "preloaded", *ablated}
    # each ablation is its own skill text: its items are not the full skill's
    hashes = frame.groupby("condition")["skill_hash"].first()
    assert hashes.nunique() == len(hashes)


def test_cost_beside_effect(study: AblationResult) -> None:
    table = study.components
    assert (table["tokens_source"] == "provider").all()  # the simulator reports input tokens
    quoting = table.set_index("component").loc["section/quoting"]
    assert quoting["tokens"] > 0
    assert quoting["lift_per_1k_tokens"] == pytest.approx(
        quoting["estimate"] / quoting["tokens"] * 1000
    )
    assert table.set_index("component").loc["section/quoting", "rank_effect"] in (1, 2)
    frame = read_run(study.study_dir / "study")
    full = frame.loc[frame["condition"] == "preloaded", "input_tokens"].mean()
    none = frame.loc[frame["condition"] == "none", "input_tokens"].mean()
    assert study.overhead_tokens == pytest.approx(full - none)
    # preloading injects the skill without its frontmatter, so the description costs nothing
    assert table.set_index("component").loc["description", "tokens"] == 0


def test_result_round_trips_through_ablation_json(study: AblationResult) -> None:
    again = read_ablation(study.study_dir)
    assert again.to_dict() == json.loads(json.dumps(study.to_dict()))
    html = again._repr_html_()
    assert html is not None and "section/legacy-tips" in html and "harmful" in html


def test_unknown_component_is_exit_2_naming_it(
    tmp_path: Path
) -> None:
    done = evalkit_cli("ablate", str(SUITE), "--skill", "shell", "--component", "section/nope",
                       "--runs-dir", str(tmp_path))
    code = done.returncode
    err = done.stderr
    assert code == 2
    assert "'section/nope'" in err and "section/quoting" in err and "Traceback" not in err


def test_one_component_skill_is_exit_2_naming_it(
    tmp_path: Path
) -> None:
    done = evalkit_cli("ablate", str(FIXTURES / "ablation-one"), "--skill", "plain",
                       "--runs-dir", str(tmp_path))
    code = done.returncode
    err = done.stderr
    assert code == 2
    assert "skill 'plain' has one component (description)" in err
    assert not any(tmp_path.iterdir())  # nothing was written


def test_list_shows_tokens() -> None:
    done = evalkit_cli("ablate", str(SUITE), "--skill", "shell", "--list", "--json")
    assert done.returncode == 0
    listed = json.loads(done.stdout)["components"]
    quoting = next(c for c in listed if c["id"] == "section/quoting")
    text = '## Quoting\n- Quote every variable expansion, as in "$file", so names with spaces '
    assert quoting["tokens"] == math.ceil(len(text + "survive.") / 4)


def test_self_load_mode_runs_the_copies_as_self_load_conditions(
    tmp_path: Path
) -> None:
    cases = [arg for i in range(6) for arg in ("--case", f"task-{i:02d}")]
    done = evalkit_cli("ablate", str(SUITE), "--skill", "shell", "--mode", "self-load", "--json",
                       "--component", "section/quoting", "--component", "section/history",
                       "--runs-dir", str(tmp_path), "--run-id", "sl", "--backend", "threading",
                       "--no-progress", "--trials", "1", *cases)
    code = done.returncode
    out = json.loads(done.stdout)  # one JSON object, nothing else on stdout
    assert code == 0
    assert out["mode"] == "self-load" and out["full_condition"] == "self-load"
    assert [c["component"] for c in out["components"]] == ["section/quoting", "section/history"]
    manifest = load_manifest(tmp_path / "sl" / "study")
    assert manifest is not None
    for record in manifest.conditions.values():
        assert record.mode in ("none", "self-load")
    frame = read_run(tmp_path / "sl" / "study")
    assert frame["case_id"].nunique() == 6
    assert len(frame) == 6 * 4


def test_damaged_ablation_json_is_an_input_error_naming_the_file(
    tmp_path: Path
) -> None:
    (tmp_path / "ablation.json").write_text('{"skill": "shell"', encoding="utf-8")
    with pytest.raises(InputError, match="ablation.json: damaged ablation record"):
        read_ablation(tmp_path)
    done = evalkit_cli("report", str(tmp_path), "--kind", "ablation", "-o",
                       str(tmp_path / "r.html"))
    assert done.returncode == 2
    err = done.stderr
    assert "damaged ablation record" in err and "Traceback" not in err


def test_copies_past_the_quota_are_refused_before_any_is_written(tmp_path: Path) -> None:
    """The attack: a big reference times many components. Here a 2 MB reference and a
    quota of 5 MB: the full copy and one per component would need about 12 MB."""
    suite = tmp_path / "suite"
    import shutil

    shutil.copytree(SUITE, suite)
    reference = suite / "skills" / "shell" / "references" / "big.md"
    reference.write_bytes(b"x" * 2_000_000)
    runs = tmp_path / "runs"
    done = evalkit_cli("ablate", str(suite), "--skill", "shell", "--copies-quota", "5MB",
                       "--runs-dir", str(runs))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "writes" in done.stderr and "more than the 5,000,000 allowed" in done.stderr
    assert "--copies-quota" in done.stderr
    assert not runs.exists() or not any(runs.rglob("SKILL.md"))  # no copy was written
