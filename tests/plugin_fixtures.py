"""What the plugin tests share: a toy import format, and a real installed distribution."""

from __future__ import annotations

from pathlib import Path

from evalkit.interop import ImportRequest
from evalkit.interop._import_common import ParsedSource, SourceRow, number_trials


def read_pairs(request: ImportRequest) -> ParsedSource:
    """Read ``.pairs`` files: one ``case condition pass|fail`` line per trial."""
    rows = []
    for path in request.files:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            case, condition, outcome = line.split()
            rows.append(SourceRow(
                values={"lane": request.lane, "case_id": case, "condition": condition,
                        "trial": None, "passed": outcome == "pass"},
                file=str(path), where=f"line {number}", identity=[str(path), number],
            ))
    number_trials(rows, ["case_id", "condition"])
    return ParsedSource(rows=rows, suite="pairs")


def install_entry_points(site: Path, dist: str, group: str, lines: str) -> None:
    """Install a distribution publishing entry points: a real dist-info under ``site``.

    Args:
        site: A directory the test puts on ``sys.path``.
        dist: The distribution's name.
        group: The entry-point group.
        lines: ``name = module:attribute`` lines of the group.
    """
    info = site / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{group}]\n{lines}")
