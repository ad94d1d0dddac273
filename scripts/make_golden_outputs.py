"""Write the golden ``--json`` outputs of the analysis commands on the two committed demo runs.

``tests/test_golden_outputs.py`` holds the commands' outputs to these files byte for byte, so
a restructuring that changes a number, a key or a message fails there. Run this only when an
output is meant to change, and say why in the commit::

    python scripts/make_golden_outputs.py

The runs (``tests/fixtures/golden/runs/demo-a`` and ``demo-b``) are ``evalkit run cases/demo
--trials 3 --seed 1`` and ``--seed 2`` (manifest and tables only).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.golden_commands import GOLDEN, GOLDEN_COMMANDS, golden_output  # noqa: E402


def main() -> None:
    """Run every golden command on a copy of the runs and write its output."""
    with tempfile.TemporaryDirectory() as tmp:
        runs = Path(tmp) / "runs"
        shutil.copytree(GOLDEN / "runs", runs)
        for name, argv in GOLDEN_COMMANDS.items():
            (GOLDEN / f"{name}.json").write_text(golden_output(argv, runs), encoding="utf-8")
            print(f"wrote {GOLDEN / f'{name}.json'}")


if __name__ == "__main__":
    main()
