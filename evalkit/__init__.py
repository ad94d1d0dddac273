"""evalkit: did this edit to an agent's skill make it better, worse, or can we not tell yet?"""

from evalkit.results import read_run

__version__ = "0.1.0"

__all__ = ["__version__", "read_run"]
