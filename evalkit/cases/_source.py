"""YAML documents that remember where each value was written (line numbers, source text)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import yaml

#: libyaml's safe loader when available (10x faster), else the pure-Python one.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: libyaml's safe dumper when available: the pure-Python emitter took 160 s for a suite of
#: 18,000 imported cases, libyaml a few seconds.
_YAML_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def dump_yaml(data: Any) -> str:
    """``data`` as YAML as evalkit writes suite files: keys in order, Unicode kept, width 100.

    Examples:
        >>> print(dump_yaml({"b": 1, "a": ["é"]}), end="")
        b: 1
        a:
        - é
    """
    text: str = yaml.dump(
        data, Dumper=_YAML_DUMPER, sort_keys=False, allow_unicode=True, width=100
    )
    return text


class YamlDocument(NamedTuple):
    """A parsed YAML file: its data, the node tree it was built from, and its text.

    Attributes:
        data: The constructed Python value (dicts, lists, scalars).
        node: The root node; every node carries the marks of where it was written.
        text: The file's text (to quote what was written).
    """

    data: Any
    node: yaml.Node
    text: str


def parse_yaml(text: str) -> YamlDocument | None:
    r"""Parse one YAML document, keeping its node tree.

    Args:
        text: The YAML text.

    Returns:
        The document, or None when the text holds no document.

    Raises:
        yaml.YAMLError: The text is not valid YAML.

    Examples:
        >>> doc = parse_yaml("a:\n  b: 1\n")
        >>> doc.data, line_of(doc.node, ("a", "b"))
        ({'a': {'b': 1}}, 2)
    """
    loader = _YAML_LOADER(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        return YamlDocument(loader.construct_document(node), node, text)
    finally:
        loader.dispose()


def node_at(node: yaml.Node, loc: Sequence[int | str], *, key: bool = False) -> yaml.Node:
    """The deepest node along ``loc`` (mapping keys and sequence indices).

    Parts that do not name a key or an index (such as a union's tag) are skipped, so the
    result is the closest node the user wrote.

    Args:
        node: Where to start.
        loc: Keys and indices, outermost first.
        key: Return the key node of the last mapping entry instead of its value (for a key
            that should not be there).

    Returns:
        The node found.
    """
    for i, part in enumerate(loc):
        last = i == len(loc) - 1
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            entry = next((kv for kv in node.value if kv[0].value == part), None)
            if entry is not None:
                node = entry[0] if key and last else entry[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if 0 <= part < len(node.value):
                node = node.value[part]
    return node


def line_of(node: yaml.Node, loc: Sequence[int | str], *, key: bool = False) -> int:
    """1-based line of the node along ``loc`` (see :func:`node_at`)."""
    return int(node_at(node, loc, key=key).start_mark.line) + 1


def written(doc: YamlDocument, node: yaml.Node) -> str:
    """The source text of ``node`` as written in the file (first line, stripped)."""
    start, end = node.start_mark.index, node.end_mark.index
    lines = doc.text[start:end].strip().splitlines()
    return lines[0].strip() if lines else ""
