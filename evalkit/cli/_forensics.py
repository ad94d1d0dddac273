"""``evalkit explain``: why a case flips, from a run (or two)."""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING, Any

from evalkit.cli._common import add_common_options, printed_json

if TYPE_CHECKING:
    from evalkit.analysis import CellExplanation, Explanation

def configure(p: argparse.ArgumentParser) -> None:
    """Add the arguments of ``evalkit explain``."""
    p.add_argument("run", help="run directory or id")
    p.add_argument("--case", required=True, help="the case to explain")
    p.add_argument("--baseline", help="a second run: explain the case's change between them")
    p.add_argument("--condition", help="only this condition (default: each on its own)")
    p.add_argument("--provider", help="only this provider (default: each on its own)")
    add_common_options(p, explain_main)


def explain_main(args: argparse.Namespace) -> int:
    """Print the explanation (or its JSON)."""
    from evalkit.analysis import explain

    result = explain(
        args.run, args.case, baseline=args.baseline, condition=args.condition,
        provider=args.provider, runs_dir=args.runs_dir,
    )
    if printed_json(args, result):
        return 0
    for line in explanation_lines(result):
        print(line)
    return 0


def _value(value: Any, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _cell_lines(cell: CellExplanation, two_runs: bool) -> list[str]:
    head = " / ".join(x for x in (cell.condition, cell.provider) if x)
    lines = [f"{cell.case_id} [{head}]: {cell.summary}"]
    lines.append("  trials:")
    for row in cell.trials.to_dict("records"):
        side = f"{row['side']} " if two_runs else ""
        status = _value(row["status"])
        error_class, tools = row.get("error_class"), row.get("tools")
        if isinstance(error_class, str) and error_class and error_class != row["status"]:
            status += f" ({error_class})"
        tools = f" ({tools})" if isinstance(tools, str) and tools else ""
        routing = (
            "skill preloaded" if row.get("preloaded") else
            f"skill loaded {_value(row['skill_loaded'])} ({_value(row['inferred_skill'])})"
        )
        lines.append(
            f"    {side}trial {_value(row['trial'])}: "
            f"{'pass' if row['passed'] else 'FAIL'}  score {_value(row['score'])}  "
            f"status {status}  {routing}  tool calls {_value(row['tool_calls'])}"
            f"{tools}  "
            f"tokens {_value(row['input_tokens'])}/{_value(row['output_tokens'])}  "
            f"latency {_value(row['latency_s'])} s"
        )
        lines.append(f"      {row['reason']}")
    if len(cell.distinguishing):
        lines.append("  what separates the failing trials from the passing ones:")
        lines += [f"    {s}" for s in cell.distinguishing["sentence"].head(5)]
    elif len(cell.score_saw):
        lines.append("  what separates the failing trials from the passing ones: no cause "
                     "(the routing, status and tools are alike)")
    if len(cell.score_saw):
        lines.append("  what the score saw (restates the outcome, not a cause):")
        lines += [f"    {s}" for s in cell.score_saw["sentence"].head(5)]
    lines.append(f"  chance: {cell.chance.sentence}")
    lines.append(f"  first divergence: {cell.divergence_note}")
    for row in cell.divergence.to_dict("records"):
        mark = ">" if row["step"] == cell.first_divergence else " "
        lines.append(f"   {mark} step {row['step']} passing [{row['passing_kind']}] "
                     f"{row['passing'][:160]}")
        lines.append(f"   {mark} step {row['step']} failing [{row['failing_kind']}] "
                     f"{row['failing'][:160]}")
    return lines


def explanation_lines(result: Explanation) -> list[str]:
    """The text of ``evalkit explain``: each condition and provider of the case in turn.

    Args:
        result: The explanation.

    Returns:
        The lines, notes first.
    """
    lines = [f"note: {n}" for n in result.notes]
    scope = f"{result.baseline} -> {result.run}" if result.baseline else result.run
    lines.append(f"case {result.case_id} in {scope}")
    for cell in result.cells:
        lines.append("")
        lines += _cell_lines(cell, result.baseline is not None)
    return lines
