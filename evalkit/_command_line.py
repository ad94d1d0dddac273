"""Editing a recorded command line: the options a follow-up command replaces or leaves out.

A command line read from a run directory (a manifest's ``command_line``) is data: whoever
wrote the run chose it. A command evalkit prints from it for the reader to paste (a next
step, a resume hint) is rebuilt by :func:`rebuild_run_line` from an allow-list: the options
that choose *what runs* (the suite, its filters, conditions, trials, seed, concurrency, the
model, a provider given by name, the sequential budgets) are carried; the options that change
*where data goes or what is read* are left out and named, because pasting them would send the
reader's keys, or a file of theirs, where the run's author chose:

- ``--provider-opt`` and ``--judge-opt`` (``base_url`` among them), ``--scheduler`` (a dask
  scheduler's address) and ``--backend`` (where the items run);
- ``--skill NAME=PATH`` and ``--description NAME=@FILE`` (they read a file);
- ``--no-sandbox`` (the suite's commands would run outside the sandbox);
- ``--provider`` and ``--judge-provider`` written as a module spec (``package.module:name``,
  code to import). A plain name is carried: it resolves only through the provider registry
  (a built-in, or a plugin the reader installed), never to a module the run names;
- any value that holds a control character (it could not be shown as the text it is);
- and, when the line holds an option ``evalkit run`` does not have, the whole line: its
  words cannot be read safely (is the next word that option's value?), so the command is
  rebuilt from the suite alone.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from evalkit._bidi import BIDI_CONTROLS, TERMINAL_CONTROLS


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


#: Options of ``evalkit run`` that choose what runs, carried with their value.
CARRIED = frozenset({
    "--conditions", "--lane", "--case", "--tags", "--split", "--trials", "--seed",
    "--concurrency", "--model", "--judge-model", "--retries", "--workspace-quota",
    "--round-cases", "--max-items", "--max-usd", "--max-rounds", "--threshold",
    "--confidence", "--plan-cases", "--stage-two-probability", "--plan-effect",
    "--futility-beta",
    # carried when their value passes a check (_refusal): a name, not a module spec or a file
    "--provider", "--judge-provider", "--description",
})
#: Flags of ``evalkit run`` that choose what runs, carried.
CARRIED_FLAGS = frozenset(
    {"--until-verdict", "--adaptive-trials", "--allocate-trials", "--no-cache"}
)
#: Options about this one invocation (its id, directory, output), dropped without a word:
#: the printed command sets its own.
SESSION = frozenset({"--run-id", "--runs-dir", "--from-run"})
#: Flags about this one invocation, dropped without a word.
SESSION_FLAGS = frozenset({"--resume", "--json", "--no-progress", "--verbose", "-v", "--plan"})
#: Options that change where data goes or what is read: left out, and named.
LEFT_OUT = frozenset({"--provider-opt", "--judge-opt", "--skill", "--scheduler", "--backend"})
#: Flags left out, and named.
LEFT_OUT_FLAGS = frozenset({"--no-sandbox"})

#: Every option of ``evalkit run`` (a test checks this against its parser).
RUN_OPTIONS = CARRIED | SESSION | LEFT_OUT
#: Every flag of ``evalkit run``.
RUN_FLAGS = CARRIED_FLAGS | SESSION_FLAGS | LEFT_OUT_FLAGS

#: Why the named options are left out, said once after them.
LEFT_OUT_REASON = (
    "a command printed from a recorded command line never carries options that change "
    "where data goes, what is read or what runs outside the sandbox; add them yourself if "
    "you trust this run"
)

#: Left-out options written ``KEY=VALUE``: the entry names the key.
_KEY_VALUE = frozenset({"--provider-opt", "--judge-opt", "--skill"})
_CONTROLS = frozenset(TERMINAL_CONTROLS | BIDI_CONTROLS)
#: A plugin name: what the registry resolves without importing a module the name chooses.
_PLUGIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")


@dataclass(frozen=True)
class RebuiltLine:
    """A command rebuilt from a recorded ``evalkit run`` line.

    Attributes:
        words: ``["evalkit", "run", SUITE, ...]`` with the carried options (None: no
            command can be formed: no line and no suite, or a suite that cannot be shown).
        left_out: What was left out, one entry per option (``--provider-opt base_url``,
            ``--no-sandbox``), for :func:`left_out_line`.
    """

    words: list[str] | None
    left_out: tuple[str, ...] = ()


def rebuild_run_line(
    command_line: str | None,
    *,
    suite_path: str | None = None,
    drop: Collection[str] = (),
) -> RebuiltLine:
    """An ``evalkit run`` command from a recorded line, with only the allow-listed options.

    Args:
        command_line: The recorded command line (``shlex.join`` of the words).
        suite_path: The suite to run when the line cannot be used (the manifest's).
        drop: Further options the caller sets itself (or does not want), dropped silently.

    Returns:
        The rebuilt words and what was left out.

    Examples:
        >>> line = ("evalkit run s --tags a --provider-opt base_url=http://x "
        ...         "--skill k=/p --no-sandbox --run-id r")
        >>> rebuilt = rebuild_run_line(line)
        >>> rebuilt.words
        ['evalkit', 'run', 's', '--tags', 'a']
        >>> rebuilt.left_out
        ('--provider-opt base_url', '--skill k', '--no-sandbox')
    """
    left_out: list[str] = []
    parsed = _parse(command_line) if command_line else None
    if isinstance(parsed, str):
        left_out.append(parsed)
        parsed = None
    if parsed is None:
        if not suite_path:
            return RebuiltLine(None, tuple(left_out))
        if _CONTROLS.intersection(suite_path):
            left_out.append("the suite path (it holds control characters)")
            return RebuiltLine(None, tuple(left_out))
        suite = f"./{suite_path}" if suite_path.startswith("-") else suite_path
        return RebuiltLine(["evalkit", "run", suite], tuple(left_out))
    suite, options = parsed
    words = ["evalkit", "run", suite]
    for name, value in options:
        if name in drop or name in SESSION or name in SESSION_FLAGS:
            continue
        refusal = _refusal(name, value)
        if refusal is not None:
            left_out.append(refusal)
        elif value is None:
            words.append(name)
        else:
            words += [f"{name}={value}"] if value.startswith("-") else [name, value]
    return RebuiltLine(words, tuple(left_out))


def left_out_line(left_out: Sequence[str], what: str = "the next step") -> str:
    """The one line that names what a rebuilt command left out ("" when nothing).

    Examples:
        >>> left_out_line(["--skill k", "--no-sandbox"])  # doctest: +ELLIPSIS
        'left out of the next step: --skill k, --no-sandbox (a command printed from ...)'
    """
    if not left_out:
        return ""
    return f"left out of {what}: {', '.join(left_out)} ({LEFT_OUT_REASON})"


def _parse(command_line: str) -> tuple[str, list[tuple[str, str | None]]] | str | None:
    """The suite and the options of an ``evalkit run`` line, each option by its full name.

    Returns:
        ``(suite, [(option, value or None)])``; None for a line that is not ``evalkit run``;
        a left-out entry (a string) for a line that cannot be read safely.
    """
    try:
        words = shlex.split(command_line)
    except ValueError:
        return None
    if words[:2] != ["evalkit", "run"]:
        return None
    suites: list[str] = []
    options: list[tuple[str, str | None]] = []
    rest = iter(words[2:])
    for word in rest:
        if word == "--":
            suites += list(rest)
            break
        if not word.startswith("-") or word == "-":
            suites.append(word)
            continue
        written, equals, value = word.partition("=")
        name = _full_name(written)
        if name is None or (name in RUN_FLAGS and equals):
            return _unreadable(written)
        if name in RUN_FLAGS:
            options.append((name, None))
            continue
        if not equals:
            following = next(rest, None)
            if following is None:
                return _unreadable(written)
            value = following
        options.append((name, value))
    if len(suites) != 1:
        return "the recorded command line (it names no suite or more than one)"
    if _CONTROLS.intersection(suites[0]) or suites[0].startswith("-"):
        return "the recorded command line (its suite path cannot be shown as text)"
    return suites[0], options


def _unreadable(written: str) -> str:
    shown = written if not _CONTROLS.intersection(written) else "an option"
    return (f"the recorded command line (it holds {shown}, which evalkit run does not take "
            "that way, so its words cannot be read safely)")


def _full_name(written: str) -> str | None:
    """The option ``written`` stands for, as argparse reads it (a unique prefix included)."""
    known = RUN_OPTIONS | RUN_FLAGS
    if written in known:
        return written
    if not written.startswith("--") or len(written) < 3:
        return None
    matches = [name for name in known if name.startswith(written)]
    return matches[0] if len(matches) == 1 else None


def _refusal(name: str, value: str | None) -> str | None:
    """Why ``name`` (with ``value``) is left out, as its left-out entry; None: it is carried."""
    if name in LEFT_OUT_FLAGS:
        return name
    if name in LEFT_OUT:  # named by its key (base_url, the skill), never by its value
        key = (value or "").partition("=")[0] if name in _KEY_VALUE else ""
        return f"{name} {key}" if key and not _CONTROLS.intersection(key) else name
    if value is not None and _CONTROLS.intersection(value):
        return f"{name} (its value holds control characters)"
    if name in ("--provider", "--judge-provider") and not _PLUGIN_NAME.fullmatch(value or ""):
        return f"{name} {value} (a module spec: code the run names)"
    if name == "--description" and (value or "").partition("=")[2].startswith("@"):
        return f"--description {(value or '').partition('=')[0]}=@FILE (it reads a file)"
    return None
