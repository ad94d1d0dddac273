"""``python -m evalkit``."""

from evalkit.cli import console_main

console_main()
