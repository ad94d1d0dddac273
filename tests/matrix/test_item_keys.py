"""Work-item keys are injective in their parts, whatever the ids hold, end to end."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given, strategies as st

import evalkit
from evalkit.interop import import_results
from evalkit.matrix import ItemKeyParts, item_key, parse_item_key
from evalkit.runner import RunConfig, run

# Parts drawn mostly from the characters the escaping is about, so collisions would be found.
PART = st.text(alphabet=st.sampled_from(":%3A25a/b") | st.characters(), max_size=8)
PARTS = st.builds(ItemKeyParts, PART, PART, PART, PART, st.integers(0, 10**6))


@given(PARTS)
def test_parse_inverts_build(parts: ItemKeyParts) -> None:
    assert parse_item_key(item_key(*parts)) == parts


@given(PARTS, PARTS)
def test_build_is_injective(first: ItemKeyParts, second: ItemKeyParts) -> None:
    assert (item_key(*first) == item_key(*second)) == (first == second)


def test_the_colliding_pair_gets_two_keys() -> None:
    one = item_key("prompt", "q1:x", "m", "simulated", 0)
    other = item_key("prompt", "q1", "x:m", "simulated", 0)
    assert one != other
    assert parse_item_key(one).case_id == "q1:x" and parse_item_key(other).condition == "x:m"


def test_keys_without_a_separator_are_unchanged() -> None:
    assert item_key("execution", "make-report", "self-load", "claude_code", 3) == (
        "execution:make-report:self-load:claude_code:3"
    )
    assert item_key("prompt", "a/b", "c.d", "e-f", 0) == "prompt:a/b:c.d:e-f:0"


@pytest.mark.parametrize("key", [
    "prompt:a:none:simulated",  # four parts
    "prompt:a:b:none:simulated:0",  # an unescaped colon
    "prompt:a%41:none:simulated:0",  # an escape the encoder never writes
    "prompt:a%3a:none:simulated:0",  # lower-case escape
    "prompt:a:none:simulated:01",  # non-canonical trial
    "prompt:a:none:simulated:-1",
])
def test_parse_refuses_what_build_never_writes(key: str) -> None:
    with pytest.raises(ValueError, match="key"):
        parse_item_key(key)


def _add_conditions(suite: Path, conditions: dict[str, dict[str, str]]) -> None:
    path = suite / "suite.yaml"
    data = yaml.safe_load(path.read_text())
    data["conditions"] = conditions
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def test_colon_and_slash_conditions_run_record_and_replay(
    tiny_suite: Path, runs_dir: Path, tmp_path: Path,
) -> None:
    names = ("x:m", "x%3Am", "a/b")
    _add_conditions(tiny_suite, {
        "x:m": {"mode": "none"},
        "x%3Am": {"mode": "preloaded"},
        "a/b": {"mode": "self-load"},
    })
    recording = tmp_path / "rec.jsonl"
    common = {"conditions": names, "trials": 2, "progress": False, "use_cache": False,
              "backend": "threading", "concurrency": 2, "runs_dir": runs_dir}
    recorded = run(tiny_suite, RunConfig(
        provider="recording", provider_options={"inner": "simulated", "path": str(recording)},
        run_id="rec", **common))
    replayed = run(tiny_suite, RunConfig(
        provider="replay", provider_options={"path": str(recording)}, run_id="rep", **common))
    rec = evalkit.read_run(recorded.run_dir)
    rep = evalkit.read_run(replayed.run_dir)
    assert len(rec) == len(rep) == 4 * 3 * 2
    for df in (rec, rep):
        assert df["item_key"].is_unique and df["item_hash"].is_unique
        parsed = [parse_item_key(k) for k in df["item_key"]]
        assert [(p.lane, p.case_id, p.condition, p.provider, p.trial) for p in parsed] == list(
            df[["lane", "case_id", "condition", "provider", "trial"]].itertuples(
                index=False, name=None
            )
        )
        assert set(df["condition"]) == set(names)
    # replay found every recording under its own key (no "no recording" error rows)
    assert rep["status"].eq("ok").all(), rep.loc[rep["status"] != "ok", "error_message"].tolist()
    columns = ["case_id", "condition", "trial", "passed", "score"]
    assert (rec.sort_values(columns[:3])[columns].to_numpy().tolist()
            == rep.sort_values(columns[:3])[columns].to_numpy().tolist())


def test_a_plugin_provider_name_with_a_colon_round_trips(tiny_suite: Path, runs_dir: Path,
                                                          tmp_path: Path) -> None:
    provider = "tests.runner.counting_provider:create"
    calls = tmp_path / "calls.txt"
    result = run(tiny_suite, RunConfig(
        provider=provider, provider_options={"count_file": str(calls)}, case_ids=("sum-numbers",),
        conditions=("none",), trials=1, progress=False, use_cache=False, runs_dir=runs_dir))
    key = evalkit.read_run(result.run_dir)["item_key"].item()
    assert parse_item_key(key).provider == provider
    assert calls.read_text().split() == [key]


def test_import_keeps_colliding_and_slash_ids_apart(tmp_path: Path, runs_dir: Path) -> None:
    source = tmp_path / "results.csv"
    source.write_text(
        "case_id,condition,passed\n"
        "q1:x,m,true\n"
        "q1,x:m,false\n"
        "dir/case,a/b,true\n"
        "dir/case,a%3Ab,false\n"
    )
    result = import_results(source, "csv", "ids", runs_dir=runs_dir)
    df = evalkit.read_run("ids", runs_dir=runs_dir)
    assert result.items == 4
    assert df["item_key"].is_unique and df["item_hash"].is_unique
    got = {(parse_item_key(k).case_id, parse_item_key(k).condition, bool(p))
           for k, p in zip(df["item_key"], df["passed"], strict=True)}
    assert got == {("q1:x", "m", True), ("q1", "x:m", False), ("dir/case", "a/b", True),
                   ("dir/case", "a%3Ab", False)}
    assert set(zip(df["case_id"], df["condition"], strict=True)) == {
        (case, condition) for case, condition, _ in got
    }
