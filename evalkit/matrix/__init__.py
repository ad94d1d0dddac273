"""The run matrix: work items, stable keys, item hashes and plans."""

from evalkit._keys import ItemKeyParts, parse_item_key
from evalkit.matrix._plan import ProviderSpec, WorkItem, build_plan, item_key, item_seed

__all__ = [
    "ItemKeyParts",
    "ProviderSpec",
    "WorkItem",
    "build_plan",
    "item_key",
    "item_seed",
    "parse_item_key",
]
