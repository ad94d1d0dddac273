"""The analysis commands whose ``--json`` output is held byte for byte.

``tests/test_golden_outputs.py`` runs them; ``scripts/make_golden_outputs.py`` writes the files.

Paths of the scratch runs directory are written as ``<RUNS>``, and what the gate's ledger record
takes from the moment (its ``ts`` and the checkout's ``code_version``) as ``<TS>`` and
``<CODE>``, so the files do not depend on where, when or at which commit they were made.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).resolve().parent / "fixtures" / "golden"

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


def golden_output(argv: list[str], runs: Path) -> str:
    """``evalkit ARGV --runs-dir RUNS --json`` (in this process): exit code and stdout as JSON."""
    from tests.conftest import evalkit_cli

    done = evalkit_cli(*argv, "--runs-dir", runs, "--json")
    output = _timeless(json.loads(done.stdout))
    record = {"argv": argv, "returncode": done.returncode, "stdout": output}
    return json.dumps(record, indent=2, sort_keys=True).replace(str(runs), "<RUNS>") + "\n"


#: Keys whose values depend on the moment, not on the runs.
_MOMENTARY = {"ts": "<TS>", "code_version": "<CODE>"}


def _timeless(value: Any) -> Any:
    """``value`` with every key of :data:`_MOMENTARY` written as its placeholder."""
    if isinstance(value, dict):
        return {k: _MOMENTARY.get(k) or _timeless(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value
