"""Result tables shaped like the public leaderboards real users import.

* :func:`unbalanced_board`: harnesses (providers) x two models (conditions) x tasks x 5
  trials, where two harnesses ran both models and four ran only model A, as on a public
  agent leaderboard (so pooled per-condition rates compare different harness mixes).
* :func:`one_trial_board`: one agent pair, one attempt per instance (500 instances), as on a
  benchmark that publishes a single attempt per task.

Both come from ``scripts/make_leaderboard_fixture.py`` (case difficulty shared by every
provider, provider ability and lift on the logit scale).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
HARNESSES = tuple(f"harness-{i}" for i in range(1, 7))
MODELS = ("model-a", "model-b")


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "make_leaderboard_fixture", ROOT / "scripts" / "make_leaderboard_fixture.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LB = _script()


def unbalanced_board(*, cases: int = 80, trials: int = 5, seed: int = 3,
                     both: int = 2) -> pd.DataFrame:
    """Six harnesses; the first ``both`` ran model-a and model-b, the rest only model-a.

    Harness ability differs (logit sd 0.7), so the pooled model-a rate mixes six harnesses and
    the pooled model-b rate only ``both``: the Simpson's-paradox shape.
    """
    table = LB.leaderboard(providers=len(HARNESSES), cases=cases, trials=trials, seed=seed,
                           mean_lift=0.3, provider_sd=1.2).drop(columns="p_true")
    table["condition"] = table["condition"].map(dict(zip(LB.CONDITIONS, MODELS, strict=True)))
    table["provider"] = table["provider"].map(
        {f"model-{i}": name for i, name in enumerate(HARNESSES)}
    )
    ran_both = set(HARNESSES[:both])
    keep = (table["condition"] == MODELS[0]) | table["provider"].isin(ran_both)
    return table[keep].reset_index(drop=True)


def one_trial_board(*, cases: int = 500, seed: int = 5, mean_lift: float = 0.4) -> pd.DataFrame:
    """One provider, ``cases`` instances, one attempt per instance and condition."""
    table = LB.leaderboard(providers=1, cases=cases, trials=1, seed=seed,
                           mean_lift=mean_lift).drop(columns="p_true")
    return table.assign(provider="agent")


def write_run(table: pd.DataFrame, runs_dir: Path, run_id: str) -> Path:
    """Import ``table`` as a run with ``evalkit import --format csv`` (the real command)."""
    from tests.conftest import evalkit_cli

    source = runs_dir.parent / f"{run_id}.csv"
    table.to_csv(source, index=False)
    done = evalkit_cli("import", source, "--format", "csv", "--run-id", run_id,
                       "--runs-dir", runs_dir)
    assert done.returncode == 0, done.stderr
    return runs_dir / run_id
