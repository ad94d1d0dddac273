"""The trend across every run of a runs directory: a DuckDB query, then evalkit.stats per period.

DuckDB reads every run's ``results.parquet`` (and the streamed ``parts/results-*.parquet`` of a run
that is not complete) in one query with ``union_by_name`` (runs written by older evalkit versions
lack newer columns; without it DuckDB would silently use the first file's schema). A run whose
manifest status is not ``complete`` (interrupted, crashed or still running) is included with what
it has and marked ``partial`` in :attr:`Trend.runs`. Each run is placed in the period (week by
default) of its own start (the manifest's ``started_at``; rows served from the cache keep the times
of the run that produced them, so they never move a run). Items of several runs in one period are
pooled, so a case run twice in a week counts once as a cluster with more trials, unless the runs
measured different skill texts: the period is then split where the text changed. Skill texts are
compared only over the conditions and cases both runs ran (a case's text under a condition is the
hashes its items measured), so a run killed part-way, or a run of fewer or more conditions, is no
change of text and starts no point of its own. The pass rates
per period come from :func:`evalkit.stats.pass_rates` and the lift per period from
:func:`evalkit.analysis.lift`: nothing is computed here by hand. The weekly trend report
(``evalkit report RUNS_DIR --kind trend``) renders it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

import pandas as pd

from evalkit._display import draw
from evalkit._settings import CONFIDENCE, N_RESAMPLES_QUICK, SEED
from evalkit.analysis._lift import LIFT_COLUMNS, lift
from evalkit.errors import InputError
from evalkit.results import (
    MANIFEST_FILE,
    PARTS_DIR,
    RESULT_SCHEMA,
    RESULTS_FILE,
    load_manifest,
    read_parquet,
)
from evalkit.stats import pass_rates

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: Columns the trend reads (others are never loaded).
TREND_COLUMNS = (
    "run_id",
    "item_key",
    "suite",
    "dataset_version",
    "provider",
    "lane",
    "case_id",
    "condition",
    "trial",
    "status",
    "passed",
    "expected_skill",
    "inferred_skill",
    "started_at",
    "cache_hit",
    "skill_hash",
)
PERIODS = ("run", "day", "week", "month")
TREND_LIFT_METRICS: tuple[str, ...] = ("realized_lift", "oracle_lift", "routing_gap", "stale_harm")

# ``run_files`` (filename, run_dir, file_order) names the run of each file read. A resumed
# run's parts may hold an item twice (an error row later redone): the last part wins.
_QUERY = """
WITH items AS (
    SELECT {columns}, filename
    FROM read_parquet($files, union_by_name = true, filename = true)
),
located AS (
    SELECT items.* EXCLUDE (filename), run_files.run_dir, run_files.file_order
    FROM items JOIN run_files USING (filename)
    QUALIFY item_key IS NULL OR row_number() OVER (
        PARTITION BY run_files.run_dir, items.item_key ORDER BY run_files.file_order DESC
    ) = 1
),
starts AS (
    SELECT located.run_dir,
           coalesce(
               any_value(run_meta.manifest_start),
               min(located.started_at) FILTER (WHERE NOT coalesce(located.cache_hit, false)),
               any_value(run_meta.created_start),
               min(located.started_at)
           ) AS run_start
    FROM located LEFT JOIN run_meta USING (run_dir)
    GROUP BY located.run_dir
)
SELECT located.* EXCLUDE (trial, file_order),
       located.trial AS run_trial,
       starts.run_start,
       row_number() OVER (
           PARTITION BY located.case_id, located.condition, located.provider
           ORDER BY starts.run_start NULLS LAST, located.run_dir, located.trial
       ) - 1 AS trial
