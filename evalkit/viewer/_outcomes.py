"""A finished run's outcomes per condition, and what came from the cache, for the index.

Read from the run's ``results.parquet`` (five columns), as a regular file within the viewer's
bound, once per version of the file (its size and modification time): the index asks every
two seconds, and a finished run does not change.
"""

from __future__ import annotations

import io
import threading
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.results import RESULTS_FILE
from evalkit.viewer._files import read_bounded

#: Outcome statuses that count in a pass rate (an ungraded item does not).
GRADED = ("ok", "error", "timeout")


@dataclass(frozen=True)
class Outcomes:
    """Per condition, items graded and passed; items served from the cache and their runs.

    Attributes:
        by_condition: ``{condition: (graded, passed)}``.
        cached: Items whose outcome was copied from the cache.
        cache_from: The runs those outcomes were produced by (``unknown`` when not recorded).
    """

    by_condition: dict[str, tuple[int, int]] = field(default_factory=dict)
    cached: int = 0
    cache_from: tuple[str, ...] = ()


class OutcomeCache:
    """:func:`read_outcomes` of each run, read again only when its results file changed."""

    def __init__(self) -> None:
        self._seen: dict[Path, tuple[tuple[int, int], Outcomes]] = {}
        self._lock = threading.Lock()

    def get(self, run_dir: Path) -> Outcomes | None:
        """The run's outcomes, or None when it has no results file yet."""
        path = run_dir / RESULTS_FILE
        try:
            info = path.stat()
        except OSError:
            return None
        stamp = (info.st_size, info.st_mtime_ns)
        with self._lock:
            hit = self._seen.get(run_dir)
            if hit is not None and hit[0] == stamp:
                return hit[1]
        found = read_outcomes(path)
        with self._lock:
            self._seen[run_dir] = (stamp, found)
        return found


def read_outcomes(path: Path) -> Outcomes:
    """Graded and passed items per condition, and the cache's share, of one results file.

    Args:
        path: A run's ``results.parquet``.

    Returns:
        The :class:`Outcomes` (empty when the file lacks the columns).

    Raises:
        InputError: The file is not a regular file, or larger than the viewer reads.
    """
    import pyarrow.parquet as pq

    data = read_bounded(path)
    if data is None:
        return Outcomes()
    source = pq.ParquetFile(io.BytesIO(data))
    names = set(source.schema_arrow.names)
    wanted = [c for c in ("condition", "status", "passed", "cache_hit", "origin_run_id")
              if c in names]
    if not {"condition", "status", "passed"} <= set(wanted):
        return Outcomes()
    frame = source.read(columns=wanted).to_pandas()
    graded = frame[frame["status"].isin(GRADED)]
    by_condition = {
        str(condition): (len(part), int((part["passed"] == True).sum()))  # noqa: E712
        for condition, part in graded.groupby("condition", sort=True)
    }
    cached_rows = (frame[frame["cache_hit"] == True] if "cache_hit" in frame  # noqa: E712
                   else frame.iloc[0:0])
    origins: tuple[str, ...] = ()
    if len(cached_rows):
        values = (cached_rows["origin_run_id"] if "origin_run_id" in cached_rows
                  else cached_rows["condition"].map(lambda _: None))
        origins = tuple(sorted({str(v) if v is not None and v == v else "unknown"
                                for v in values}))
    return Outcomes(by_condition, len(cached_rows), origins)
