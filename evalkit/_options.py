"""The one kind of options object: a frozen pydantic model whose bad value is a ConfigError.

Every configuration evalkit takes as one object (``RunConfig``, ``SequentialConfig``,
``GatePolicy``, ``CompareOptions``, ``PowerDesign``, ``AblationConfig``, ``OptimizeConfig``,
``ConfirmConfig``) derives from :class:`Options`: building one with a bad value raises the same
:class:`~evalkit.errors.ConfigError` a bad flat keyword raises (naming the flag and the
field, ``--confidence / confidence must be a number in (0, 1), e.g. 0.95, but 1.5 was
passed``), not a pydantic ``ValidationError``. Library functions below the top-level
``evalkit.*`` ones take the object alone; only those build one from flat keywords.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from evalkit.errors import ConfigError, InputError


def validation_message(exc: ValidationError) -> str:
    """The first error of a validation, as evalkit words it.

    A check that raised its own message (a shared setting's, naming flag and field) keeps it;
    any other error is prefixed with where it is (``run.run_id: ...``).
    """
    first = exc.errors()[0]
    cause = (first.get("ctx") or {}).get("error")
    if isinstance(cause, ValueError) and str(cause).startswith("--"):
        return str(cause)
    where = ".".join(str(part) for part in first["loc"]) or "(settings)"
    return f"{where}: {cause if cause is not None else first['msg']}"


class Options(BaseModel):
    """Base of the options objects library functions take: frozen, no unknown field.

    Raises:
        ConfigError: A field's value is out of range or of the wrong kind (named), or a field
            that does not exist was given; its ``problems`` lists every error as ``(where,
            what)``, for a file that holds the options (a gate policy).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise options_error(exc) from None
        except ConfigError:
            raise
        except InputError as exc:  # a shared check of evalkit.stats, raised inside a validator
            named = re.search(r"`(\w+)`", str(exc))
            raise ConfigError(str(exc), setting=named.group(1) if named else "") from None


def nest_flat(
    data: Any, names: Iterable[str], *, into: str = "run", defaults: Mapping[str, Any] = {}
) -> Any:
    """Raw fields with ``names`` given flat moved ``into`` the nested options, over ``defaults``.

    A ``mode="before"`` validator of a configuration holding a :class:`~evalkit.runner.RunConfig`
    (``OptimizeConfig(trials=5)``, ``AblationConfig(concurrency=4)``).

    Raises:
        ValueError: Flat names beside an explicit nested object.
    """
    if not isinstance(data, dict) or not any(name in data for name in names):
        return data
    data = dict(data)
    flat = {name: data.pop(name) for name in names if name in data}
    if data.get(into) is not None:
        raise ValueError(
            f"give {', '.join(sorted(flat))} inside `{into}` (a RunConfig) or leave `{into}` "
            "out, not both"
        )
    data[into] = {**defaults, **flat}
    return data


def options_error(exc: ValidationError) -> ConfigError:
    """The one :class:`ConfigError` of a bad options value: its message and the field it names.

    Args:
        exc: The validation error of an options object.

    Returns:
        A ``ConfigError`` worded by :func:`validation_message`, ``setting`` the field its first
        error is about (the last part of its location; "" at the top level).
    """
    location = exc.errors()[0]["loc"]
    error = ConfigError(validation_message(exc), setting=str(location[-1]) if location else "")
    error.problems = tuple(
        (".".join(str(part) for part in err["loc"]), _problem(err)) for err in exc.errors()
    )
    return error


def _problem(error: Any) -> str:
    """One validation error in words (an unknown field says so)."""
    if error["type"] == "extra_forbidden":
        return "unknown field"
    cause = (error.get("ctx") or {}).get("error")
    return str(cause) if cause is not None else str(error["msg"])