FROM located JOIN starts USING (run_dir)
"""


@dataclass(frozen=True)
class Trend:
    """Pass rate and lift per period across the runs of a directory.

    Attributes:
        period: ``run``, ``day``, ``week`` or ``month``.
        runs: One row per run: ``run_dir, run_id, suite, run_start, period, dataset_version,
            providers, conditions, items, skill_texts, skill_changed, status``.
            ``run_start`` is the run's own start (its manifest's ``started_at``; rows served
            from the cache never move a run). ``skill_texts`` names the skill hashes each
            condition measured (``condition=hash, ...``); ``skill_changed`` is True where a
            condition and case the run shares with the suite's earlier runs measured another
            text (a run that ran fewer cases or conditions changed nothing). ``status`` is the
            manifest's: ``complete``, or ``partial`` (killed or still running), ``stopped``,
            ``failed`` for a run that did not finish.
        pass_rates: ``suite, provider, period, condition, n_cases, n, estimate, ci_low,
            ci_high, confidence, method`` (:func:`evalkit.stats.pass_rates`).
        overall: The same without the condition split (all conditions pooled).
        lift: ``suite, period, provider, lane, metric, estimate, ci_low, ci_high, n_cases,
            confidence, method`` (:func:`evalkit.analysis.lift`, lanes pooled as
            ``"all lanes"``).
        versions: ``suite, period, dataset_versions, changed, skill_texts, skill_changed``:
            ``changed`` is True where the set of dataset versions differs from the suite's
            previous period, ``skill_changed`` where a skill text changed.
        partial: Runs included although they are not complete (their ``status``).
        split: Points that start inside a calendar period because a run there measured
            another skill text than the period's earlier runs (runs of different skill texts
            are never pooled: the period is split at the change).

    Its figures (matplotlib, drawn by :mod:`evalkit.report` with dashed lines at
    :meth:`changes`): :meth:`plot_overall`, and per suite :meth:`plot_pass_rates` and
    :meth:`plot_lift`; :attr:`suites` names the suites.
    """

    period: str
    runs: pd.DataFrame
    pass_rates: pd.DataFrame
    overall: pd.DataFrame
    lift: pd.DataFrame
    versions: pd.DataFrame
    partial: list[str] = field(default_factory=list)
    split: list[pd.Timestamp] = field(default_factory=list)

    @property
    def suites(self) -> list[str]:
        """The suites of the runs, sorted."""
        return sorted(self.runs["suite"].astype(str).unique())

    def plot_overall(self) -> Figure:
        """Pass rate per period and provider (all conditions pooled), a panel per suite."""
        return cast("Figure", draw(self, "plot_overall"))

    def plot_pass_rates(self, suite: str) -> Figure:
        """One suite's pass rate per period and condition, a panel per provider.

        Args:
            suite: The suite.

        Returns:
            The figure.
        """
        return cast("Figure", draw(self, "plot_pass_rates", suite=suite))

    def plot_lift(self, suite: str) -> Figure:
        """One suite's realized and oracle lift, routing gap and stale harm per period.

        Args:
            suite: The suite.

        Returns:
            The figure (a panel per provider; differences in percentage points).
        """
        return cast("Figure", draw(self, "plot_lift", suite=suite))

    def change_label(self, suite: str | None = None) -> str:
        """What the change lines of :meth:`changes` mark, in words, for a plot's legend."""
        rows = self.versions if suite is None else self.versions[self.versions["suite"] == suite]
        kinds = [name for name, column in (("dataset version", "changed"),
                                           ("skill text", "skill_changed"))
                 if bool(rows[column].any())]
        return " and ".join(kinds) + " changed" if kinds else "changed"

    def changes(self, suite: str | None = None) -> list[pd.Timestamp]:
        """Periods where the dataset version or a skill text changed (optionally one suite).

        Args:
            suite: Restrict to this suite.

        Returns:
            The periods, sorted.
        """
        rows = self.versions[self.versions["changed"] | self.versions["skill_changed"]]
        if suite is not None:
            rows = rows[rows["suite"] == suite]
        return sorted(pd.Timestamp(p) for p in rows["period"].unique())


def run_files(root: Path) -> pd.DataFrame:
    """The result files of every run under ``root``, with the run each belongs to.

    Args:
        root: A runs directory.

    Returns:
        ``filename`` (absolute), ``run_dir`` (the run directory's name) and ``file_order``
        (the compacted file first, then the parts in the order they were written).
    """
    rows = []
    for run_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        parts = run_dir / PARTS_DIR
        files = [run_dir / RESULTS_FILE] if (run_dir / RESULTS_FILE).is_file() else []
        files += sorted(parts.glob("results-*.parquet")) if parts.is_dir() else []
        rows += [(str(f.resolve()), run_dir.name, n) for n, f in enumerate(files)]
    return pd.DataFrame(rows, columns=["filename", "run_dir", "file_order"])


