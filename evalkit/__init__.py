"""evalkit: did this edit to an agent's skill make it better, worse, or can we not tell yet?

The public API is one function per question, each accepting run directories (or run ids) or
tidy DataFrames, and returning an object whose ``.to_dict()`` is the matching CLI command's
``--json`` output:

- :func:`run` — run a suite's matrix (``evalkit run``);
- :func:`read_run` — a run's tidy result table;
- :func:`lift` — skill-lift metrics (``evalkit lift``);
- :func:`compare` — paired verdict of two runs or two conditions (``evalkit compare``);
- :func:`flips` — flip rates within or between runs (``evalkit flips``);
- :func:`explain` — why a case flips: its trials, what separates passes from failures, the
  first divergence of their transcripts (``evalkit explain``);
- :func:`power` — cases and trials needed, minimum detectable effect (``evalkit power``);
- :func:`gate` — the CI delivery gate (``evalkit gate``);
- :func:`import_results` — results from other harnesses (``evalkit import``);
- :func:`judge_run` — re-grade a run's expectations without rerunning the agent
  (``evalkit judge``);
- :func:`view` — a live local viewer of a runs directory, from a notebook (``evalkit view``);
- :func:`register`, :func:`plugin_names` and :func:`plugin` — the one plugin registry:
  providers, import formats and optimizers, by kind; ``@evalkit.plugin(kind)`` declares a
  factory a plugin, so that a ``package.module:attribute`` spec may name it.
"""

__all__ = [
    "RunConfig",
    "RunResult",
    "__version__",
    "compare",
    "explain",
    "flips",
    "gate",
    "import_results",
    "judge_run",
    "lift",
    "plugin",
    "plugin_names",
    "power",
    "read_run",
    "register",
    "run",
    "view",
]

from typing import TYPE_CHECKING

from evalkit import _lazy
from evalkit._version import __version__

if TYPE_CHECKING:
    from evalkit._registry import plugin, plugin_names, register
    from evalkit.analysis import compare, explain, flips, gate, lift, power
    from evalkit.interop import import_results
    from evalkit.judge import judge_run
    from evalkit.results import read_run
    from evalkit.runner import RunConfig, RunResult, run
    from evalkit.viewer import view
else:
    __getattr__, __dir__ = _lazy.attach(__name__, __file__)
