"""Secrets, their transformations, and a search of files for any of them.

The search does not trust the redactor's own idea of a transformation: besides the exact
strings a hostile server sends, it looks for the key in every text with whitespace and
zero-width characters removed and case folded (also reversed, percent-decoded, hex-decoded),
and base64-decodes every run of base64 characters at every alignment.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import unicodedata
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq

#: Fake keys: not shaped like any vendor's key, so only the known-secret path can catch them.
#: Each has ``~`` at every byte alignment, so its standard and URL-safe base64 differ.
OPENAI_KEY = "lbk9Qz7~wXy2_Pm~R4vTn8~sKd3Hf~J6gLa0Zq"
ANTHROPIC_KEY = "Vq3~Zr8_Ty6~Wn1-Ks5~Mp2Lx4Hd7Jc9Fb0Ge"

ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def transformations(key: str) -> dict[str, str]:
    """Every transformation of ``key`` a leak may take, by name."""
    raw = key.encode()
    forms = {
        "literal": key,
        "upper": key.upper(),
        "lower": key.lower(),
        "swapcase": key.swapcase(),
        "reversed": key[::-1],
        "reversed-upper": key[::-1].upper(),
        "spaces": " ".join(_chunks(key, 4)),
        "newlines": "\n".join(_chunks(key, 7)),
        "tabs-every-char": "\t".join(key),
        "percent-all": "".join(f"%{b:02X}" for b in raw),
        "percent-lower": "".join(f"%{b:02x}" for b in raw),
        "percent-quote": urllib.parse.quote(key, safe=""),
        "percent-mixed": "".join(f"%{ord(c):02X}" if i % 2 else c for i, c in enumerate(key)),
        "hex": raw.hex(),
        "hex-upper": raw.hex().upper(),
        "hex-escaped": "".join(f"\\x{b:02x}" for b in raw),
        "hex-colons": ":".join(f"{b:02x}" for b in raw),
        "base64": base64.b64encode(raw).decode(),
        "base64-user-key": base64.b64encode(b"user:" + raw).decode(),
        "base64-offset-1": base64.b64encode(b"x" + raw + b"tail").decode(),
        "base64-offset-2": base64.b64encode(b"xy" + raw).decode(),
        "base64-url": base64.urlsafe_b64encode(raw).decode(),
        "base64-url-user-key": base64.urlsafe_b64encode(b"api:" + raw).decode(),
        "base64-url-offset-2": base64.urlsafe_b64encode(b"ab" + raw + b"!").decode(),
        "base64-wrapped": "\n".join(_chunks(base64.b64encode(b"key=" + raw).decode(), 16)),
    }
    for char in ZERO_WIDTH:
        forms[f"zero-width-{ord(char):04X}"] = char.join(key)
    forms["zero-width-mixed-case"] = "\u200b".join(key.swapcase())
    forms["split-plus"] = f"{key[:12]} + {key[12:]}"  # two pieces, neither the key
    # Compatibility forms: NFKC reads each as the key's own characters.
    forms["fullwidth"] = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in key)
    forms["math-bold"] = "".join(_math_bold(c) for c in key)
    return forms


def _math_bold(char: str) -> str:
    """``char`` as MATHEMATICAL BOLD (U+1D400...), letters and digits only."""
    if "a" <= char <= "z":
        return chr(0x1D41A + ord(char) - ord("a"))
    if "A" <= char <= "Z":
        return chr(0x1D400 + ord(char) - ord("A"))
    if "0" <= char <= "9":
        return chr(0x1D7CE + ord(char) - ord("0"))
    return char


def texts_of(path: Path) -> Iterator[str]:
    """The file's text, and every string inside it when it is JSON, JSONL, notebook or parquet."""
    if path.suffix == ".parquet":
        frame = pq.read_table(path).to_pandas()
        for column in frame.columns:
            yield str(column)
            yield from (str(v) for v in frame[column].tolist())
        return
    text = path.read_bytes().decode("utf-8", "replace")
    yield text
    documents = text.splitlines() if path.suffix == ".jsonl" else [text]
    if path.suffix in (".json", ".jsonl", ".ipynb"):
        for document in documents:
            if document.strip():
                yield from _strings(json.loads(document))


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


_SQUEEZE = {ord(c): None for c in ZERO_WIDTH + " \t\n\r\x0b\x0c"}
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{12,}")


_ESCAPE = re.compile(r"\\+(?:u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|([ntrfv]))")
_ESCAPED = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v"}


def _unescape(match: re.Match[str]) -> str:
    code = match.group(1) or match.group(2)
    return chr(int(code, 16)) if code else _ESCAPED[match.group(3)]


def _decoded_views(text: str) -> Iterator[str]:
    unescaped = _ESCAPE.sub(_unescape, text)
    # Escaped surrogate pairs (JSON's spelling of U+10000 and above) as the one character.
    unescaped = unescaped.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    for plain in {text, unescaped}:
        yield from _views(plain)


def _views(text: str) -> Iterator[str]:
    squeezed = text.translate(_SQUEEZE)
    for view in (squeezed, urllib.parse.unquote(squeezed)):
        yield view.casefold()
        yield unicodedata.normalize("NFKC", view).casefold()
        digits = re.sub(r"\\x|[^0-9a-fA-F]", "", view)
        for start in (0, 1):
            try:
                yield binascii.unhexlify(digits[start : len(digits) - (len(digits) - start) % 2])\
                    .decode("latin-1").casefold()
            except (binascii.Error, ValueError):
                pass
        for run in _BASE64_RUN.findall(view):
            normal = run.replace("-", "+").replace("_", "/")
            for skip in range(4):
                part = normal[skip:]
                part = part[: len(part) - len(part) % 4]
                try:
                    yield base64.b64decode(part).decode("latin-1").casefold()
                except (binascii.Error, ValueError):
                    pass


def _random_looking(piece: str) -> bool:
    """A digit, or both cases: key material rather than a readable part (``sk-ant-``)."""
    return any(c.isdigit() for c in piece) or (
        any(c.isupper() for c in piece) and any(c.islower() for c in piece))


def leaks(files: list[Path], key: str) -> list[str]:
    """Where ``key`` or a transformation of it occurs in ``files`` (empty: nowhere)."""
    found = []
    exact = transformations(key)
    wanted = (key.casefold(), key[::-1].casefold())
    for path in files:
        for text in texts_of(path):
            found += [f"{path}: {name}" for name, form in exact.items() if form in text]
            found += [f"{path}: a piece of it ({piece!r})"  # any random-looking 8 of it
                      for i in range(len(key) - 8 + 1)
                      if _random_looking(piece := key[i : i + 8]) and piece in text]
            if any(w in view for view in _decoded_views(text) for w in wanted):
                found.append(f"{path}: decodes to the key")
    return sorted(set(found))
