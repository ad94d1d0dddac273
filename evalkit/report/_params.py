"""Notebook parameters, checked against ``papermill.inspect_notebook`` before any cell runs."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from evalkit.errors import ConfigError
from evalkit.report._notebooks import read_notebook

_TRUE = {"true", "yes", "1", "on"}
_FALSE = {"false", "no", "0", "off"}
#: Numeric parameter types: the conversion, and the Python types taken as they are (no bools).
_NUMBERS: dict[str, tuple[Callable[[Any], float], tuple[type, ...]]] = {
    "int": (int, (int,)),
    "float": (float, (int, float)),
}


def declared_parameters(notebook: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """The parameters a notebook declares in its cell tagged ``parameters``.

    The notebook is read with jupytext (percent-format ``.py`` or ``.ipynb``) and the
    ``NotebookNode`` handed to ``papermill.inspect_notebook``.

    Args:
        notebook: Path of the notebook.

    Returns:
        ``{name: {"name", "inferred_type_name", "default", "help"}}`` as papermill infers them.

    Raises:
        ConfigError: The notebook does not exist or has no parameter at all (no cell tagged
            ``parameters``).
    """
    import papermill

    declared: dict[str, dict[str, Any]] = papermill.inspect_notebook(read_notebook(notebook))
    if not declared:
        raise ConfigError(
            f"notebook '{notebook}' declares no parameter: it needs a cell tagged 'parameters'."
        )
    return declared


def _coerce(name: str, value: Any, type_name: str) -> Any:
    """Check (and, for text from a command line, convert) one value against its declared type."""
    kind = type_name.strip().lower()
    text = value if isinstance(value, str) else None
    if kind in _NUMBERS:
        convert, accepted = _NUMBERS[kind]
        if isinstance(value, accepted) and not isinstance(value, bool):
            return convert(value)
        if text is not None:
            try:
                return convert(text.strip())
            except ValueError:
                pass
    elif kind == "bool":
        if isinstance(value, bool):
            return value
        if text is not None and text.strip().lower() in _TRUE | _FALSE:
            return text.strip().lower() in _TRUE
    elif kind == "str":
        if isinstance(value, str):
            return value
        if isinstance(value, os.PathLike):
            return os.fspath(value)
    else:
        return value  # no annotation: papermill passes the value through as it is
    raise ConfigError(
        f"The value for notebook parameter `{name}` must be of type {type_name}, "
        f"but {value!r} was passed."
    )


def validate_parameters(
    notebook: str | os.PathLike[str], parameters: Mapping[str, Any]
) -> dict[str, Any]:
    """Check parameters against the notebook's declared ones; unknown names are an error.

    Values given as text (from ``evalkit report -p NAME=VALUE``) are converted to the declared
    ``int``, ``float`` or ``bool``; a value of the wrong type is an error.

    Args:
        notebook: Path of the notebook.
        parameters: ``{name: value}``.

    Returns:
        The parameters with converted values.

    Raises:
        ConfigError: Unknown parameter or a value of the wrong type.
    """
    declared = declared_parameters(notebook)
    unknown = sorted(set(parameters) - set(declared))
    if unknown:
        accepted = ", ".join(
            f"{name} ({info.get('inferred_type_name') or 'any'})" for name, info in declared.items()
        )
        raise ConfigError(
            f"unknown notebook parameter(s) {unknown} for '{os.path.basename(notebook)}'; "
            f"it accepts: {accepted}."
        )
    return {
        name: _coerce(name, value, str(declared[name].get("inferred_type_name") or "None"))
        for name, value in parameters.items()
    }


def parse_assignments(values: list[str] | None) -> dict[str, str]:
    """Parse repeated ``NAME=VALUE`` options (values stay text until validated).

    Args:
        values: The raw options.

    Returns:
        ``{name: value}``.

    Raises:
        ConfigError: An option without ``=`` or without a name.

    Examples:
        >>> parse_assignments(["top_n=5", "title=a=b"])
        {'top_n': '5', 'title': 'a=b'}
    """
    out: dict[str, str] = {}
    for raw in values or []:
        name, sep, value = raw.partition("=")
        if not sep or not name.strip():
            raise ConfigError(f"-p/--param expects NAME=VALUE, got {raw!r}")
        out[name.strip()] = value
    return out
