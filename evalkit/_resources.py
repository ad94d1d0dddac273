"""Where evalkit's shipped files are: the report notebooks and the HTML templates.

In a source checkout (or an editable install) they sit beside the ``evalkit`` package; a wheel
installs them as shared data under ``<prefix>/share/evalkit/``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from evalkit.errors import ConfigError


def resource_dir(name: str) -> Path:
    """Find the ``notebooks`` or ``templates`` directory.

    Looked up in a source checkout (or editable install) beside the ``evalkit`` package, then
    in ``<prefix>/share/evalkit/`` (where a wheel installs them as shared data).

    Args:
        name: ``"notebooks"`` or ``"templates"``.

    Returns:
        The directory.

    Raises:
        ConfigError: Neither location exists.
    """
    candidates = [
        Path(__file__).resolve().parents[1] / name,
        Path(sys.prefix) / "share" / "evalkit" / name,
    ]
    for path in candidates:
        if path.is_dir():
            return path
    raise ConfigError(
        f"evalkit's report {name} were not found (looked in {', '.join(map(str, candidates))}); "
        "reinstall evalkit or run from a source checkout."
    )
