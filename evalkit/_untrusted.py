"""The one reader of untrusted JSON and YAML: bounded in size and nesting depth.

Every JSON or YAML text evalkit did not write itself in this process (cache entries,
manifests, transcripts, imported files, CLI and HTTP answers, files an agent wrote) is parsed
here. Python's own parsers recurse: ``json.loads`` of 200,000 nested brackets raises
``RecursionError`` and PyYAML's constructor does the same, so an unchecked reader turns a
hostile file into a traceback (or a crash of every run that reads it). These readers check
the bounds *before* parsing:

- **size**: at most :func:`max_input_bytes` bytes (256 MiB unless ``EVALKIT_MAX_INPUT_BYTES``
  says otherwise), checked on the file's size before it is read;
- **depth**: at most :data:`MAX_DEPTH` nested arrays/objects (JSON) or collections (YAML),
  counted on the text (JSON) or the parser's event stream (YAML), which build nothing.

A text beyond a bound raises :class:`InputBoundError` (an ``InputError``: exit code 2) naming
the file and the bound; readers of a cache catch it and count the entry as a miss. Syntax
errors are left to the caller (``json.JSONDecodeError``, ``yaml.YAMLError``), which knows
how to word them for its file.
"""

from __future__ import annotations

import json
import os
import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import yaml

from evalkit.errors import InputBoundError as InputBoundError, InputError

#: The deepest nesting of arrays/objects (JSON) or collections (YAML) accepted.
MAX_DEPTH = 128

#: The default size bound of one untrusted file or text, in bytes.
DEFAULT_MAX_INPUT_BYTES = 256 * 1024**2

#: The environment variable that overrides :data:`DEFAULT_MAX_INPUT_BYTES`.
MAX_BYTES_ENV = "EVALKIT_MAX_INPUT_BYTES"

_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)


