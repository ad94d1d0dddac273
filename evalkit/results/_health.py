"""Is a run usable? Conditions and providers whose every item ended in an error.

A run whose items all failed for infrastructure reasons (a dead model server, a refused key, a
missing binary) has a 0 % pass rate that measures nothing. :func:`find_failure` reads the
result rows and says when that is so, for the whole run or for some of its conditions or
providers; :func:`errored_conditions` lists the conditions of a group of rows that hold only
errors, which the analyses report instead of computing metrics on them.

An item counts as errored when its ``status`` is ``error`` or ``timeout`` (``skipped`` rows of
imported runs are not items that ran, and are left out).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from evalkit.results._manifest import FailureRecord

#: Statuses of items that ran and produced no outcome.
ERROR_STATUSES = ("error", "timeout")


def _ran_mask(rows: pd.DataFrame) -> pd.Series:
    """Which rows ran (all but ``skipped``; none without a ``status`` column)."""
    if "status" not in rows:
        return pd.Series(False, index=rows.index)
    return rows["status"].astype(str) != "skipped"


def _ran(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[_ran_mask(rows)]


def _errored(rows: pd.DataFrame) -> pd.Series:
    return rows["status"].astype(str).isin(ERROR_STATUSES)


def dominant_error(rows: pd.DataFrame) -> tuple[str, int, str]:
    """The most frequent error class of errored rows, its count and its most frequent message.

    Args:
        rows: Result rows, all of them errored (``error_class``, ``error_message``).

    Returns:
        ``(error_class, count, message)``; ties go to the class and message first in sort order.

    Examples:
        >>> rows = pd.DataFrame({"error_class": ["auth", "timeout", "auth"],
        ...                      "error_message": ["HTTP 401", "slow", "HTTP 401"]})
        >>> dominant_error(rows)
        ('auth', 2, 'HTTP 401')
    """
    classes = rows["error_class"].fillna("unknown").astype(str)
    messages = rows["error_message"].fillna("").astype(str)
    counts = classes.value_counts()
    top = sorted(counts.index[counts == counts.max()])[0]
    chosen = messages[classes == top].value_counts()
    message = sorted(chosen.index[chosen == chosen.max()])[0]
    return top, int(counts[top]), message


def errored_conditions(rows: pd.DataFrame) -> dict[str, FailureRecord]:
    """Conditions of ``rows`` whose every item ended in an error or a timeout.

    Args:
        rows: Result rows of one group (e.g. one provider and lane) with ``condition`` and
            ``status`` (without ``status`` nothing counts as errored).

    Returns:
        ``{condition: record}`` with the dominant error of each such condition.
    """
    if "condition" not in rows:
        return {}
    ran = _ran_mask(rows).to_numpy(dtype=bool)
    if not ran.any():
        return {}
    # Whether each condition errored throughout, from two columns: the rows (all columns) of
    # a condition are gathered only for one that did.
    errored = _errored(rows)[ran]
    conditions = rows["condition"][ran]
    out: dict[str, FailureRecord] = {}
    for condition, every in errored.groupby(conditions, sort=True, observed=True).all().items():
        if every:
            # A record (a pydantic model) only for a condition that failed: a healthy run's
            # comparison does not load pydantic.
            from evalkit.results._manifest import FailureRecord

            group = rows[ran & (rows["condition"] == condition).to_numpy(dtype=bool)]
            error_class, count, message = dominant_error(group)
            out[str(condition)] = FailureRecord(
                scope="condition", groups=[str(condition)], items=len(group),
                error_class=error_class, count=count, message=message,
            )
    return out


def find_failure(rows: pd.DataFrame) -> FailureRecord | None:
    """Why a run failed, or None when it is usable.

    The run failed when every item errored (scope ``run``), else when every item of one or
    more conditions errored (scope ``condition``), else when every item of one or more
    providers errored (scope ``provider``).

    Args:
        rows: The run's result rows (``condition``, ``provider``, ``status``, ``error_class``,
            ``error_message``).

    Returns:
        The failure (its dominant error taken over the failed scope's items), or None.

    Examples:
        >>> rows = pd.DataFrame({
        ...     "condition": ["none", "none", "preloaded", "preloaded"],
        ...     "provider": "simulated",
        ...     "status": ["error", "error", "ok", "error"],
        ...     "error_class": ["connection_error", "connection_error", None, "timeout"],
        ...     "error_message": ["refused", "refused", None, "slow"],
        ... })
        >>> failure = find_failure(rows)
        >>> failure.scope, failure.groups, failure.error_class, failure.count
        ('condition', ['none'], 'connection_error', 2)
        >>> find_failure(rows.assign(status="ok")) is None
        True
    """
    from evalkit.results._manifest import FailureRecord

    ran = _ran(rows)
    if ran.empty:
        return None
    errored = _errored(ran)
    if errored.all():
        error_class, count, message = dominant_error(ran)
        return FailureRecord(scope="run", items=len(ran), error_class=error_class, count=count,
                             message=message)
    for scope in ("condition", "provider"):
        if scope not in ran:
            continue
        names = ran[scope].fillna("").astype(str)
        failed = sorted(str(n) for n, bad in errored.groupby(names).all().items() if bad)
        if failed:
            chosen = ran[names.isin(failed)]
            error_class, count, message = dominant_error(chosen)
            return FailureRecord(scope=scope, groups=failed, items=len(chosen),
                                 error_class=error_class, count=count, message=message)
    return None