def run_status(run_dir: Path) -> str:
    """``complete`` or ``partial``: the manifest's status, else whether the run was compacted.

    Args:
        run_dir: A run directory.

    Returns:
        The status.
    """
    manifest = load_manifest(run_dir)
    if manifest is not None:
        return str(manifest.status)
    compacted = (run_dir / RESULTS_FILE).is_file() and not (run_dir / PARTS_DIR).is_dir()
    return "complete" if compacted else "partial"


def load_items(runs_dir: str | os.PathLike[str]) -> pd.DataFrame:
    """Every item of every run under ``runs_dir``, via one DuckDB query (``union_by_name``).

    Runs that are not complete are read from their parquet parts.

    Args:
        runs_dir: A directory whose subdirectories are runs.

    Returns:
        The :data:`TREND_COLUMNS` (missing ones as nulls), plus ``run_dir`` (the run's
        directory name), ``run_start`` (its first ``started_at``; the manifest's
        ``created_at`` when items carry no time), ``run_trial`` (the trial within its run) and
        ``trial`` renumbered so items of different runs never collide.

    Raises:
        InputError: Not a directory, or no run in it.
        evalkit.errors.CorruptFileError: A run's ``results.parquet`` is damaged (named).
    """
    import duckdb

    root = Path(runs_dir)
    if not root.is_dir():
        raise InputError(f"runs directory '{root}' does not exist (the trend reads RUNS_DIR/*/).")
    located = run_files(root)
    if located.empty:
        raise InputError(
            f"no run under '{root}': the trend needs at least one '{root}/<run>/{RESULTS_FILE}'."
        )
    files = list(located["filename"])
    con = duckdb.connect(":memory:")
    try:
        con.execute("SET TimeZone = 'UTC'")
        con.register("run_files", located)
        con.register("run_meta", _run_meta(root, sorted(set(located["run_dir"]))))
        available = {
            row[0]
            for row in con.execute(
                "DESCRIBE SELECT * FROM read_parquet($files, union_by_name = true)",
                {"files": files},
            ).fetchall()
        }
        select = ", ".join(f'"{c}"' if c in available else f'NULL AS "{c}"' for c in TREND_COLUMNS)
        items = con.execute(_QUERY.format(columns=select), {"files": files}).df()
    except duckdb.Error:
        _name_damaged_file(root, files)
        raise
    finally:
        con.close()
    missing = items["run_start"].isna()
    if missing.any():
        starts = {
            name: _manifest_time(root / name) for name in items.loc[missing, "run_dir"].unique()
        }
        items.loc[missing, "run_start"] = items.loc[missing, "run_dir"].map(starts)
    for column in ("suite", "provider", "lane", "dataset_version"):
        items[column] = items[column].astype("object").where(items[column].notna(), "unknown")
    items["run_id"] = (
        items["run_id"].astype("object").where(items["run_id"].notna(), items["run_dir"])
    )
    return items


def _run_meta(root: Path, names: list[str]) -> pd.DataFrame:
    """Each run's start as its manifest records it: ``started_at``, else ``created_at``.

    A run's period is its own start: the rows of a run served from the cache carry the times
    of the run that produced them, so they can only be a fallback (rows that were not cache
    hits first) for runs whose manifest predates ``started_at``.
    """
    rows = []
    for name in names:
        manifest = load_manifest(root / name) if (root / name / MANIFEST_FILE).exists() else None
        started = getattr(manifest, "started_at", None)
        created = getattr(manifest, "created_at", None)
        rows.append((name, _utc(started), _utc(created)))
    meta = pd.DataFrame(rows, columns=["run_dir", "manifest_start", "created_start"])
    for column in ("manifest_start", "created_start"):
        meta[column] = pd.to_datetime(meta[column], utc=True)
    return meta


def _utc(value: str | None) -> pd.Timestamp | None:
    if not value:
        return None
    stamp = pd.Timestamp(value)
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def _name_damaged_file(root: Path, files: list[str]) -> None:
    """Raise the :class:`~evalkit.errors.CorruptFileError` of the first damaged file, if any."""
    for path in map(Path, files):
        fix = (
            f"move the run {path.parent} out of {root}, or repair it (delete its "
            f"{RESULTS_FILE} and scores.parquet and resume it with evalkit run --resume)"
        )
        read_parquet(path, RESULT_SCHEMA, fix=fix)


def _manifest_time(run_dir: Path) -> pd.Timestamp:
    manifest = load_manifest(run_dir)
    created = manifest.created_at if manifest is not None else None
    if created:
        stamp = pd.Timestamp(created)
        return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
    results = run_dir / RESULTS_FILE
    mtime = (results if results.is_file() else run_dir).stat().st_mtime
    return pd.Timestamp(mtime, unit="s", tz="UTC")