@cache
def _yaml_loader() -> type[yaml.SafeLoader]:
    """The safe loader of libyaml where PyYAML was built with it, else the pure-Python one.

    PyYAML is imported here, on first use: reading JSON (``compare``) does not pay for it.
    """
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def max_input_bytes() -> int:
    """The size bound in bytes: ``EVALKIT_MAX_INPUT_BYTES`` when set, else 256 MiB.

    Returns:
        The bound.

    Raises:
        InputError: The variable is not a positive integer.
    """
    raw = os.environ.get(MAX_BYTES_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_INPUT_BYTES
    if not raw.isdigit() or int(raw) <= 0:
        raise InputError(f"{MAX_BYTES_ENV}={raw!r}: must be a positive number of bytes")
    return int(raw)


def _size_problem(size: int, limit: int) -> str:
    return (
        f"{size:,} bytes, more than the {limit:,} bytes evalkit reads from an untrusted file "
        f"(set {MAX_BYTES_ENV} to raise the bound)"
    )


def _depth_problem(kind: str) -> str:
    return f"{kind} nested more than {MAX_DEPTH} levels deep, more than evalkit reads"


def json_depth(text: str, stop_after: int = MAX_DEPTH) -> int:
    """How deeply the arrays and objects of a JSON text nest, without parsing it.

    Brackets inside strings are skipped. Texts with more than ``stop_after`` opening
    brackets are counted with numpy (one pass over the bracket positions).

    Args:
        text: The JSON text (need not be valid).
        stop_after: Up to this many opening brackets, a plain Python scan counts them.

    Returns:
        The maximum depth (0 for a scalar); at most the number of opening brackets.

    Examples:
        >>> json_depth('{"a": [[1], "[[[["]}')
        3
    """
    opens = text.count("[") + text.count("{")
    if opens <= stop_after:
        return _plain_depth(text) if opens else 0
    import numpy as np

    structure = _JSON_STRING.sub("", text) if '"' in text else text
    raw = np.frombuffer(structure.encode("utf-8", "replace"), dtype=np.uint8)
    where = np.flatnonzero((raw == 0x5B) | (raw == 0x7B) | (raw == 0x5D) | (raw == 0x7D))
    if where.size == 0:
        return 0
    picked = raw[where]
    steps = np.where((picked == 0x5B) | (picked == 0x7B), 1, -1).astype(np.int64)
    return int(max(0, int(np.cumsum(steps).max())))


def _plain_depth(text: str) -> int:
    depth = deepest = 0
    for match in re.finditer(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', text):
        char = match.group()
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def load_json(text: str | bytes, source: object, *, max_bytes: int | None = None) -> Any:
    """Parse an untrusted JSON text within the size and depth bounds.

    Args:
        text: The JSON text (bytes are decoded as UTF-8).
        source: The file or stream it came from (named in errors).
        max_bytes: The size bound; :func:`max_input_bytes` when None.

    Returns:
        The parsed value.

    Raises:
        InputBoundError: The text is too large or nested too deeply.
        json.JSONDecodeError: The text is not valid JSON (a ``ValueError``).

    Examples:
        >>> load_json('{"a": [1, 2]}', "x.json")
        {'a': [1, 2]}
        >>> try:
        ...     load_json("[" * 200 + "]" * 200, "x.json")
        ... except InputBoundError as exc:
        ...     print(exc)
        x.json: JSON nested more than 128 levels deep, more than evalkit reads
    """
    limit = max_input_bytes() if max_bytes is None else max_bytes
    size = len(text)
    if isinstance(text, str) and size * 4 > limit:  # a character is at most 4 bytes
        size = len(text.encode("utf-8", "replace"))
    if size > limit:
        raise InputBoundError(source, "size", _size_problem(size, limit))
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    if json_depth(text) > MAX_DEPTH:
        raise InputBoundError(source, "depth", _depth_problem("JSON"))
    return json.loads(text)


def read_text(path: str | os.PathLike[str], encoding: str = "utf-8") -> str:
    """Read an untrusted file's text, refusing it before reading when it is too large.

    Args:
        path: The file.
        encoding: Its encoding.

    Returns:
        The text.

    Raises:
        InputBoundError: The file is larger than :func:`max_input_bytes`.
        OSError: The file cannot be read.
        UnicodeDecodeError: The file is not valid in ``encoding``.
    """
    limit = max_input_bytes()
    size = os.stat(path).st_size
    if size > limit:
        raise InputBoundError(path, "size", _size_problem(size, limit))
    return Path(path).read_text(encoding=encoding)


def read_json(path: str | os.PathLike[str], encoding: str = "utf-8") -> Any:
    """Read and parse an untrusted JSON file within the bounds.

    Args:
        path: The file.
        encoding: Its encoding (``utf-8-sig`` accepts a byte-order mark).

    Returns:
        The parsed value.

    Raises:
        InputBoundError: The file is too large or nested too deeply.
        json.JSONDecodeError: Not valid JSON.
        OSError: The file cannot be read.
        UnicodeDecodeError: The file is not valid in ``encoding``.
    """
    return load_json(read_text(path, encoding), path)


def check_yaml(text: str, source: object, *, aliases: bool = False) -> None:
    """Check an untrusted YAML text's bounds on the parser's event stream (builds nothing).

    Args:
        text: The YAML text.
        source: The file it came from (named in errors).
        aliases: Whether aliases (``*name``) are allowed; they are refused by default, since
            nested aliases ("billion laughs") expand into billions of objects.

    Raises:
        InputBoundError: Too large, nested too deeply, or an alias where none is allowed.
        yaml.YAMLError: The text is not valid YAML.
    """
    limit = max_input_bytes()
    if len(text) > limit:
        raise InputBoundError(source, "size", _size_problem(len(text), limit))
    import yaml

    opening = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
    closing = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
    depth = 0
    for event in yaml.parse(text, Loader=_yaml_loader()):
        if isinstance(event, opening):
            depth += 1
            if depth > MAX_DEPTH:
                raise InputBoundError(
                    source, "depth", f"{_line(event)}: " + _depth_problem("YAML")
                )
        elif isinstance(event, closing):
            depth -= 1
        elif isinstance(event, yaml.AliasEvent) and not aliases:
            raise InputBoundError(
                source,
                "aliases",
                f"{_line(event)}: YAML aliases are not allowed "
                f"(found '*{event.anchor}'); write the value out in full instead of referring "
                "to an anchor",
            )


def _line(event: yaml.Event) -> str:
    mark = event.start_mark
    return "line ?" if mark is None else f"line {mark.line + 1}, column {mark.column + 1}"


def load_yaml(text: str, source: object) -> Any:
    """Parse an untrusted YAML text (safe loader) within the bounds, aliases refused.

    Args:
        text: The YAML text.
        source: The file it came from (named in errors).

    Returns:
        The parsed value (None for an empty document).

    Raises:
        InputBoundError: Too large, nested too deeply, or holding an alias.
        yaml.YAMLError: The text is not valid YAML.

    Examples:
        >>> load_yaml("a: [1, 2]", "gate.yaml")
        {'a': [1, 2]}
    """
    check_yaml(text, source)
    import yaml

    return yaml.load(text, Loader=_yaml_loader())  # noqa: S506 - a safe loader
