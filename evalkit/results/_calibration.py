"""Where a run keeps its judge calibrations, and how they are read back.

``evalkit judge calibrate`` writes one JSON report per judge identity (provider, model,
prompt hash) under ``<run>/calibration/``; the analyses read them to tell whether a verdict
rests on a calibrated judge. This module is the one place that names those files, and the
columns of a labels CSV.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit._spreadsheet import restore_cell
from evalkit._untrusted import read_json
from evalkit.errors import InputError

if TYPE_CHECKING:
    import os

    import pandas as pd

#: Directory of a run holding its calibration reports.
CALIBRATION_DIR = "calibration"

#: Columns of a labels CSV as ``evalkit judge sample`` writes it and the labelling page exports
#: it: what ``evalkit judge calibrate`` reads (the item, the statement, ``label``), and what a
#: labeller reads (``prompt``, ``answer``). The judge's verdict and evidence are not among them.
LABEL_COLUMNS: tuple[str, ...] = (
    "item_key",
    "case_id",
    "condition",
    "trial",
    "component",
    "expectation",
    "prompt",
    "answer",
    "label",
)

#: How to get a labels CSV, the fix of a labels file that cannot be read.
LABELS_FIX = "make one with 'evalkit judge sample RUN -n 50 -o labels.csv'"

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def calibration_path(run_dir: str | Path, judge: Mapping[str, Any]) -> Path:
    """The calibration report of one judge of a run.

    Args:
        run_dir: The run directory.
        judge: The judge's identity: ``provider``, ``model``, ``prompt_hash``.

    Returns:
        ``<run_dir>/calibration/<provider>--<model>--<prompt hash>.json``.
    """
    parts = [str(judge["provider"]), str(judge["model"]), str(judge["prompt_hash"])]
    name = "--".join(_UNSAFE.sub("_", p) for p in parts) + ".json"
    return Path(run_dir) / CALIBRATION_DIR / name


def read_calibration(run_dir: str | Path, judge: Mapping[str, Any]) -> dict[str, Any] | None:
    """The stored calibration report of a judge, or None when the run has none.

    Raises:
        InputError: The file exists but is not a calibration report (named, with the fix).
    """
    path = calibration_path(run_dir, judge)
    if not path.is_file():
        return None
    fix = f"delete it and run 'evalkit judge calibrate {Path(run_dir).name} --labels FILE' again"
    try:
        data = read_json(path)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: not a readable calibration report ({exc}); {fix}") from None
    kappa = data.get("kappa") if isinstance(data, dict) else None
    if not isinstance(kappa, dict) or "ci_low" not in kappa:
        raise InputError(f"{path}: field 'kappa.ci_low' is missing; {fix}")
    return dict(data)


def read_labels_csv(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A labels CSV as text cells (nothing read as a number or NaN), column names lower case.

    The ``'`` written before a formula-like cell (``=``, ``+``, ``-``, ``@``) is removed.

    Args:
        path: The ``--labels`` file.

    Returns:
        Its rows; which columns it must have is the reader's to check.

    Raises:
        InputError: The file is missing or not CSV (the message names it and how to make one).
    """
    import pandas as pd

    file = Path(path)
    try:
        frame = pd.read_csv(file, dtype=str, keep_default_na=False)
    except FileNotFoundError:
        raise InputError(f"--labels {file}: file not found; {LABELS_FIX}") from None
    except (OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise InputError(f"--labels {file}: cannot read it as CSV ({exc}); {LABELS_FIX}") from None
    frame.columns = [str(c).strip().lower() for c in frame.columns]
    return frame.map(restore_cell)  # the ' written before formula-like text
