"""Why an item passed or failed: its reasons, read from the run's own records.

A run already records why each item came out as it did: ``scores.parquet`` holds every scoring
component with its ``detail`` (the missing expected pattern, the forbidden pattern the answer
recommended, the verifier's exit code and last lines, the judge's evidence per statement, the
skill the agent loaded against the one the case expects), and ``results.parquet`` the error class
and message of an error or a timeout. This module turns those records into:

- :func:`reason_table`: one row per (item, reason), in the order that explains the item;
- :func:`item_reasons`: one row per item with its one-line ``reason`` and its primary ``cause``;
- :func:`failure_causes`: what a group's failures are made of (counts by primary cause).

The **primary cause** of a failing item is the first of: the error or timeout; the skill the
agent did not load (or loaded wrongly) where loading was up to it; a gate that fails the item
whatever its score (in the order the run recorded them); the other failing components, in
:data:`COMPONENT_ORDER`; a score below the pass threshold; and, for imported data that recorded
nothing, ``no reasons recorded``. Every failing component is still listed in the item's reason;
the primary cause only decides which one line of the failure summaries counts it.

Text in reasons comes from model output (a matched pattern, a verifier's output, a judge's
evidence): it passes the redactor here, and every HTML surface escapes it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Final

from evalkit._redact import redact_text
from evalkit._workspace_paths import relative_to_workspace
from evalkit.results._finish import (
    DID_NOT_FINISH,
    OUTCOMES,
    UNFINISHED_COMPONENTS,
    class_cause,
    component_cause,
    error_cause,
    outcomes,
)

if TYPE_CHECKING:
    import pandas as pd

#: The reason of an item whose run recorded none (a bare CSV import).
NO_REASONS: Final = "no reasons recorded"

#: Known scoring components in the order that explains a failure, with the cause they name.
COMPONENT_ORDER: Final[tuple[tuple[str, str], ...]] = (
    ("verifier", "verifier failed"),
    ("artifacts", "evidence missing or invalid"),
    ("bundle", "evidence bundle invalid"),
    ("expected_patterns", "missing expected pattern"),
    ("forbidden_patterns", "forbidden pattern recommended"),
    ("anti_patterns", "anti-pattern matched"),
    ("workflow", "workflow step missing or out of order"),
    ("expectation:", "judged expectation failed"),
    ("rubric:", "judged rubric item failed"),
)
"""``expectation:`` and ``rubric:`` stand for every ``expectation:N`` / ``rubric:N`` row."""

#: Components recorded beside the score that never decide an item by themselves.
CONTEXT_COMPONENTS: Final = frozenset(
    {"total", "skill_trigger", "evidence_completeness", "report_completeness", "taxonomy_usage"}
)

#: Columns of :func:`reason_table`.
REASON_COLUMNS: Final = ("item_key", "rank", "component", "cause", "detail", "passed")
#: Columns of :func:`item_reasons`.
ITEM_REASON_COLUMNS: Final = ("item_key", "cause", "reason", "reasons_recorded")

_ERROR_RANK, _ROUTING_RANK, _GATE_RANK, _COMPONENT_RANK = 0, 1, 2, 10
_THRESHOLD_RANK = 90
_NO_RECORD_RANK = 99
_DETAIL_LIMIT = 400
#: What a component's detail starts with that its cause already says.
_DETAIL_PREFIXES: Final = {"expected_patterns": "missing: ", "forbidden_patterns": "recommended: "}


def _isin(series: pd.Series, values: Iterable[object]) -> pd.Series:
    """``series.isin(values)`` through a hash table (pandas' Arrow strings loop in Python).

    Arrow strings looked up among strings are matched by Arrow itself (``pyarrow.compute
    .is_in``), without a Python object per row: the score table of a large run has hundreds
    of thousands of rows. A missing value matches nothing, as in the object form.
    """
    import pandas as pd

    listed = list(dict.fromkeys(values))
    if isinstance(series.array, pd.arrays.ArrowStringArray) and all(
        type(v) is str for v in listed
    ):
        import pyarrow as pa
        import pyarrow.compute as pc

        column = pa.array(series.array)
        hit = pc.is_in(column, value_set=pa.array(listed, type=column.type), skip_nulls=True)
        return pd.Series(hit.fill_null(False).to_numpy(zero_copy_only=False), index=series.index)
    wanted = pd.Index(listed, dtype=object)
    found = wanted.get_indexer(pd.Index(series.to_numpy(dtype=object), dtype=object)) >= 0
    return pd.Series(found, index=series.index)


def _known(component: str) -> tuple[int, str] | None:
    """``(position, cause)`` of a known component (:data:`COMPONENT_ORDER`), else None."""
    for position, (name, cause) in enumerate(COMPONENT_ORDER):
        if component == name or (name.endswith(":") and component.startswith(name)):
            return position, cause
    if component.startswith("artifact:"):
        return 1, "evidence missing or invalid"
    return None


def _clip(text: str) -> str:
    text = " ".join(str(text).split())
    if len(text) <= _DETAIL_LIMIT:
        return text
    return text[: _DETAIL_LIMIT - 1].rstrip() + "…"


def _column(frame: pd.DataFrame, name: str, default: object) -> pd.Series:
    import pandas as pd

    if name in frame.columns:
        return frame[name]
    return pd.Series([default] * len(frame), index=frame.index, dtype=object)


def _loading_observed(rows: pd.DataFrame) -> set[object]:
    """Conditions where the agent loaded a skill in at least one item (loading was up to it)."""
    loaded = _column(rows, "skill_loaded", False).fillna(False).astype(bool)
    inferred = _column(rows, "inferred_skill", None)
    loaded = loaded | (inferred.notna() & ~_isin(inferred, ["none", ""]))
    return set(_column(rows, "condition", None)[loaded].unique())


def _routing(rows: pd.DataFrame) -> pd.DataFrame:
    """The routing cause of each failing item whose skill choice went wrong (see module doc)."""
    import pandas as pd

    expected = _column(rows, "expected_skill", None)
    inferred = _column(rows, "inferred_skill", None).fillna("none")
    condition = _column(rows, "condition", None)
    failed = ~_column(rows, "passed", False).fillna(False).astype(bool)
    ok = _column(rows, "status", "ok").fillna("ok") == "ok"
    observable = _isin(condition, _loading_observed(rows))
    wrong = expected.notna() & (expected.astype(str) != inferred.astype(str))
    chosen = rows[failed & ok & observable & wrong]
    if chosen.empty:
        return pd.DataFrame(columns=list(REASON_COLUMNS))
    exp = chosen["expected_skill"].astype(str)
    inf = chosen["inferred_skill"].fillna("none").astype(str)
    cause = pd.Series("wrong skill loaded", index=chosen.index)
    cause[inf == "none"] = "skill not loaded"
    cause[exp == "none"] = "skill loaded when none expected"
    return pd.DataFrame(
        {
            "item_key": chosen["item_key"].astype(str),
            "rank": _ROUTING_RANK,
            "component": "skill_trigger",
            "cause": cause,
            "detail": "expected " + exp + ", inferred " + inf,
            "passed": False,
        }
    )


def _errors(rows: pd.DataFrame) -> pd.DataFrame:
    import pandas as pd

    status = _column(rows, "status", "ok").fillna("ok").astype(str)
    failed = ~_column(rows, "passed", False).fillna(False).astype(bool)
    # a failing graded row whose class names a timeout or a limit (an agent timeout the
    # verifier still graded, a context window exceeded) did not finish either
    classes = _column(rows, "error_class", None)
    named_unfinished = _isin(classes, {c for c in classes.dropna().unique() if class_cause(c)})
    chosen = rows[~_isin(status, ["ok"]) | (failed & named_unfinished)]
    if chosen.empty:
        return pd.DataFrame(columns=list(REASON_COLUMNS))
    status = status[chosen.index]
    error_class = _column(chosen, "error_class", None).fillna("").astype(str)
    message = _column(chosen, "error_message", None).fillna("").astype(str)
    cause = pd.Series(
        [error_cause(s, c) for s, c in zip(status.tolist(), error_class.tolist(), strict=True)],
        index=chosen.index, dtype=object,
    )
    # "error: CLASS" names its class, so its detail is the message alone; a timeout, a limit
    # or a cancellation names what happened, and its detail the class (unless it only repeats it)
    named = error_class.where((error_class != status) & (error_class != cause), "")
    detail = message.where(cause.str.startswith("error"), (named + ": " + message).str.strip(": "))
    return pd.DataFrame(
        {
            "item_key": chosen["item_key"].astype(str),
            "rank": _ERROR_RANK,
            "component": "status",
            "cause": cause,
            "detail": detail,
            "passed": False,
        }
    )


def _gates(scores: pd.DataFrame) -> dict[tuple[str, str], int]:
    """``{(item_key, component): order}`` of the gates the ``total`` rows name."""
    total = scores[(scores["component"] == "total") & scores["detail"].fillna("").ne("")]
    out: dict[tuple[str, str], int] = {}
    for key, detail in zip(total["item_key"].tolist(), total["detail"].tolist(), strict=True):
        for order, part in enumerate(str(detail).split(", ")):
            if part.startswith("gate failed: "):
                out[(str(key), part.removeprefix("gate failed: "))] = order
    return out


def _component_reasons(rows: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    """Every failing component of the items in ``rows`` (passing items: what decided them)."""
    import pandas as pd

    passed = dict(
        zip(
            rows["item_key"].astype(str).tolist(),
            _column(rows, "passed", False).fillna(False).astype(bool).tolist(),
            strict=True,
        )
    )
    chosen = scores[_isin(scores["item_key"], passed.keys())]
    chosen = chosen[~_isin(chosen["component"], CONTEXT_COMPONENTS)]
    # a failure names each required artifact with its reason ("artifacts" only sums them);
    # a pass says "artifacts 3/3"
    artifact = chosen["component"].str.startswith("artifact:")
    ok = chosen["passed"].astype("boolean").fillna(False).astype(bool)
    per_artifact = set(chosen.loc[artifact & ~ok, "item_key"].tolist())
    summed = (chosen["component"] == "artifacts") & _isin(chosen["item_key"], per_artifact)
    chosen = chosen[~summed & ~(artifact & ok)]
    if chosen.empty:
        return pd.DataFrame(columns=list(REASON_COLUMNS))
    item_passed = chosen["item_key"].map(passed).astype(bool)
    comp_passed = chosen["passed"].astype("boolean").fillna(False).astype(bool)
    # a failing item lists what failed; a passing one what it passed on
    chosen = chosen[comp_passed == item_passed]
    gates = _gates(scores[_isin(scores["item_key"], chosen["item_key"])])
    records = []
    for key, component, value, max_value, ok, detail, statement in zip(
        chosen["item_key"].astype(str).tolist(),
        chosen["component"].astype(str).tolist(),
        chosen["value"].tolist(),
        chosen["max_value"].tolist(),
        chosen["passed"].tolist(),
        chosen["detail"].tolist(),
        _column(chosen, "expectation", None).tolist(),
        strict=True,
    ):
        known = _known(component)
        gate = gates.get((key, "artifacts" if component.startswith("artifact:") else component))
        if component in UNFINISHED_COMPONENTS and not ok:
            # a limit or an incomplete score: the sample did not finish, whatever it scored
            rank, cause = _ERROR_RANK, component_cause(
                component, detail if isinstance(detail, str) else None)
        elif ok:
            rank, cause = _COMPONENT_RANK + (known[0] if known else len(COMPONENT_ORDER)), "passed"
        elif gate is not None:
            rank, cause = _GATE_RANK + gate, known[1] if known else f"{component} failed"
        elif known is not None:
            rank, cause = _COMPONENT_RANK + known[0], known[1]
        else:
            rank, cause = _COMPONENT_RANK + len(COMPONENT_ORDER), f"{component} failed"
        text = "" if detail is None or pd.isna(detail) else str(detail)
        text = text.removeprefix(_DETAIL_PREFIXES.get(component, ""))
        if component.startswith("artifact:"):
            status, _, why = text.partition(": ")
            path = component.removeprefix("artifact:")
            text = f"{path} {status}" + (f": {why}" if why and why != status else "")
        if isinstance(statement, str) and statement:
            text = f"{statement!r}: {text}" if text else repr(statement)
        if not text and pd.notna(max_value) and float(max_value) > 0 and pd.notna(value):
            text = f"{float(value):g}/{float(max_value):g}"
        records.append((key, rank, component, cause, text, bool(ok)))
    return pd.DataFrame.from_records(records, columns=list(REASON_COLUMNS))


def _threshold(rows: pd.DataFrame, scores: pd.DataFrame, explained: set[str]) -> pd.DataFrame:
    """A failing item with recorded components none of which failed: its score was too low."""
    import pandas as pd

    failed = ~_column(rows, "passed", False).fillna(False).astype(bool)
    ok = _column(rows, "status", "ok").fillna("ok") == "ok"
    keys = rows["item_key"].astype(str)
    recorded = set(scores["item_key"].astype(str).tolist())
    chosen = rows[failed & ok & _isin(keys, recorded) & ~_isin(keys, explained)]
    if chosen.empty:
        return pd.DataFrame(columns=list(REASON_COLUMNS))
    score = _column(chosen, "score", None)
    detail = score.map(lambda s: f"score {s:.2f}" if pd.notna(s) else "no score")
    return pd.DataFrame(
        {
            "item_key": chosen["item_key"].astype(str),
            "rank": _THRESHOLD_RANK,
            "component": "total",
            "cause": "score below the pass threshold",
            "detail": detail,
            "passed": False,
        }
    )


def reason_table(rows: pd.DataFrame, scores: pd.DataFrame | None) -> pd.DataFrame:
    """Every reason of every item in ``rows``, in the order that explains the item.

    Args:
        rows: Result rows (at least ``item_key``; ``status``, ``passed``, ``error_class``,
            ``error_message``, ``condition``, ``expected_skill``, ``inferred_skill`` and
            ``skill_loaded`` are used where present).
        scores: The run's ``scores.parquet`` rows (any superset of the items), or None when
            the run recorded none.

    Returns:
        Columns :data:`REASON_COLUMNS`, sorted by item key and ``rank`` (lower explains more;
        the first row of a failing item is its primary cause). A passing item's rows are the
        components it passed on (``cause`` ``"passed"``). Items without any recorded reason
        have no row. ``detail`` is redacted and clipped to 400 characters.

    Examples:
        >>> import pandas as pd
        >>> rows = pd.DataFrame({"item_key": ["k"], "passed": [False], "status": ["ok"]})
        >>> scores = pd.DataFrame({"item_key": ["k"], "component": ["expected_patterns"],
        ...     "value": [1.0], "max_value": [2.0], "passed": [False],
        ...     "detail": ["missing: 8080"]})
        >>> reason_table(rows, scores)[["cause", "detail"]].iloc[0].tolist()
        ['missing expected pattern', '8080']
    """
    import pandas as pd

    rows = _keyed(rows.reset_index(drop=True))
    parts = [_errors(rows), _routing(rows)]
    if scores is not None and not scores.empty:
        scores = scores[_isin(scores["item_key"], set(rows["item_key"].astype(str).tolist()))]
        parts.append(_component_reasons(rows, scores))
        explained = {
            k
            for p in parts
            if not p.empty
            for k in p.loc[~p["passed"].astype(bool), "item_key"].tolist()
        }
        parts.append(_threshold(rows, scores, explained))
    parts = [p for p in parts if not p.empty]
    if not parts:
        return pd.DataFrame(columns=list(REASON_COLUMNS))
    table = pd.concat(parts, ignore_index=True)
    table["rank"] = table["rank"].astype(int)
    table["passed"] = table["passed"].astype(bool)
    unique = {
        d: _clip(redact_text(relative_to_workspace(d)))
        for d in table["detail"].fillna("").astype(str).unique()
    }
    table["detail"] = table["detail"].fillna("").astype(str).map(unique)
    return table.sort_values(["item_key", "rank"], kind="stable").reset_index(drop=True)


def _keyed(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with an ``item_key``: a tidy table without one gets ``row-N`` (no scores match)."""
    if "item_key" in rows.columns:
        return rows
    return rows.assign(item_key=[f"row-{i}" for i in range(len(rows))])


def _lines(shown: pd.DataFrame) -> tuple[dict[str, str], dict[str, str]]:
    """Each item's reason line and primary cause from its reasons (in rank order).

    A failure's parts are grouped by cause ("evidence missing or invalid: a missing; b
    invalid"), each read "cause: detail"; a pass lists "component detail" after "passed on".
    """
    parts: dict[str, dict[str, list[str]]] = {}
    causes: dict[str, str] = {}
    passing: set[str] = set()
    for key, cause, component, detail, ok in zip(
        *(shown[c].tolist() for c in ("item_key", "cause", "component", "detail", "passed")),
        strict=True,
    ):
        label = component if ok else cause
        causes.setdefault(key, cause)
        if ok:
            passing.add(key)
        details = parts.setdefault(key, {}).setdefault(label, [])
        if detail:
            details.append(detail)
    lines = {}
    for key, groups in parts.items():
        passed = key in passing
        text = " · ".join(
            (f"{label} {'; '.join(d)}" if passed else f"{label}: {'; '.join(d)}").rstrip(": ")
            for label, d in groups.items()
        )
        lines[key] = f"passed on {text}" if passed else text
    return lines, causes


def item_reasons(rows: pd.DataFrame, scores: pd.DataFrame | None) -> pd.DataFrame:
    """One line per item saying why it passed or failed, and its primary cause.

    Args:
        rows: Result rows (see :func:`reason_table`).
        scores: The run's score rows, or None.

    Returns:
        Columns :data:`ITEM_REASON_COLUMNS`, one row per item of ``rows`` in their order:
        ``cause`` is a failing item's primary cause (``"passed"`` for a pass, ``"no reasons
        recorded"`` when nothing was), ``reason`` the whole line
        (``"missing expected pattern: missing: 8080 · verifier failed: exit 1: ..."``), and
        ``reasons_recorded`` whether the run recorded anything for the item.

    Examples:
        >>> import pandas as pd
        >>> rows = pd.DataFrame({"item_key": ["a", "b"], "passed": [False, True]})
        >>> item_reasons(rows, None)["reason"].tolist()
        ['no reasons recorded', 'no reasons recorded']
    """
    import pandas as pd

    rows = _keyed(rows)
    table = reason_table(rows, scores)
    keys = rows["item_key"].astype(str)
    if table.empty:
        lines: dict[str, str] = {}
        causes: dict[str, str] = {}
    else:
        failing = ~table["passed"]
        # a failing item lists only what failed; a passing one what it passed on
        has_failure = set(table.loc[failing, "item_key"].tolist())
        shown = table[failing | ~_isin(table["item_key"], has_failure)]
        lines, causes = _lines(shown)
    # object dtype: with no reason at all the maps are all-NaN floats, which take no text
    reason = keys.map(lines).astype(object)
    return pd.DataFrame(
        {
            "item_key": keys.to_numpy(),
            "cause": keys.map(causes).astype(object).fillna(NO_REASONS).to_numpy(),
            "reason": reason.fillna(NO_REASONS).to_numpy(),
            "reasons_recorded": reason.notna().to_numpy(),
        }
    )


def _component_causes(failed: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    """``item_key, rank, cause`` of every failing component of the failing items, vectorised.

    The same ranks and causes as :func:`reason_table` (gates in the run's order first, then
    :data:`COMPONENT_ORDER`, then other components), without building any text.
    """
    import numpy as np
    import pandas as pd

    keys = set(failed["item_key"].astype(str).tolist())
    mine = scores[_isin(scores["item_key"], keys)]
    ok = mine["passed"].astype("boolean").fillna(False).astype(bool)
    chosen = mine[~ok & ~_isin(mine["component"], CONTEXT_COMPONENTS)]
    component = chosen["component"].astype(str).to_numpy(dtype=object)
    position = np.full(len(chosen), len(COMPONENT_ORDER), dtype=np.int64)
    cause = np.array([f"{c} failed" for c in component], dtype=object)
    for index, (name, label) in reversed(list(enumerate(COMPONENT_ORDER))):
        hit = (
            np.char.startswith(component.astype(str), name)
            if name.endswith(":")
            else component == name
        )
        position[hit], cause[hit] = index, label
    artifact = np.char.startswith(component.astype(str), "artifact:")
    position[artifact], cause[artifact] = 1, "evidence missing or invalid"
    rank = _COMPONENT_RANK + position
    unfinished = np.isin(component, list(UNFINISHED_COMPONENTS))
    if unfinished.any():
        details = chosen["detail"].to_numpy(dtype=object)[unfinished]
        rank[unfinished] = _ERROR_RANK
        cause[unfinished] = [
            component_cause(c, None if d is None or d != d else str(d))
            for c, d in zip(component[unfinished], details, strict=True)
        ]
    gates = _gates(mine[mine["component"] == "total"])
    if gates:
        gate_of = [
            gates.get((k, "artifacts" if c.startswith("artifact:") else c))
            for k, c in zip(chosen["item_key"].astype(str).tolist(), component, strict=True)
        ]
        # bool and int64 even when empty: an empty list would give float arrays, not indices
        gated = np.array([g is not None for g in gate_of], dtype=bool)
        rank[gated] = _GATE_RANK + np.array([g for g in gate_of if g is not None], dtype=np.int64)
    return pd.DataFrame(
        {"item_key": chosen["item_key"].astype(str).to_numpy(), "rank": rank, "cause": cause}
    )


def primary_causes(rows: pd.DataFrame, scores: pd.DataFrame | None) -> pd.Series:
    """The primary cause of each item of ``rows`` (fast: no reason text is built).

    Args:
        rows: Result rows (failing ones get a cause; passing ones ``"passed"``, or "no
            reasons recorded" when the run recorded nothing for them).
        scores: The run's score rows, or None.

    Returns:
        One cause per row, in its order (the ``cause`` of :func:`item_reasons`).
    """
    import pandas as pd

    rows = _keyed(rows.reset_index(drop=True))
    keys = pd.Series(rows["item_key"].astype(str).to_numpy(dtype=object), index=rows.index)
    passed = _column(rows, "passed", False).fillna(False).astype(bool)
    parts = [_errors(rows)[["item_key", "rank", "cause"]], _routing(rows)[["item_key", "rank",
                                                                           "cause"]]]
    recorded: set[str] = set()
    if scores is not None and not scores.empty:
        failing = rows[~passed]
        parts.append(_component_causes(failing, scores))
        # only the matching keys become Python strings (a run's scores hold every item's)
        hit = _isin(scores["item_key"], set(keys)).to_numpy()
        recorded = set(scores["item_key"][hit].astype(str).to_numpy(dtype=object))
    table = pd.concat([p for p in parts if not p.empty] or [parts[0]], ignore_index=True)
    first = table.sort_values(["item_key", "rank"], kind="stable").drop_duplicates("item_key")
    first_keys = first["item_key"].astype(str).to_numpy(dtype=object)
    lookup = dict(zip(first_keys, first["cause"].to_numpy(dtype=object), strict=True))
    causes = keys.map(lookup).astype(object)
    below = causes.isna() & ~passed & _isin(keys, recorded)
    causes[below] = "score below the pass threshold"
    causes[causes.isna() & ~passed] = NO_REASONS
    causes[passed & causes.isna()] = "passed"
    causes[passed & ~_isin(keys, recorded)] = NO_REASONS  # as item_reasons: nothing to say
    return causes.set_axis(rows.index)


def failure_causes(
    rows: pd.DataFrame,
    scores: pd.DataFrame | None,
    by: Sequence[str] = ("condition",),
    causes: Sequence[str] | None = None,
) -> pd.DataFrame:
    """What the failures of each group are made of: failing items counted by primary cause.

    Each failing item (errors and timeouts included) counts once, under its primary cause, so
    the counts of a group add up to its failures. Whether an edit moved routing ("skill not
    loaded") or execution ("verifier failed", "missing expected pattern") reads off one row.

    Args:
        rows: Result rows.
        scores: The run's score rows, or None.
        by: Grouping columns (present in ``rows``).
        causes: The primary cause of each failing row of ``rows``, in order, when the caller
            has them already (:func:`primary_causes` of those rows); None: computed here.

    Returns:
        Columns ``*by, outcome, cause, failures, share`` (``share`` of the group's failures;
        ``outcome`` "did not finish" for a timeout, a limit, a cancellation, a sandbox kill or
        an error, else "answered wrong": see :func:`~evalkit.results.cause_outcome`), a
        group's unfinished items first, each outcome's causes from the most to the least
        frequent; one row per group and cause.
    """
    import pandas as pd

    by = [c for c in by if c in rows.columns]
    failed = rows[~_column(rows, "passed", False).fillna(False).astype(bool)]
    columns = [*by, "outcome", "cause", "failures", "share"]
    if failed.empty:
        return pd.DataFrame(columns=columns)
    frame = failed[by].reset_index(drop=True).assign(
        cause=primary_causes(failed, scores).to_numpy() if causes is None else causes
    )
    counts = frame.groupby([*by, "cause"], dropna=False, sort=False).size().rename("failures")
    out = counts.reset_index()
    totals = out.groupby(by, dropna=False)["failures"].transform("sum") if by else out[
        "failures"
    ].sum()
    out["share"] = out["failures"] / totals
    out["outcome"] = outcomes(out["cause"])
    out["_unfinished"] = out["outcome"] != DID_NOT_FINISH
    out = out.sort_values([*by, "_unfinished", "failures", "cause"],
                          ascending=[True] * len(by) + [True, False, True])
    return out.reset_index(drop=True)[columns]


def describe_causes(causes: pd.DataFrame, by: Sequence[str] = ("condition",)) -> list[str]:
    """One line per group of :func:`failure_causes`, unfinished items apart from wrong answers.

    ``"plugin: 8 failures: did not finish 8 (8 timeout); answered wrong 0"``.

    Args:
        causes: The output of :func:`failure_causes`.
        by: Its grouping columns.

    Returns:
        The lines, in the frame's group order.
    """
    by = [c for c in by if c in causes.columns]
    if causes.empty:
        return []
    lines = []
    groups = causes.groupby(by, sort=False, dropna=False) if by else [((), causes)]
    for key, group in groups:
        label = " / ".join(str(k) for k in (key if isinstance(key, tuple) else (key,)))
        total = int(group["failures"].sum())
        outcome = group["outcome"] if "outcome" in group else outcomes(group["cause"])
        parts = []
        for name in OUTCOMES:
            mine = group[(outcome == name).to_numpy()]
            counts = zip(mine["cause"], mine["failures"], strict=True)
            listed = ", ".join(f"{int(n)} {c}" for c, n in counts)
            parts.append(f"{name} {int(mine['failures'].sum())}" + (f" ({listed})" if listed
                                                                     else ""))
        head = f"{label}: " if label else ""
        lines.append(f"{head}{total} failure{'s' if total != 1 else ''}: {'; '.join(parts)}")
    return lines
