"""Editing a recorded command line: the options a follow-up command replaces or leaves out."""

from __future__ import annotations

from collections.abc import Collection, Sequence


def without_options(
    words: Sequence[str], with_value: Collection[str], flags: Collection[str] = ()
) -> list[str]:
    """``words`` without the options named, each with its value where it takes one.

    Args:
        words: A command line split into words (``shlex.split``).
        with_value: Options that take a value (``--run-id X`` or ``--run-id=X``): both go.
        flags: Options without a value (``--resume``).

    Returns:
        The other words, in order.

    Examples:
        >>> without_options(["evalkit", "run", "s", "--run-id", "a", "--resume"],
        ...                 {"--run-id"}, {"--resume"})
        ['evalkit', 'run', 's']
        >>> without_options(["run", "--run-id=a", "--json"], {"--run-id"})
        ['run', '--json']
    """
    kept: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        name = word.split("=", 1)[0]
        if name in with_value:
            skip = "=" not in word
        elif name not in flags:
            kept.append(word)
    return kept
