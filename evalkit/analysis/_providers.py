"""Keep some providers of a result table (``--provider P[,Q]`` of the analysis commands)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from evalkit.errors import InputError


def parse_providers(providers: str | Sequence[str] | None) -> tuple[str, ...]:
    """The providers named by ``"P,Q"`` or a sequence of names (empty: every provider).

    Args:
        providers: Comma-separated names, a sequence of names, or None.

    Returns:
        The names, in the order given, without blanks or repeats.

    Examples:
        >>> parse_providers("claude-code, codex,claude-code")
        ('claude-code', 'codex')
        >>> parse_providers(None)
        ()
    """
    if providers is None:
        return ()
    items = providers.split(",") if isinstance(providers, str) else list(providers)
    names = [str(item).strip() for item in items]
    return tuple(dict.fromkeys(name for name in names if name))


def select_providers(
    rows: pd.DataFrame, providers: str | Sequence[str] | None, label: str
) -> pd.DataFrame:
    """The rows of ``rows`` whose ``provider`` is one of ``providers`` (all when empty).

    Args:
        rows: A result table.
        providers: Names as :func:`parse_providers` reads them.
        label: How the table is called in messages (e.g. its run id).

    Returns:
        The selected rows.

    Raises:
        InputError: A named provider is not in the table (the message lists those that are),
            or the table has no ``provider`` column.

    Examples:
        >>> df = pd.DataFrame({"case_id": ["a", "a"], "provider": ["x", "y"]})
        >>> select_providers(df, "y", "run")["provider"].tolist()
        ['y']
    """
    wanted = parse_providers(providers)
    if not wanted:
        return rows
    if "provider" not in rows.columns:
        raise InputError(
            f"{label}: --provider {','.join(wanted)}: the results have no `provider` column; "
            "leave --provider out"
        )
    present = sorted(str(p) for p in rows["provider"].dropna().unique())
    unknown = [name for name in wanted if name not in present]
    if unknown:
        raise InputError(
            f"{label}: provider(s) {', '.join(unknown)} not in the results; the providers "
            f"there are: {', '.join(present) or '(none)'}"
        )
    return rows[rows["provider"].astype(str).isin(wanted)]