def _period(starts: pd.Series, period: str) -> pd.Series:
    stamps = pd.to_datetime(starts, utc=True)
    if period == "run":
        return stamps
    day = stamps.dt.floor("D")
    if period == "day":
        return day
    if period == "week":
        return day - pd.to_timedelta(day.dt.day_of_week, unit="D")
    naive = day.dt.tz_localize(None)
    return (naive - pd.to_timedelta(naive.dt.day - 1, unit="D")).dt.tz_localize("UTC")


def trend(
    runs_dir: str | os.PathLike[str],
    *,
    period: str = "week",
    suite: str | None = None,
    n_resamples: int = N_RESAMPLES_QUICK.default,
    confidence: float = CONFIDENCE.default,
    seed: int | None = SEED.default,
) -> Trend:
    """Pass rate and lift per period, by suite and provider, across every run of a directory.

    Args:
        runs_dir: The runs directory.
        period: ``"week"`` (ISO weeks, Monday start, UTC), ``"day"``, ``"month"`` or ``"run"``
            (one point per run).
        suite: Only this suite (default: all).
        n_resamples: Bootstrap replicates of the lift intervals.
        confidence: Confidence level.
        seed: Bootstrap seed.

    Returns:
        The :class:`Trend`.

    Raises:
        InputError: Unknown period, no run, or no run of ``suite``.
    """
    if period not in PERIODS:
        raise InputError(
            f"The value for `period` must be one of {list(PERIODS)}, but {period!r} was passed."
        )
    items = load_items(runs_dir)
    if suite:
        items = items[items["suite"] == suite]
        if items.empty:
            raise InputError(f"no run of suite {suite!r} under '{runs_dir}'.")
    items = items.assign(period=_period(items["run_start"], period))
    root = Path(runs_dir)
    statuses = {name: run_status(root / name) for name in items["run_dir"].unique()}
    texts = skill_texts(items)
    measured = case_skill_texts(items)
    items["period"] = _split_periods(items, measured)
    runs = (
        items.groupby("run_dir", sort=False)
        .agg(
            run_id=("run_id", "first"),
            suite=("suite", "first"),
            run_start=("run_start", "min"),
            period=("period", "first"),
            dataset_version=("dataset_version", _joined),
            providers=("provider", _joined),
            conditions=("condition", _joined),
            items=("case_id", "size"),
        )
        .reset_index()
        .sort_values(["run_start", "run_dir"], kind="stable")
        .reset_index(drop=True)
    )
    runs["skill_texts"] = runs["run_dir"].map(lambda name: _label(texts.get(name, {})))
    runs["skill_changed"] = _skill_changed(runs, measured)
    split = sorted(
        {
            pd.Timestamp(p)
            for p in items["period"].unique()
            if pd.Timestamp(p) not in set(_period(items["run_start"], period))
        }
    )
    rates = pass_rates(
        items, by=["suite", "provider", "period", "condition"], confidence=confidence
    )
    overall = pass_rates(items, by=["suite", "provider", "period"], confidence=confidence)
    lifts: list[pd.DataFrame] = []
    for (suite_name, when), part in items.groupby(["suite", "period"], sort=True):
        if not set(part["condition"]) & {"none", "self-load", "preloaded", "stale"}:
            continue
        result = lift(
            part.assign(lane="all lanes"),
            n_resamples=n_resamples,
            confidence=confidence,
            seed=seed,
        )
        metrics = result.metrics.copy()
        metrics["suite"] = str(suite_name)
        metrics["period"] = pd.Timestamp(str(when))
        lifts.append(metrics)
    lift_columns = ["suite", "period", *LIFT_COLUMNS]
    lift_table = (
        pd.concat(lifts, ignore_index=True)[lift_columns]
        if lifts
        else pd.DataFrame(columns=lift_columns)
    )
    versions = (
        items.groupby(["suite", "period"], sort=True)["dataset_version"]
        .agg(_joined)
        .rename("dataset_versions")
        .reset_index()
    )
    previous = versions.groupby("suite")["dataset_versions"].shift()
    versions["changed"] = previous.notna() & (previous != versions["dataset_versions"])
    first_of_period = runs.groupby(["suite", "period"], sort=True)
    versions["skill_texts"] = list(first_of_period["skill_texts"].agg(" | ".join))
    versions["skill_changed"] = list(first_of_period["skill_changed"].any())
    runs["status"] = [statuses[name] for name in runs["run_dir"]]
    partial = sorted(runs.loc[runs["status"] != "complete", "run_dir"])
    return Trend(period, runs, rates, overall, lift_table, versions, partial, split)


