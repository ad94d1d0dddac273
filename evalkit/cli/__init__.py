"""The command-line interface (a thin layer over the library)."""

from evalkit.cli._main import build_parser, console_main, main

__all__ = ["build_parser", "console_main", "main"]
