"""Did an item finish? The causes that say it did not, and tables that keep them apart.

A failing item either **did not finish** (a timeout, a limit it hit, a cancellation, a sandbox
that killed it, an error) or it finished and **answered wrong** (a missing pattern, a failing
verifier, the skill not loaded). A table that mixes the two misreads an edit that avoids
timeouts as one that answers better, so every failure-cause table carries the outcome of each
cause (:func:`cause_outcome`) and counts the two apart.

The causes of items that did not finish come from the harness's own records:

- a row's ``status`` and ``error_class`` (:func:`unfinished_causes`): ``timeout`` rows (evalkit's
  own provider deadline, Inspect's time and working limits, Harbor's and Terminal-Bench's agent
  timeouts) are ``timeout``; errors whose class names a timeout, a cancellation, a sandbox kill
  or a limit are those; other errors ``error: CLASS``;
- score components that record an unfinished sample (:data:`UNFINISHED_COMPONENTS`): Inspect's
  ``limit`` row (a token, message, turn, cost or context limit) and ``incomplete`` row (a
  scorer that marked its score ``incomplete``, e.g. an HTTP timeout), whose detail names what
  happened (:func:`component_cause`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import pandas as pd

#: The outcome of a failure that ended before the item was answered and graded.
DID_NOT_FINISH: Final = "did not finish"
#: The outcome of a failure that ran to its end and was graded as failing.
ANSWERED_WRONG: Final = "answered wrong"
#: Outcomes in the order the tables list them.
OUTCOMES: Final = (DID_NOT_FINISH, ANSWERED_WRONG)

TIMEOUT: Final = "timeout"
CANCELLED: Final = "cancelled"
SANDBOX_KILLED: Final = "sandbox killed"
INCOMPLETE: Final = "incomplete"
#: Causes of items that did not finish, besides ``error: CLASS`` and ``KIND limit``.
UNFINISHED: Final = frozenset({TIMEOUT, CANCELLED, SANDBOX_KILLED, INCOMPLETE})

#: Score components that record a sample that did not finish (written by the importers).
UNFINISHED_COMPONENTS: Final = frozenset({"limit", "incomplete"})

#: Error classes (lower case, letters only, without a module path) and what they name.
_CLASS_CAUSES: Final = {
    **dict.fromkeys(
        ("timeout", "timeouterror", "timeoutexpired", "readtimeout", "connecttimeout",
         "writetimeout", "pooltimeout", "httptimeout", "agenttimeouterror", "agenttimeout",
         "testtimeout", "timelimit", "workinglimit"),
        TIMEOUT,
    ),
    **dict.fromkeys(
        ("cancelled", "canceled", "cancellederror", "operatorlimit", "interrupted",
         "keyboardinterrupt", "usercancel"),
        CANCELLED,
    ),
    **dict.fromkeys(("sandboxkilled", "oomkilled", "outofmemory", "memoryerror", "killed",
                     "sigkill"), SANDBOX_KILLED),
    **dict.fromkeys(("contextwindowexceedederror", "contextlengthexceedederror",
                     "contextlengthexceeded", "contextlimit"), "context limit"),
    **dict.fromkeys(("outputtokenexceedederror", "outputlengthexceedederror"), "output limit"),
}
_TIMEOUT_TEXT = re.compile(r"time[ds]?[ _-]?out|deadline exceeded", re.IGNORECASE)
_LIMIT_CLASS = re.compile(r"^([a-z]+)_limit$")
_LIMIT_DETAIL = re.compile(r"hit its ([a-z]+) limit")


def class_cause(error_class: str | None) -> str | None:
    """What an error class says happened, when it names an unfinished item, else None.

    Timeouts (``TimeoutError``, ``httpx.ReadTimeout``, Harbor's ``AgentTimeoutError``,
    Terminal-Bench's ``agent_timeout``), cancellations (``CancelledError``), sandbox kills
    (``OOMKilled``), and limits (Inspect's ``token_limit``, Harbor's
    ``ContextWindowExceededError``). Infrastructure failures that merely contain the word
    (``EnvironmentStartTimeoutError``) are errors, not the item's own timeout.

    Examples:
        >>> class_cause("httpx.ReadTimeout"), class_cause("agent_timeout")
        ('timeout', 'timeout')
        >>> class_cause("token_limit"), class_cause("ContextWindowExceededError")
        ('token limit', 'context limit')
        >>> class_cause("EnvironmentStartTimeoutError") is None
        True
    """
    name = error_class or ""
    plain = re.sub(r"[^a-z]", "", name.rsplit(".", 1)[-1].lower())
    if plain in _CLASS_CAUSES:
        return _CLASS_CAUSES[plain]
    limit = _LIMIT_CLASS.match(name)
    return f"{limit.group(1)} limit" if limit else None


def error_cause(status: str, error_class: str | None) -> str:
    """The cause of a row that did not end ``ok``, from its status and error class.

    Args:
        status: The row's ``status`` (``timeout``, ``error``, ...).
        error_class: Its ``error_class`` (None or empty when it recorded none).

    Returns:
        ``timeout`` (every ``timeout`` row), what :func:`class_cause` reads in the class,
        ``error: CLASS`` for another error, or the status itself for another status.

    Examples:
        >>> error_cause("timeout", "AgentTimeoutError")
        'timeout'
        >>> error_cause("error", "httpx.ReadTimeout"), error_cause("error", "CancelledError")
        ('timeout', 'cancelled')
        >>> error_cause("error", "token_limit"), error_cause("error", "RuntimeError")
        ('token limit', 'error: RuntimeError')
    """
    if status == "timeout":
        return TIMEOUT
    if status != "error":
        return class_cause(error_class) or status
    return class_cause(error_class) or f"error: {error_class or ''}".rstrip(": ")


def component_cause(component: str, detail: str | None) -> str:
    """The cause an :data:`UNFINISHED_COMPONENTS` row names, from its detail.

    Examples:
        >>> component_cause("limit", "the sample hit its token limit (1000) before it finished")
        'token limit'
        >>> component_cause("incomplete", "agent_scorer marked its score incomplete: "
        ...                 "INCOMPLETE: HTTP timeout after 120 s")
        'timeout'
        >>> component_cause("limit", "the sample hit its operator limit (1) before it finished")
        'cancelled'
    """
    text = detail or ""
    if component == "limit":
        kind = _LIMIT_DETAIL.search(text)
        if kind is None:
            return "limit"
        if kind.group(1) in ("time", "working"):
            return TIMEOUT
        return CANCELLED if kind.group(1) == "operator" else f"{kind.group(1)} limit"
    return TIMEOUT if _TIMEOUT_TEXT.search(text) else INCOMPLETE


def cause_outcome(cause: str) -> str:
    """``did not finish`` or ``answered wrong``: the outcome a primary cause stands for.

    Examples:
        >>> cause_outcome("timeout"), cause_outcome("error: RuntimeError")
        ('did not finish', 'did not finish')
        >>> cause_outcome("token limit"), cause_outcome("missing expected pattern")
        ('did not finish', 'answered wrong')
    """
    if cause in UNFINISHED or cause.startswith("error") or cause.endswith(" limit"):
        return DID_NOT_FINISH
    return ANSWERED_WRONG


def outcomes(causes: pd.Series) -> pd.Series:
    """:func:`cause_outcome` of each cause of a column."""
    unique = {c: cause_outcome(str(c)) for c in causes.unique()}
    return causes.map(unique).astype(object)


#: Columns of :func:`cause_changes`.
CHANGE_COLUMNS: Final = ("outcome", "cause", "baseline", "candidate", "change")


def cause_changes(
    baseline: pd.DataFrame, candidate: pd.DataFrame, by: Sequence[str] = ()
) -> pd.DataFrame:
    """Failing items by outcome and primary cause on two sides, and the change.

    Args:
        baseline: A :func:`~evalkit.results.failure_causes` table of the baseline side.
        candidate: The same of the candidate side.
        by: Grouping columns kept apart (present in both tables; others are summed over).

    Returns:
        Columns ``*by, outcome, cause, baseline, candidate, change`` (counts of failing items,
        ``change`` = candidate - baseline), "did not finish" before "answered wrong", then the
        largest change in either direction first.

    Examples:
        >>> import pandas as pd
        >>> base = pd.DataFrame({"cause": ["timeout"], "failures": [20]})
        >>> cand = pd.DataFrame({"cause": ["timeout", "verifier failed"], "failures": [8, 1]})
        >>> cause_changes(base, cand)[["cause", "baseline", "candidate"]].values.tolist()
        [['timeout', 20, 8], ['verifier failed', 0, 1]]
    """
    import pandas as pd

    keep = [c for c in by if c in baseline.columns and c in candidate.columns]
    sides = []
    for name, table in (("baseline", baseline), ("candidate", candidate)):
        if table.empty:
            sides.append(pd.Series(dtype="int64", name=name))
            continue
        counts = table.groupby([*keep, "cause"], sort=False, dropna=False)["failures"].sum()
        sides.append(counts.rename(name))
    table = pd.concat(sides, axis=1).fillna(0).astype(int).reset_index()
    columns = [*keep, *CHANGE_COLUMNS]
    if table.empty:
        return pd.DataFrame(columns=columns)
    table = table.rename(columns={"index": "cause"}) if "cause" not in table else table
    table["change"] = table["candidate"] - table["baseline"]
    table["outcome"] = outcomes(table["cause"])
    order = table["outcome"].map({o: i for i, o in enumerate(OUTCOMES)})
    table = table.assign(_order=order, _size=-table["change"].abs()).sort_values(
        [*keep, "_order", "_size", "cause"], kind="stable"
    )
    return table.reset_index(drop=True)[columns]


def describe_changes(changes: pd.DataFrame) -> list[str]:
    """One line per outcome: ``"did not finish: timeout 20 -> 8 (-12)"``.

    Args:
        changes: A :func:`cause_changes` table (without grouping columns, or one group's rows).

    Returns:
        ``"did not finish 20 -> 8 (-12): timeout 20 -> 8 (-12)"`` then ``"answered wrong ..."``:
        each outcome's total, then its causes, largest change first.

    Examples:
        >>> import pandas as pd
        >>> changes = pd.DataFrame({"outcome": ["did not finish"], "cause": ["timeout"],
        ...     "baseline": [20], "candidate": [8], "change": [-12]})
        >>> describe_changes(changes)
        ['did not finish: timeout 20 -> 8 (-12)', 'answered wrong: 0 -> 0']
    """
    lines = []
    for outcome in OUTCOMES:
        mine = changes[changes["outcome"] == outcome] if not changes.empty else changes
        if mine.empty:
            lines.append(f"{outcome}: 0 -> 0")
            continue
        parts = [
            f"{cause} {int(b)} -> {int(c)} ({int(c) - int(b):+d})"
            for cause, b, c in zip(mine["cause"], mine["baseline"], mine["candidate"],
                                   strict=True)
        ]
        if len(parts) > 1:
            b, c = int(mine["baseline"].sum()), int(mine["candidate"].sum())
            parts.insert(0, f"{b} -> {c} ({c - b:+d}) of which")
        lines.append(f"{outcome}: " + ", ".join(parts).replace("of which,", "of which"))
    return lines
