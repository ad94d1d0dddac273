"""Workspace paths in reasons, relative to the workspace.

An item runs in a temporary workspace (``$TMPDIR/evalkit-run-<pid>-<run id>-<random>/ws-<random>``)
that is gone when the run ends, so a reason that names ``/tmp/evalkit-run-.../ws-.../out.json``
names nothing a reader can open, and differs between two runs of the same answer. A scorer's
detail and an item's error message are rewritten with paths relative to the workspace
(``out.json``) before they are stored, and reasons recorded before that are rewritten when
they are shown.
"""

from __future__ import annotations

import os
import re

#: The name every run's scratch directory starts with (its workspaces are ``ws-*`` inside).
SCRATCH_PREFIX = "evalkit-run-"

#: One path segment: stops at a slash, a space, a quote or the punctuation around a path.
_STOP = r"\s'\"`/()\[\]<>,;:"
_NAME = rf"[^{_STOP}]+"
#: An absolute path of an item workspace under a run's scratch directory, with its slash.
_SCRATCH_WORKSPACE = re.compile(
    rf"(?:/{_NAME})*/{re.escape(SCRATCH_PREFIX)}{_NAME}/ws-{_NAME}(/)?"
)


def _replace(match: re.Match[str]) -> str:
    return "" if match.group(1) else "."


def relative_to_workspace(
    text: str, workspace: str | os.PathLike[str] | None = None
) -> str:
    """``text`` with the workspace's absolute paths made relative to it.

    A path inside the workspace loses the workspace's prefix (``out.json``); the workspace
    itself becomes ``.``. Without ``workspace``, any item workspace of a run's scratch
    directory is recognised by its name.

    Args:
        text: A scorer's detail or an error message.
        workspace: The item's workspace, when known (its resolved path is matched too).

    Returns:
        The text with relative paths.

    Examples:
        >>> ws = "/tmp/evalkit-run-1-r-x/ws-ab"
        >>> relative_to_workspace(f"No such file: '{ws}/out.json' (in {ws})")
        "No such file: 'out.json' (in .)"
        >>> relative_to_workspace("cat /work/w/a.txt: missing", "/work/w")
        'cat a.txt: missing'
    """
    if not text:
        return text
    if workspace is not None:
        roots = {os.fspath(workspace).rstrip("/"), os.path.realpath(workspace).rstrip("/")}
        for root in sorted((r for r in roots if r), key=len, reverse=True):
            text = re.sub(rf"{re.escape(root)}(?![^{_STOP}])(/)?", _replace, text)
    if SCRATCH_PREFIX in text:
        text = _SCRATCH_WORKSPACE.sub(_replace, text)
    return text
