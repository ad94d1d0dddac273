"""Write the generated parts of docs/architecture.md: the error tree and the root modules.

Both are read from the code, so they cannot drift: the tree from the exception classes of
``evalkit/errors.py`` (each with the first sentence of its docstring, a class with two evalkit
bases drawn under the first and named under the second), the root modules from
``evalkit/*.py`` (each with the first line of its docstring). ``tests/test_architecture.py``
checks that the committed sections are what this script writes.

Usage:
    python scripts/make_architecture_tables.py
"""

from __future__ import annotations

import ast
import inspect
import sys
from pathlib import Path

import evalkit.errors

ROOT = Path(__file__).resolve().parents[1]
ARCHITECTURE_DOC = ROOT / "docs" / "architecture.md"
SECTIONS = {
    "error tree": "error_tree",
    "root modules": "root_modules",
}


def _markers(section: str) -> tuple[str, str]:
    return (
        f"<!-- BEGIN GENERATED {section.upper()}: scripts/make_architecture_tables.py -->",
        f"<!-- END GENERATED {section.upper()} -->",
    )


def _first_sentence(text: str | None) -> str:
    first = " ".join((text or "").strip().split("\n\n")[0].split()).replace("e.g. ", "e.g.\0")
    sentence = first.split(". ")[0].split("; ")[0].replace("\0", " ")
    return sentence.rstrip(".")


def _error_classes() -> list[type[BaseException]]:
    """The exception classes of ``evalkit.errors``, in the order the module defines them."""
    found = [
        value for value in vars(evalkit.errors).values()
        if inspect.isclass(value) and issubclass(value, BaseException)
        and value.__module__ == evalkit.errors.__name__
    ]
    return sorted(found, key=lambda c: inspect.getsourcelines(c)[1])


def error_tree() -> str:
    """The tree of evalkit's exceptions, as a fenced text block."""
    classes = _error_classes()
    column = 44  # where every description starts

    def children(parent: type[BaseException]) -> list[type[BaseException]]:
        return [c for c in classes if parent in c.__bases__]

    lines = [evalkit.errors.EvalkitError.__name__]

    def draw(parent: type[BaseException], prefix: str) -> None:
        below = children(parent)
        for index, child in enumerate(below):
            last = index == len(below) - 1
            branch, carry = ("└── ", "    ") if last else ("├── ", "│   ")
            home = next(b for b in child.__bases__ if b in classes)
            drawn_here = home is parent
            label = f"(drawn under {home.__name__})"
            if drawn_here:
                label = _first_sentence(child.__doc__)
            lines.append(f"{prefix}{branch}{child.__name__}".ljust(column) + label)
            if drawn_here:
                draw(child, prefix + carry)

    draw(evalkit.errors.EvalkitError, "")
    return "\n".join(["```", *lines, "```"])


def root_modules() -> str:
    """The root-level modules of ``evalkit/``, as a table."""
    lines = ["| module | what it is |", "|---|---|"]
    for path in sorted((ROOT / "evalkit").glob("*.py")):
        if path.stem in ("__init__", "__main__"):
            continue
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        summary = " ".join((doc or "").strip().split("\n\n")[0].split()).replace("|", "\\|")
        lines.append(f"| `evalkit.{path.stem}` | {summary} |")
    return "\n".join(lines)


def rendered(text: str) -> str:
    """``text`` (docs/architecture.md) with every generated section replaced by the current one."""
    for section, function in SECTIONS.items():
        begin, end = _markers(section)
        head, found, rest = text.partition(begin)
        if not found:
            raise SystemExit(f"docs/architecture.md has no {begin!r} marker")
        _, _, tail = rest.partition(end)
        text = f"{head}{begin}\n{globals()[function]()}\n{end}{tail}"
    return text


def main() -> int:
    """Rewrite docs/architecture.md's generated sections; exit 0."""
    text = ARCHITECTURE_DOC.read_text(encoding="utf-8")
    ARCHITECTURE_DOC.write_text(rendered(text), encoding="utf-8")
    print(f"wrote {ARCHITECTURE_DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
