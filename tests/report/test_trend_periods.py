"""The trend places each run by its own start and never pools different skill texts.

The runner's clock is injected (``evalkit.runner._run_manifest.now``), so real runs of the tiny
suite happen on the Mondays of a simulated November while their rows carry today's wall-clock times.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest

import evalkit
import evalkit.analysis as analysis
import evalkit.report as rk
from evalkit.runner import RunConfig, _run_manifest as runner_module, run


def _run_at(
    monkeypatch: pytest.MonkeyPatch, when: datetime, suite: Path, runs_dir: Path, run_id: str,
    **kw: object,
) -> Path:
    monkeypatch.setattr(runner_module, "now", lambda: when)
    options: dict[str, object] = {"trials": 1, "backend": "threading", "concurrency": 2, **kw}
    config = RunConfig(
        runs_dir=runs_dir, run_id=run_id, progress=False, lanes=["prompt"],
        **options,  # type: ignore[arg-type]
    )
    return run(suite, config).run_dir


def _edit_skill(suite: Path) -> None:
    skill = suite / "skills" / "waiting" / "SKILL.md"
    skill.write_text(skill.read_text() + "Log how long the wait took.\n")


def test_cached_and_edited_weeks_land_in_their_own_weeks(
    tiny_suite: Path, runs_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue's month: Nov 2 fresh, Nov 9 served from the cache, Nov 16 after a SKILL.md edit."""
    _run_at(monkeypatch, datetime(2026, 11, 2, 6, 17, tzinfo=UTC), tiny_suite, runs_dir, "w45")
    cached = _run_at(
        monkeypatch, datetime(2026, 11, 9, 6, 17, tzinfo=UTC), tiny_suite, runs_dir, "w46"
    )
    assert evalkit.read_run(cached)["cache_hit"].all()  # every row is a copy of week 45's
    _edit_skill(tiny_suite)
    _run_at(monkeypatch, datetime(2026, 11, 16, 6, 17, tzinfo=UTC), tiny_suite, runs_dir, "w47")

    history = analysis.trend(runs_dir, period="week", n_resamples=100)

    runs = history.runs.set_index("run_dir")
    weeks = {name: pd.Timestamp(p).isocalendar().week for name, p in runs["period"].items()}
    assert weeks == {"w45": 45, "w46": 46, "w47": 47}
    assert rk.describe_trend(history)["periods"] == 3
    # the skill texts per condition: the edit changed self-load and preloaded, nothing else
    texts = {name: dict(t.split("=") for t in v.split(", ")) for name, v in
             runs["skill_texts"].items()}
    assert texts["w45"] == texts["w46"]
    changed = {c for c in texts["w47"] if texts["w47"][c] != texts["w45"][c]}
    assert changed == {"self-load", "preloaded"}
    assert list(runs["skill_changed"]) == [False, False, True]
    # the page's dashed lines: the week the text changed
    assert history.changes() == [pd.Timestamp("2026-11-16", tz="UTC")]
    assert rk.describe_trend(history)["skill text changes"] == "w47"


def test_a_resumed_run_keeps_its_start(
    tiny_suite: Path, runs_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = datetime(2026, 11, 2, 6, 17, tzinfo=UTC)
    run_dir = _run_at(monkeypatch, first, tiny_suite, runs_dir, "w45")
    _run_at(monkeypatch, datetime(2026, 11, 20, tzinfo=UTC), tiny_suite, runs_dir, "w45",
            resume=True)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["started_at"] == first.isoformat(timespec="seconds")
    assert manifest["created_at"].startswith("2026-11-20")
    history = analysis.trend(runs_dir, period="week", n_resamples=100)
    assert list(history.runs["period"]) == [pd.Timestamp("2026-11-02", tz="UTC")]


def test_runs_of_one_week_with_different_skill_texts_are_not_pooled(
    tiny_suite: Path, runs_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monday = datetime(2026, 11, 2, 6, 17, tzinfo=UTC)
    thursday = datetime(2026, 11, 5, 14, 0, tzinfo=UTC)
    _run_at(monkeypatch, monday, tiny_suite, runs_dir, "monday", use_cache=False)
    _run_at(monkeypatch, datetime(2026, 11, 3, tzinfo=UTC), tiny_suite, runs_dir, "tuesday",
            use_cache=False)
    _edit_skill(tiny_suite)
    _run_at(monkeypatch, thursday, tiny_suite, runs_dir, "thursday", use_cache=False)

    history = analysis.trend(runs_dir, period="week", n_resamples=100)

    runs = history.runs.set_index("run_dir")
    # monday and tuesday measured one text and are pooled; thursday starts its own point
    assert runs.loc["monday", "period"] == runs.loc["tuesday", "period"]
    assert runs.loc["thursday", "period"] == pd.Timestamp(thursday)
    assert history.split == [pd.Timestamp(thursday)]
    points = history.overall.groupby("period")["n"].sum()
    per_run = runs.groupby("period")["items"].sum()
    assert points.to_dict() == per_run.to_dict()  # no item of thursday in monday's point
    assert pd.Timestamp(thursday) in history.changes()
