"""The run matrix: work items, stable keys, item hashes and plans."""

from evalkit.matrix._plan import ProviderSpec, WorkItem, build_plan, item_key, item_seed

__all__ = ["ProviderSpec", "WorkItem", "build_plan", "item_key", "item_seed"]
