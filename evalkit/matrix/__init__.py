"""The run matrix: work items, stable keys, item hashes and plans."""

__all__ = [
    "item_key",
    "parse_item_key",
]

from typing import TYPE_CHECKING

from evalkit import _lazy

if TYPE_CHECKING:
    from evalkit._keys import (
        ItemKeyParts as ItemKeyParts,
        parse_item_key,
    )
    from evalkit.matrix._plan import (
        ProviderSpec as ProviderSpec,
        WorkItem as WorkItem,
        build_plan as build_plan,
        item_key,
        item_seed as item_seed,
    )
else:
    __getattr__, __dir__ = _lazy.attach(__name__, __file__)
