"""Interoperability: results of other harnesses imported as runs, runs exported to their formats.

``import_results`` reads Inspect AI logs, promptfoo results, skill-creator benchmarks and
workspaces, Harbor trials and plain CSV/JSONL tables (the ``--format`` names of
:data:`IMPORT_FORMATS`, plus the ``importer`` plugins of :func:`evalkit.register` and of the
``evalkit.plugins`` entry-point group) into an evalkit run; ``export_run`` writes a
run in skill-creator's formats (:data:`EXPORT_FORMATS`). A format declares its own options
model (:class:`ImportOptions`), which ``evalkit import --format-opt KEY=VALUE`` fills. Runs
are written and read through :mod:`evalkit.results`; an export's verdict is
:func:`evalkit.analysis.compare`'s.
"""

__all__ = [
    "ExportResult",
    "ImportOptions",
    "ImportRequest",
    "ImportResult",
    "Importer",
    "export_run",
    "import_results",
]

from typing import TYPE_CHECKING

from evalkit import _lazy

if TYPE_CHECKING:
    from evalkit.interop._export import EXPORT_FORMATS as EXPORT_FORMATS, ExportResult, export_run
    from evalkit.interop._import import (
        IMPORT_FORMATS as IMPORT_FORMATS,
        ImportResult,
        import_results,
    )
    from evalkit.interop._import_options import TIMEOUT_POLICIES as TIMEOUT_POLICIES, ImportOptions
    from evalkit.interop._import_registry import (
        Importer,
        ImportRequest,
        get_importer as get_importer,
        importer_names as importer_names,
    )
else:
    __getattr__, __dir__ = _lazy.attach(__name__, __file__)
