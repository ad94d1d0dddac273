"""evalkit optimize: climbs, rejects noise, seals the test split, aborts on tampering."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.cases import load_suite
from evalkit.optimize import OptimizeConfig, SealError, TamperError, optimize
from evalkit.optimize._loop import _Optimisation
from tests.optimize.probes import write_monotone_suite, write_topic_suite

PROBES = "tests.optimize.probes"


def _config(tmp_path: Path, optimizer: str, **kw: object) -> OptimizeConfig:
    options: dict[str, object] = {
        "skill": "probe", "optimizer": f"python:{PROBES}:{optimizer}", "trials": 1,
        "runs_dir": tmp_path / "runs", "backend": "threading", "stall": None,
        "n_resamples": 1000, **kw,
    }
    return OptimizeConfig(**options)  # type: ignore[arg-type]


def _events(run_dir: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_serial_climbs_the_monotone_probe_to_the_optimum(tmp_path: Path) -> None:
    suite = write_monotone_suite(tmp_path / "suite")
    result = optimize(suite, _config(tmp_path, "append_marker", max_iterations=6, run_id="ser"))
    history = result.state.history
    assert [h.accepted for h in history] == [True] * 6
    assert [h.parent for h in history] == ["seed"] + [f"cand-{i:04d}" for i in range(1, 6)]
    assert result.champion == "cand-0006"
    assert result.state.champion_val_rate == 1.0
    assert (result.run_dir / "skills" / "cand-0006.md").read_text().count("[X]") == 6
    diff = (result.run_dir / "skills" / "cand-0003.diff").read_text()
    assert "+[X]" in diff and "cand-0002.md" in diff


@pytest.mark.slow
def test_parallel_six_is_breadth_first_and_lands_worse_on_the_same_budget(tmp_path: Path) -> None:
    suite = write_monotone_suite(tmp_path / "suite")
    serial = optimize(suite, _config(tmp_path, "append_marker", max_iterations=6, run_id="s"))
    parallel = optimize(
        suite, _config(tmp_path, "append_marker", max_iterations=6, parallel=6, run_id="p")
    )
    history = parallel.state.history
    assert len(history) == 6 and {h.parent for h in history} == {"seed"}
    assert [h.accepted for h in history] == [True] + [False] * 5
    # the five later siblings were re-gated against the champion as of their commit
    assert {h.champion_at_commit for h in history[1:]} == {"cand-0001"}
    assert parallel.state.champion_val_rate == pytest.approx(1 / 6)
    assert parallel.state.champion_val_rate < serial.state.champion_val_rate == 1.0


@pytest.mark.slow
def test_noise_only_candidates_are_never_accepted(tmp_path: Path) -> None:
    suite = write_topic_suite(tmp_path / "suite")
    config = OptimizeConfig(
        skill="guide", optimizer=f"python:{PROBES}:reword", trials=2, max_iterations=12,
        stall=None, runs_dir=tmp_path / "runs", provider_options={"spread": "1.0"},
        n_resamples=1000, concurrency=2,
    )
    result = optimize(suite, config)
    assert result.state.iterations == 12
    assert result.accepted == [] and result.champion == "seed"
    assert all(h.reason.startswith("gate:") for h in result.state.history)


def test_scripted_optimizer_climbs_with_the_simulated_agent(tmp_path: Path) -> None:
    suite = write_topic_suite(tmp_path / "suite")
    config = OptimizeConfig(
        skill="guide", optimizer=f"python:{PROBES}:learn_topics", trials=2, max_iterations=5,
        stall=3, runs_dir=tmp_path / "runs", provider_options={"spread": "1.0"},
        n_resamples=1000, concurrency=2,
    )
    result = optimize(suite, config)
    rates = [h.val_rate for h in result.state.history if h.accepted]
    assert len(rates) >= 2 and rates == sorted(rates)
    test = result.state.test
    assert test.champion == result.champion
    assert test.delta > 0.2 and test.ci_low > 0
    assert result.state.holdout_looks == 1 + len(
        [h for h in result.state.history if h.verdict is not None]
    )


def test_test_split_is_sealed_and_unsealed_once(tmp_path: Path) -> None:
    suite = write_monotone_suite(tmp_path / "suite")
    config = _config(tmp_path, "append_marker", max_iterations=2, run_id="sealed")
    result = optimize(suite, config)
    events = _events(result.run_dir)
    kinds = [e["event"] for e in events]
    assert kinds.count("unseal") == 1
    unseal_at = kinds.index("unseal")
    test_evals = [i for i, e in enumerate(events)
                  if e["event"] == "evaluation" and e["split"] == "test"]
    assert len(test_evals) == 2 and min(test_evals) > unseal_at  # seed and champion, after
    assert result.state.test.delta == pytest.approx(20 / 60)  # two markers -> 20 cases
    # resuming a complete run does not look again
    resumed = config.model_copy(update={"run": config.run.model_copy(update={"resume": True})})
    again = optimize(suite, resumed)
    assert _events(again.run_dir) == events
    # a second unseal is refused
    with pytest.raises(SealError):
        _Optimisation(load_suite(suite), resumed)._unseal()


@pytest.mark.parametrize("parallel", [1, 3])
def test_tampering_with_cases_aborts(
    tmp_path: Path, parallel: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the guard is what catches this where the edit can land: without the sandbox (in it, the
    # cases are out of the optimizer's reach: tests/security/test_optimizer_sandbox.py)
    monkeypatch.setenv("EVALKIT_SANDBOX", "off")
    suite = write_monotone_suite(tmp_path / "suite")
    cases = suite / "cases" / "cases.yaml"
    # an external optimizer that improves the skill AND quietly edits the graded cases
    command = f"echo '[X]' >> SKILL.md && sed -i 's/PASS/P/' {cases}"
    config = _config(tmp_path, "append_marker", max_iterations=4, parallel=parallel,
                     run_id=f"tamper{parallel}")
    config = config.model_copy(update={"optimizer": f"command:{command}"})
    with pytest.raises(TamperError) as info:
        optimize(suite, config)
    assert "suite/cases/cases.yaml" in str(info.value)
    state = json.loads((tmp_path / "runs" / f"tamper{parallel}" / "optimize.json").read_text())
    assert state["status"] == "aborted" and state["test"] is None and not state["test_unsealed"]
    assert state["history"] == []  # nothing was banked
    events = _events(tmp_path / "runs" / f"tamper{parallel}")
    assert events[-1]["event"] == "honesty_violation"


def test_failed_proposals_are_wasted_iterations(tmp_path: Path) -> None:
    suite = write_monotone_suite(tmp_path / "suite")
    result = optimize(suite, _config(tmp_path, "crash", max_iterations=3, run_id="crash"))
    assert [h.reason for h in result.state.history] == [
        "failed proposal: RuntimeError: optimizer fell over"] * 3
    assert result.state.test is not None


@pytest.mark.slow
@pytest.mark.parametrize("parallel", [1, 4])
def test_budget_caps_hold(tmp_path: Path, parallel: int) -> None:
    suite = write_monotone_suite(tmp_path / "suite")
    iters = optimize(suite, _config(tmp_path, "append_marker", max_iterations=5,
                                    parallel=parallel, run_id=f"it{parallel}"))
    assert iters.state.iterations == 5
    stall = optimize(suite, _config(tmp_path, "reword", max_iterations=50, stall=3,
                                    parallel=parallel, run_id=f"st{parallel}"))
    assert stall.state.iterations == 3 and stall.state.stall == 3
    per_candidate = 60  # 60 validation cases x 1 trial
    calls = optimize(suite, _config(tmp_path, "append_marker", max_iterations=None,
                                    max_metric_calls=400, parallel=parallel,
                                    run_id=f"mc{parallel}"))
    history = calls.state.history
    before_last = history[-2].metric_calls if len(history) > 1 else 0
    assert before_last < 400, "the last candidate started while budget remained"
    assert history[-1].metric_calls <= 400 + per_candidate + 60  # + one new champion's train
    usd = optimize(suite, _config(tmp_path, "append_marker", max_iterations=None,
                                  max_usd=3.0, parallel=parallel, run_id=f"usd{parallel}",
                                  provider_options={"cost_usd": "0.01"}))
    spent = [h.usd for h in usd.state.history]
    assert spent[-2] < 3.0 <= spent[-1] + 1.3  # overshoot at most one candidate in flight
