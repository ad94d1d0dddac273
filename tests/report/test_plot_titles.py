"""Plot titles fit inside their figure (the forest plot's was cut off at the right edge)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg

import evalkit.report as rk


def _cases(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    estimate = rng.uniform(-0.6, 0.6, n)
    return pd.DataFrame({
        "case_id": [f"a-rather-long-case-identifier-{i}" for i in range(n)],
        "condition": "self-load",
        "estimate": estimate, "ci_low": estimate - 0.3, "ci_high": estimate + 0.3,
        "verdict": "inconclusive",
    })


def test_forest_plot_title_fits() -> None:
    fig = rk.forest_plot(_cases(148), max_cases=20)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    box = fig.bbox
    texts = [t for t in (fig._suptitle, *(ax.title for ax in fig.axes)) if t and t.get_text()]
    assert any("20 of 148 shown" in t.get_text() for t in texts)
    for text in texts:
        extent = text.get_window_extent(renderer)
        assert box.x0 <= extent.x0 and extent.x1 <= box.x1, text.get_text()
        assert box.y0 <= extent.y0 and extent.y1 <= box.y1, text.get_text()
