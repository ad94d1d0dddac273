"""``evalkit import --condition-map``: name the conditions an import takes from the source.

Conditions taken from a task argument or a metadata field come out as their raw values
(``"false"``, ``"http://localhost:9101"``). ``--condition-map 'http://localhost:9101=plugin,
false=baseline'`` renames them as the run is written; the map is checked against the rows
(every condition named once, no name given twice, no two conditions merged into one), and the
manifest keeps each condition's source value (``conditions.NAME.source_value``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from evalkit.errors import ConfigError
from evalkit.interop._import_common import ParsedSource

FLAG: Final = "--condition-map"
_EXAMPLE: Final = "e.g. --condition-map 'http://localhost:9101=plugin,false=baseline'"


def parse_condition_map(spec: str | Mapping[str, str] | None) -> dict[str, str]:
    """Parse ``VALUE=NAME,VALUE=NAME`` (the last ``=`` of an entry splits it).

    Args:
        spec: The flag's text, a mapping ``{source value: name}``, or None.

    Returns:
        ``{source value: name}`` (empty for None or an empty text).

    Raises:
        ConfigError: An entry without ``=``, an empty value or name, or a value given twice.

    Examples:
        >>> parse_condition_map("http://localhost:9101=plugin,false=baseline")
        {'http://localhost:9101': 'plugin', 'false': 'baseline'}
    """
    if spec is None:
        return {}
    pairs = list(spec.items()) if isinstance(spec, Mapping) else [
        entry.rpartition("=")[::2] if "=" in entry else (entry, "")
        for entry in (part.strip() for part in spec.split(",")) if entry
    ]
    out: dict[str, str] = {}
    for value, name in pairs:
        value, name = str(value).strip(), str(name).strip()
        if not value or not name:
            raise ConfigError(
                f"{FLAG} / condition_map: entry {f'{value}={name}'!r} must be VALUE=NAME "
                f"(the condition's value in the source, then its name), {_EXAMPLE}"
            )
        if value in out:
            raise ConfigError(f"{FLAG} / condition_map: condition {value!r} is named twice "
                              f"({out[value]!r} and {name!r}); give it one name")
        out[value] = name
    return out


def rename_conditions(parsed: ParsedSource, mapping: Mapping[str, str]) -> dict[str, str]:
    """Rename the rows' conditions in place; return ``{name: source value}``.

    Args:
        parsed: The importer's rows.
        mapping: ``{source value: name}`` from :func:`parse_condition_map` (empty: no change).

    Returns:
        The source value of each renamed condition.

    Raises:
        ConfigError: A condition of the rows the map does not name, a value the map names
            that no row has, or two conditions that would become one.
    """
    if not mapping:
        return {}
    found = list(dict.fromkeys(str(r.values["condition"]) for r in parsed.rows))
    listed = ", ".join(repr(c) for c in found)
    unknown = [v for v in mapping if v not in found]
    if unknown:
        raise ConfigError(f"{FLAG} / condition_map: no imported row has condition "
                          f"{unknown[0]!r} (the conditions are {listed}); map those instead")
    missing = [c for c in found if c not in mapping]
    if missing:
        raise ConfigError(f"{FLAG} / condition_map: condition {missing[0]!r} has no name "
                          f"(the conditions are {listed}); add {missing[0]}=NAME")
    merged: dict[str, str] = {}
    for value, name in mapping.items():
        if name in merged:
            raise ConfigError(f"{FLAG} / condition_map: conditions {merged[name]!r} and "
                              f"{value!r} would both become {name!r}, merging two conditions "
                              "into one; give each its own name")
        merged[name] = value
    for row in parsed.rows:
        row.values["condition"] = mapping[str(row.values["condition"])]
    return merged
