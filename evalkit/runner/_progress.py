"""A progress bar on stderr: done/total, errors, elapsed and ETA."""

from __future__ import annotations

from types import TracebackType

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from evalkit._terminal import console


class RunProgress:
    """Progress of a run, drawn on stderr (a no-op when disabled).

    Args:
        total: Items to run.
        description: Label shown before the bar.
        enabled: Whether to draw anything.
    """

    def __init__(self, total: int, description: str, enabled: bool = True) -> None:
        self.console = console(stderr=True)
        self.errors = 0
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("errors: {task.fields[errors]}"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=self.console,
            disable=not enabled,
            transient=False,
        )
        self._task = self._progress.add_task(description, total=total, errors=0)

    def __enter__(self) -> RunProgress:
        self._progress.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._progress.stop()

    def advance(self, n: int = 1, *, error: bool = False) -> None:
        """Count ``n`` finished items (and one error if ``error``)."""
        self.errors += int(error)
        self._progress.update(self._task, advance=n, errors=self.errors)

    def log(self, message: str) -> None:
        """Print a line above the bar."""
        self._progress.console.print(message, markup=False, highlight=False, soft_wrap=True)
