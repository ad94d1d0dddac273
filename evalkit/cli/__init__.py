"""The command-line interface (a thin layer over the library)."""

__all__ = [
    "main",
]

from typing import TYPE_CHECKING

from evalkit import _lazy

if TYPE_CHECKING:
    from evalkit.cli._main import (
        build_parser as build_parser,
        console_main as console_main,
        main,
    )
else:
    __getattr__, __dir__ = _lazy.attach(__name__, __file__)
