"""Write the index of every public name into docs/api.md (between its two markers).

The index is the public surface as the packages declare it: each subpackage's ``__all__``,
each name with its kind and the first line of its docstring. ``tests/test_architecture.py``
checks that the committed index is what this script writes.

Usage:
    python scripts/make_api_reference.py
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
from pathlib import Path

import evalkit

ROOT = Path(__file__).resolve().parents[1]
API_DOC = ROOT / "docs" / "api.md"
BEGIN = "<!-- BEGIN GENERATED INDEX: scripts/make_api_reference.py -->"
END = "<!-- END GENERATED INDEX -->"


def _kind(value: object) -> str:
    if inspect.isclass(value):
        return "class"
    if inspect.isfunction(value):
        return "function"
    if inspect.ismodule(value):
        return "module"
    if callable(value) or str(type(value)).startswith("<class 'typing"):
        return "type"
    return "constant"


def _summary(value: object, kind: str) -> str:
    if kind not in ("class", "function"):
        return ""
    first = (inspect.getdoc(value) or "").strip().split("\n\n")[0]
    return " ".join(first.split()).replace("|", "\\|")


def packages() -> list[str]:
    """Every subpackage of evalkit with an ``__all__``, sorted."""
    return sorted(m.name for m in pkgutil.iter_modules(evalkit.__path__) if m.ispkg)


def index() -> str:
    """The generated index: one table per package."""
    lines = [BEGIN, ""]
    for name in packages():
        module = importlib.import_module(f"evalkit.{name}")
        lines += [f"### `evalkit.{name}`", "", "| name | kind | what it is |", "|---|---|---|"]
        for public in sorted(module.__all__, key=str.lower):
            value = getattr(module, public)
            kind = _kind(value)
            lines.append(f"| `{public}` | {kind} | {_summary(value, kind)} |")
        lines.append("")
    lines.append(END)
    return "\n".join(lines)


def rendered(text: str) -> str:
    """``text`` (docs/api.md) with its index replaced by the current one."""
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return head + index() + tail


def main() -> int:
    """Rewrite docs/api.md's index; exit 0."""
    API_DOC.write_text(rendered(API_DOC.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"wrote {API_DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
