"""Write what stays golden of the analysis commands' ``--json`` outputs on the demo runs.

That is each output's key schema (``tests/fixtures/golden/schemas.json``: every key path with
its JSON types, the contract scripts rely on) and the whole output of the seeded simulations
(``tests/golden_commands.py`` ``WHOLE``). The figures are not frozen: they are checked against
independent computations in ``tests/test_reference_outputs.py``. Run this only when a key is
meant to appear, go or change type, and say why in the commit::

    python scripts/make_golden_outputs.py

The runs (``tests/fixtures/golden/runs/demo-a`` and ``demo-b``) are ``evalkit run cases/demo
--trials 3 --seed 1`` and ``--seed 2`` (manifest and tables only).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.golden_commands import (  # noqa: E402
    GOLDEN,
    GOLDEN_COMMANDS,
    SCHEMAS,
    WHOLE,
    command_output,
    golden_text,
    key_schema,
)


def main() -> None:
    """Run every command on a copy of the runs and write the schemas and the whole outputs."""
    schemas = {}
    with tempfile.TemporaryDirectory() as tmp:
        runs = Path(tmp) / "runs"
        shutil.copytree(GOLDEN / "runs", runs)
        for name, argv in GOLDEN_COMMANDS.items():
            record = command_output(argv, runs)
            schemas[name] = key_schema(record["stdout"])
            if name in WHOLE:
                (GOLDEN / f"{name}.json").write_text(golden_text(record), encoding="utf-8")
                print(f"wrote {GOLDEN / f'{name}.json'}")
    SCHEMAS.write_text(json.dumps(schemas, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {SCHEMAS}")


if __name__ == "__main__":
    main()
