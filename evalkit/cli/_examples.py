"""One or two runnable examples at the end of each subcommand's ``--help``.

The run ids follow the README's tour (``before`` and ``after`` are two runs of the demo suite);
a test parses every example with the real parser, so none names an option that does not exist.
"""

from __future__ import annotations

import argparse

#: Examples per subcommand, each a whole command line.
EXAMPLES: dict[str, tuple[str, ...]] = {
    "run": (
        "evalkit run cases/demo --run-id before",
        "evalkit run cases/demo --conditions none,preloaded --until-verdict --round-cases 5",
    ),
    "cases": (
        "evalkit cases validate cases/demo",
        "evalkit cases list cases/demo --lane execution",
    ),
    "init": ("evalkit init my-suite",),
    "schema": ("evalkit schema -o my-suite/schema",),
    "lift": (
        "evalkit lift before",
        "evalkit lift before --roles none=A,self-load=B --json",
    ),
    "compare": (
        "evalkit compare before after",
        "evalkit compare before --conditions none,preloaded --json",
    ),
    "confirm": (
        "evalkit confirm before after --suite cases/demo --dry-run",
        "evalkit confirm before after --suite cases/demo --budget 400 --yes --json",
    ),
    "flips": ("evalkit flips before", "evalkit flips before after"),
    "explain": (
        "evalkit explain before --case anti-rm-rf-workdir --condition self-load",
        "evalkit explain after --case exec-config-port --baseline before --json",
    ),
    "power": (
        "evalkit power --effect 0.10 --trials 3",
        "evalkit power --equivalence --from-run before --conditions none,preloaded",
    ),
    "gate": (
        "evalkit gate --baseline before --candidate after",
        "evalkit gate --baseline main-run --candidate pr-run --policy gate.yaml --tier smoke "
        "--ledger ledger.jsonl",
    ),
    "optimize": (
        "evalkit optimize cases/demo --skill safe-shell --optimizer command:./edit-skill.sh "
        "--max-iterations 10",
    ),
    "ablate": (
        "evalkit ablate cases/demo --skill safe-shell --list",
        "evalkit ablate cases/demo --skill safe-shell --minimal",
    ),
    "import": (
        "evalkit import results.csv --format csv --run-id ext",
        "evalkit import jobs/ --format harbor --run-id harbor-run",
    ),
    "export": ("evalkit export before --format skill-creator -o benchmark.json",),
    "judge": (
        "evalkit judge sample before -n 50 -o labels.csv",
        "evalkit judge calibrate before --labels cases/demo/labels.csv",
    ),
    "report": (
        "evalkit report before -o reports/run.html",
        "evalkit report after --baseline before --kind compare",
    ),
    "view": (
        "evalkit view runs",
        "evalkit view runs --port 8765 --open",
    ),
}

_HEAD = "examples:\n"


def examples_epilog(command: str) -> str | None:
    """The ``examples:`` block of a subcommand's help (None when it has none)."""
    lines = EXAMPLES.get(command)
    return None if not lines else _HEAD + "".join(f"  {line}\n" for line in lines)


class ExamplesFormatter(argparse.HelpFormatter):
    """argparse's formatter, but the examples block keeps its lines as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith(_HEAD):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)