def skill_texts(items: pd.DataFrame) -> dict[str, dict[str, str]]:
    """The skill texts each run measured: ``{run_dir: {condition: skill hashes}}``.

    A condition that shows no skill (``none``) has no entry; several skills of one
    condition are joined with ``+``.

    Args:
        items: :func:`load_items` rows.

    Returns:
        The hashes per run and condition.
    """
    known = items[items["skill_hash"].notna()]
    out: dict[str, dict[str, str]] = {name: {} for name in items["run_dir"].unique()}
    for (name, condition), hashes in known.groupby(["run_dir", "condition"], sort=True)[
        "skill_hash"
    ]:
        out[str(name)][str(condition)] = "+".join(sorted(str(h)[:12] for h in hashes.unique()))
    return out


def case_skill_texts(items: pd.DataFrame) -> dict[str, dict[tuple[str, str], str]]:
    """The skill text each run measured per condition and case: what two runs can share.

    Two runs are compared over the ``(condition, case_id)`` pairs both ran: a run killed
    part-way has fewer pairs, not other texts, and a condition one run lacks is no change.

    Args:
        items: :func:`load_items` rows.

    Returns:
        ``{run_dir: {(condition, case_id): skill hashes}}`` (several joined with ``+``).
    """
    known = items[items["skill_hash"].notna()]
    out: dict[str, dict[tuple[str, str], str]] = {
        str(name): {} for name in items["run_dir"].unique()
    }
    grouped = known.groupby(["run_dir", "condition", "case_id"], sort=True)["skill_hash"]
    for (name, condition, case), hashes in grouped:
        out[str(name)][(str(condition), str(case))] = "+".join(
            sorted(str(h)[:12] for h in hashes.unique())
        )
    return out


def _label(hashes: dict[str, str]) -> str:
    return ", ".join(f"{c}={h}" for c, h in sorted(hashes.items())) or "no skill shown"


def _conflicts(current: dict[tuple[str, str], str], other: dict[tuple[str, str], str]) -> bool:
    """Whether a condition and case both measured reads another text in ``other``."""
    return any(key in current and current[key] != h for key, h in other.items())


def _split_periods(items: pd.DataFrame, texts: dict[str, dict[tuple[str, str], str]]) -> pd.Series:
    """Periods, with a period holding runs of different skill texts split where they change.

    Runs of one period are pooled only while every condition and case they share measured the
    same skill text; the first run that measured another text for one of them starts a new
    point at its own start (so an edit of SKILL.md mid-week is never pooled with the week's
    earlier runs). A run that stopped part-way measured fewer cases, not another text: it
    joins the point it falls in.
    """
    runs = (
        items.groupby("run_dir", sort=False)
        .agg(suite=("suite", "first"), period=("period", "first"), start=("run_start", "min"))
        .sort_values(["start"], kind="stable")
    )
    placed: dict[str, pd.Timestamp] = {}
    for _, part in runs.groupby(["suite", "period"], sort=False):
        current: dict[tuple[str, str], str] = {}
        point = pd.Timestamp(part["period"].iloc[0])
        for name, row in part.iterrows():
            hashes = texts.get(str(name), {})
            if _conflicts(current, hashes):
                current, point = {}, pd.Timestamp(row["start"])
            current.update(hashes)
            placed[str(name)] = point
    return items["run_dir"].map(placed)


def _skill_changed(runs: pd.DataFrame, texts: dict[str, dict[tuple[str, str], str]]) -> list[bool]:
    """Per run (in time order): did a condition and case measure another text than before?"""
    seen: dict[str, dict[tuple[str, str], str]] = {}
    changed = []
    for name, suite_name in zip(runs["run_dir"], runs["suite"], strict=True):
        hashes = texts.get(str(name), {})
        before = seen.setdefault(str(suite_name), {})
        changed.append(_conflicts(before, hashes))
        before.update(hashes)
    return changed


def _joined(values: pd.Series) -> str:
    return ", ".join(sorted(str(v) for v in pd.unique(values.dropna())))
