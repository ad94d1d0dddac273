"""The analysis commands whose ``--json`` outputs the reference tests read.

``tests/test_reference_outputs.py`` checks their figures against independent computations
(pandas, scipy, statsmodels) on the two committed demo runs; ``tests/test_golden_outputs.py``
holds what stays golden: each output's *key schema* (every key path with its JSON types, the
contract scripts rely on) and the whole output of the one simulation no closed form gives.
``scripts/make_golden_outputs.py`` writes both.

Paths of the scratch runs directory are written as ``<RUNS>``, and what the gate's ledger record
takes from the moment (its ``ts`` and the checkout's ``code_version``) as ``<TS>`` and
``<CODE>``, so the outputs do not depend on where, when or at which commit they were made.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).resolve().parent / "fixtures" / "golden"

#: The committed key schemas, ``{command name: ["path: types", ...]}``.
SCHEMAS = GOLDEN / "schemas.json"

#: name -> evalkit arguments (``--runs-dir`` and ``--json`` are added).
GOLDEN_COMMANDS: dict[str, list[str]] = {
    "compare-runs": ["compare", "demo-a", "demo-b"],
    "compare-conditions": ["compare", "demo-a", "--conditions", "none,preloaded"],
    "compare-sequential": ["compare", "demo-a", "--conditions", "none,preloaded", "--sequential"],
    "lift": ["lift", "demo-a"],
    "flips-within": ["flips", "demo-a"],
    "flips-between": ["flips", "demo-a", "demo-b"],
    "power-from-run": ["power", "--from-run", "demo-a", "--effect", "0.1"],
    "power-mde": ["power", "--cases", "40", "--trials", "3"],
    "power-sequential": ["power", "--from-run", "demo-a", "--effect", "0.1", "--sequential"],
    "gate": ["gate", "--baseline", "demo-a", "--candidate", "demo-b"],
}

#: Outputs held whole: seeded simulations, whose figures no independent closed form gives.
WHOLE = ("power-sequential",)

#: Objects whose keys are data (cause names, condition names), not fields: one ``*`` entry.
_MAPS = frozenset({"causes", "condition_verdicts", "roles"})


def command_output(argv: list[str], runs: Path) -> dict[str, Any]:
    """``evalkit ARGV --runs-dir RUNS --json`` (in this process): exit code and parsed stdout."""
    from tests.conftest import evalkit_cli

    done = evalkit_cli(*argv, "--runs-dir", runs, "--json")
    text = done.stdout.replace(str(runs), "<RUNS>")
    return {"argv": argv, "returncode": done.returncode, "stdout": _timeless(json.loads(text))}


def golden_text(record: dict[str, Any]) -> str:
    """A held output as its committed file spells it."""
    return json.dumps(record, indent=2, sort_keys=True) + "\n"


def key_schema(value: Any) -> list[str]:
    """Every key path of a JSON value with the types found there (``"delta.estimate: number"``).

    Array elements are one path (``cases[].case_id``); the keys of :data:`_MAPS` objects are
    one ``*``. Integers and floats are both ``number``.
    """
    found: dict[str, set[str]] = {}

    def walk(node: Any, path: str) -> None:
        found.setdefault(path or "$", set()).add(_json_type(node))
        if isinstance(node, dict):
            is_map = path.rsplit(".", 1)[-1] in _MAPS
            for key, child in node.items():
                walk(child, f"{path}.{'*' if is_map else key}" if path else key)
        elif isinstance(node, list):
            for child in node:
                walk(child, f"{path}[]")

    walk(value, "")
    return [f"{path}: {'|'.join(sorted(types))}" for path, types in sorted(found.items())]


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


#: Keys whose values depend on the moment, not on the runs.
_MOMENTARY = {"ts": "<TS>", "code_version": "<CODE>"}


def _timeless(value: Any) -> Any:
    """``value`` with every key of :data:`_MOMENTARY` written as its placeholder."""
    if isinstance(value, dict):
        return {k: _MOMENTARY.get(k) or _timeless(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value
