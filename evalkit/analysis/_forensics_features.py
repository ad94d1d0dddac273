"""What separates a case's failing trials from its passing ones (the forensics' features).

A feature is a yes/no fact about one trial: the skill loaded or not, which skill, the item's
status and error class, a tool the agent called or did not call, a scoring component failing.
Each is ranked by how much more often it holds in the failing trials than in the passing ones.

The features are of two kinds. A **cause** is something the agent did or that happened to the
item: its routing (the skill loaded or not, which one), its status and error, the tools it
called. A **scoring component** failing (``expected_patterns fails``, ``verifier fails``) is
what the score saw: it restates the outcome rather than explaining it, so
:func:`distinguishing` ranks the causes and :func:`score_saw` lists the components apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from evalkit.analysis._forensics_align import events_of, tools_called

DISTINGUISHING_COLUMNS = (
    "feature", "failing_with", "failing", "passing_with", "passing", "separation", "sentence",
)


def trial_ids(frame: pd.DataFrame) -> pd.MultiIndex:
    """``(side, item_key)`` of each row: an item key repeats between two runs, its side not."""
    return pd.MultiIndex.from_arrays(
        [frame["side"].astype(str), frame["item_key"].astype(str)], names=["side", "item_key"]
    )


def _text(trials: pd.DataFrame, column: str) -> pd.Series:
    return trials[column].astype("string").fillna("").astype(str)


def _tool_features(
    trials: pd.DataFrame, records: Mapping[tuple[str, str], Any]
) -> dict[str, pd.Series]:
    """Each tool called in some trial with a transcript: called, and not called."""
    ids = list(zip(trials["side"].astype(str), trials["item_key"].astype(str), strict=True))
    known = pd.Series([i in records for i in ids], index=trials.index)
    if not known.any():
        return {}
    called = [tools_called(events_of(records[i])) if i in records else set() for i in ids]
    features: dict[str, pd.Series] = {}
    for tool in sorted(set().union(*called)):
        uses = pd.Series([tool in names for names in called], index=trials.index)
        features[f"the agent calls {tool}"] = uses & known
        features[f"the agent does not call {tool}"] = ~uses & known
    return features


def feature_table(
    trials: pd.DataFrame,
    components: pd.DataFrame,
    records: Mapping[tuple[str, str], Any] | None = None,
) -> pd.DataFrame:
    """One boolean column per feature of a trial, indexed like ``trials``.

    Args:
        trials: The trials (``side``, ``item_key``, ``status``, ``error_class``,
            ``skill_loaded``, ``inferred_skill``).
        components: ``side, item_key, component, passed`` of their scoring components.
        records: Transcript records by ``(side, item_key)``; the tool features need them.

    Returns:
        The features, in their order of precedence: routing, the status, the tools, then
        the scoring components.
    """
    features: dict[str, pd.Series] = {}
    if "skill_loaded" in trials and trials["skill_loaded"].notna().any():
        # an item without a transcript (an error) neither loaded nor skipped the skill
        flag = trials["skill_loaded"].astype("boolean")
        features["the skill is not loaded"] = flag.eq(False).fillna(False).astype(bool)
        features["a skill is loaded"] = flag.eq(True).fillna(False).astype(bool)
    if "inferred_skill" in trials:
        inferred = _text(trials, "inferred_skill")
        for skill in sorted(set(inferred) - {"", "none"}):
            features[f"the agent loads {skill}"] = inferred == skill
    status = _text(trials, "status")
    for value in sorted(set(status) - {"", "ok"}):
        features[f"the item ends in {value}"] = status == value
    if "error_class" in trials:
        error_class = _text(trials, "error_class")
        for value in sorted(set(error_class) - {""} - set(status)):
            features[f"the item fails with {value}"] = error_class == value
    features.update(_tool_features(trials, records or {}))
    if not components.empty:
        passed = components["passed"].astype("boolean").fillna(False).astype(bool)
        ids = trial_ids(trials)
        for component in sorted(components["component"].astype(str).unique()):
            failing = components[~passed & (components["component"].astype(str) == component)]
            features[f"{component} fails"] = pd.Series(
                ids.isin(trial_ids(failing)), index=trials.index
            )
    return pd.DataFrame(features, index=trials.index, dtype=bool)


#: How a routing feature starts (the skill loaded or not, which skill).
ROUTING_PREFIXES = ("the skill", "a skill", "the agent loads")


#: Precedence of a scoring component's feature (after every cause).
_COMPONENT = 3


def _precedence(feature: str) -> int:
    """What happens first explains more: routing, status, tools, then the components."""
    if feature.startswith(ROUTING_PREFIXES):
        return 0
    if feature.startswith("the item"):
        return 1
    if feature.startswith("the agent"):
        return 2
    return _COMPONENT


def is_routing(feature: str) -> bool:
    """Whether a feature is about routing: the skill loaded or not, which skill."""
    return feature.startswith(ROUTING_PREFIXES)


def restates_outcome(feature: str) -> bool:
    """Whether a feature is a scoring component failing (what the score saw, not a cause)."""
    return _precedence(feature) == _COMPONENT


def _sentence(
    feature: str, failing_with: int, failing: int, passing_with: int, passing: int
) -> str:
    counts = (
        f"{failing_with} of {failing} failing trial{'s' if failing != 1 else ''}, "
        + (f"none of the {passing} passing" if passing_with == 0 else
           f"{passing_with} of {passing} passing")
    )
    if failing_with == failing and passing_with == 0:
        return f"fails exactly when {feature}: {counts}"
    return f"fails more often when {feature}: {counts}"


def distinguishing(trials: pd.DataFrame, features: pd.DataFrame) -> pd.DataFrame:
    """The causes that hold more often in failing trials than in passing ones, best first.

    Scoring components are left out (they restate the outcome; see :func:`score_saw`).

    Args:
        trials: The trials (``passed``).
        features: Their :func:`feature_table`.

    Returns:
        :data:`DISTINGUISHING_COLUMNS`, sorted by separation (share of failing trials with
        the feature minus share of passing ones), then precedence; empty without a flip.
    """
    causes = [f for f in features.columns if not restates_outcome(str(f))]
    return _ranked(trials, features[causes])


def score_saw(trials: pd.DataFrame, features: pd.DataFrame) -> pd.DataFrame:
    """The scoring components that fail more often in failing trials: what the score saw.

    Args:
        trials: The trials (``passed``).
        features: Their :func:`feature_table`.

    Returns:
        :data:`DISTINGUISHING_COLUMNS` of the component features, ranked as
        :func:`distinguishing` ranks the causes.
    """
    components = [f for f in features.columns if restates_outcome(str(f))]
    return _ranked(trials, features[components])


def _ranked(trials: pd.DataFrame, features: pd.DataFrame) -> pd.DataFrame:
    """The features that hold more often in failing trials than in passing ones, best first."""
    passed = trials["passed"].astype("boolean").fillna(False).astype(bool)
    n_fail, n_pass = int((~passed).sum()), int(passed.sum())
    if n_fail == 0 or n_pass == 0:
        return pd.DataFrame(columns=list(DISTINGUISHING_COLUMNS))
    rows = []
    for feature in features.columns:
        values = features[feature].astype(bool)
        failing_with = int((values & ~passed).sum())
        passing_with = int((values & passed).sum())
        separation = failing_with / n_fail - passing_with / n_pass
        if separation <= 0:
            continue
        rows.append((feature, failing_with, n_fail, passing_with, n_pass, separation,
                     _sentence(feature, failing_with, n_fail, passing_with, n_pass)))
    out = pd.DataFrame(rows, columns=list(DISTINGUISHING_COLUMNS))
    return (
        out.assign(_first=out["feature"].map(_precedence))
        .sort_values(["separation", "_first", "feature"], ascending=[False, True, True],
                     kind="stable")
        .drop(columns="_first")
        .reset_index(drop=True)
    )
