"""The redactor on its own: every transformation of a key, header shapes, what it leaves alone.

Each leak is checked with :func:`tests.security.leak_probes.leaks`, which searches decoded
views of the text (JSON, escapes, percent, hex, base64 at every alignment) independently of
the redactor's own patterns.
"""

from __future__ import annotations

import base64
import json
import sys
import unicodedata
from pathlib import Path

import pytest

from evalkit._redact import (
    MARK,
    WHITESPACE,
    ZERO_WIDTH,
    clip,
    clip_tail,
    redact_text,
    redact_value,
    register_secret_env,
    secret_values,
)
from tests.security.leak_probes import ANTHROPIC_KEY, OPENAI_KEY, leaks, transformations

KEYS = (OPENAI_KEY, ANTHROPIC_KEY)


def _leaks_in(tmp_path: Path, text: str, key: str) -> list[str]:
    path = tmp_path / "out.json"
    path.write_text(json.dumps({"text": text}), encoding="utf-8")
    return leaks([path], key)


@pytest.mark.parametrize("name", sorted(transformations(OPENAI_KEY)))
@pytest.mark.parametrize("wrap", ["plain", "json", "json-twice", "repr"])
def test_every_transformation_is_redacted_in_every_wrapping(
    name: str, wrap: str, tmp_path: Path
) -> None:
    form = transformations(OPENAI_KEY)[name]
    wrapped = {"plain": form, "json": json.dumps(form), "repr": repr(form),
               "json-twice": json.dumps(json.dumps(form))}[wrap]
    text = f"error: upstream said {wrapped} (request 42)"
    assert _leaks_in(tmp_path, text, OPENAI_KEY), "the probe must see the unredacted leak"
    redacted = redact_text(text, KEYS)
    assert MARK in redacted
    assert _leaks_in(tmp_path, redacted, OPENAI_KEY) == []
    assert redacted.startswith("error: upstream said") and redacted.endswith("(request 42)")


def test_a_key_at_any_offset_of_a_longer_base64_text_is_redacted(tmp_path: Path) -> None:
    for prefix in range(7):
        for suffix in range(4):
            blob = base64.b64encode(b"p" * prefix + OPENAI_KEY.encode() + b"s" * suffix)
            text = f"Authorization-ish blob {blob.decode()} end"
            assert _leaks_in(tmp_path, redact_text(text, KEYS), OPENAI_KEY) == []


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Authorization: Bearer x", "Authorization: Bearer "),
        ("authorization: Basic dXNlcjpwYXNz", "authorization: Basic "),
        ("Proxy-Authorization: weird-scheme-value", "Proxy-Authorization: "),
        ('{"Authorization": "Token abc"}', '{"Authorization": "Token '),
        ("{'x-api-key': 'k'}", "{'x-api-key': '"),
        ("X-Api-Key: 123", "X-Api-Key: "),
        ("https://host/v1?api_key=short&x=1", "https://host/v1?api_key="),
        ("&quot;x-api-key&quot;: &quot;v&quot;", "&quot;x-api-key&quot;: &quot;"),
        ("<td>x-api-key: abc</td>", "<td>x-api-key: "),
    ],
)
def test_credential_headers_lose_any_value(text: str, kept: str) -> None:
    redacted = redact_text(text, secrets=())
    assert redacted.startswith(kept + MARK)
    assert redact_text(redacted, secrets=()) == redacted, "redacting twice changes nothing"


def test_prose_and_short_or_unknown_values_are_left_alone() -> None:
    prose = "The Authorization header was missing; use an API key. Poll in a loop (sleep 1)."
    assert redact_text(prose, KEYS) == prose
    assert redact_text("key=abc is short", secrets=("abc",)) == "key=abc is short"
    short = OPENAI_KEY[:7]  # shorter than a fragment: no key can be rebuilt from it
    assert redact_text(f"x {short} y", KEYS) == f"x {short} y"


def test_any_piece_of_eight_characters_of_a_long_key_is_redacted() -> None:
    """The key echoed in pieces (``sk-... + ...``) leaves no usable part behind."""
    key = OPENAI_KEY
    assert redact_text(key[:20], KEYS) == MARK
    split = f"your key: {key[:12]} + {key[12:]} (check it)"
    said = redact_text(split, KEYS)
    assert said == f"your key: {MARK} + {MARK} (check it)"
    for start in range(len(key) - 8 + 1):
        assert key[start : start + 8] not in redact_text(f"<{key[start:]}>", KEYS)
    assert redact_value({"a": f"x {key[:9]}", "b": f"{key[9:]} y"}, KEYS) == {
        "a": f"x {MARK}", "b": f"{MARK} y"}


def test_registered_variables_and_secret_suffixes_are_secrets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LOOPBACK_UNREGISTERED_NAME", "value-of-an-unregistered-name")
    monkeypatch.setenv("LOOPBACK_REGISTERED_NAME", "value-of-a-registered-name")
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "value-of-a-token-variable")
    register_secret_env("LOOPBACK_REGISTERED_NAME")
    known = secret_values()
    assert "value-of-a-registered-name" in known and "value-of-a-token-variable" in known
    assert "value-of-an-unregistered-name" not in known
    assert redact_text("got value-of-a-registered-name") == f"got {MARK}"


def test_nested_values_and_clipping_redact_before_cutting() -> None:
    value = {"rows": [("a", OPENAI_KEY)], OPENAI_KEY.upper(): 3, "n": 1.5}
    assert redact_value(value, KEYS) == {"rows": [("a", MARK)], MARK: 3, "n": 1.5}
    clean = {"rows": [("a", "no secret in here")], "n": 1.5}
    assert redact_value(clean, KEYS) is clean, "nothing to redact: nothing copied"
    split = {"a": OPENAI_KEY[:20], "b": OPENAI_KEY[20:]}
    # a key split over adjacent fields of one record is caught in the fields joined
    assert redact_value(split, KEYS) == {"a": MARK, "b": MARK}
    text = "x" * 10 + OPENAI_KEY
    assert clip(text, 20, KEYS) == "x" * 10 + MARK
    assert clip_tail(OPENAI_KEY + "tail", 8, KEYS) == "TED]tail"
    assert OPENAI_KEY[:10] not in clip(text, 20, KEYS)


@pytest.mark.parametrize("name", sorted(transformations(OPENAI_KEY)))
def test_a_record_is_redacted_as_each_of_its_texts_is(tmp_path: Path, name: str) -> None:
    """``redact_value`` (transcripts, rows) catches every form ``redact_text`` does."""
    form = transformations(OPENAI_KEY)[name]
    record = {"events": [{"kind": "user", "content": f"use {form} now", "name": ""}], "n": 2}
    redacted = redact_value(record, KEYS)
    assert redacted["events"][0]["content"] == redact_text(f"use {form} now", KEYS)
    path = tmp_path / "record.json"
    path.write_text(json.dumps(redacted), encoding="utf-8")
    assert leaks([path], OPENAI_KEY) == []


def test_whitespace_table_is_what_str_isspace_says() -> None:
    spaces = {chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()}
    assert set(WHITESPACE) == spaces
    assert not any(c.isspace() for c in ZERO_WIDTH)


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if 0x21 <= ord(c) <= 0x7E else c for c in text)


@pytest.mark.parametrize(
    "around",
    ["a" * 6000, "".join("abcdefghij klmnop\n"[i * 7 % 18] for i in range(6000))],
    ids=["repeated", "varied"],
)
def test_a_key_in_fullwidth_inside_a_long_fullwidth_text_is_redacted(around: str) -> None:
    """A long text around the key (a hostile tool output) is aligned in bounded work."""
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    text = f"{_fullwidth(around)} {_fullwidth(key)} {_fullwidth(around)}"
    shown = redact_text(text, secrets=[])
    assert _fullwidth(key)[6:] not in shown and MARK in shown
    assert shown.startswith(_fullwidth(around[:100])) and shown.endswith(_fullwidth(around[-100:]))


def test_two_keys_far_apart_are_both_redacted() -> None:
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    text = f"{_fullwidth(key)} {'plain words ' * 400} {_fullwidth(key)}"
    shown = redact_text(text, secrets=[])
    assert _fullwidth(key)[6:] not in shown and _fullwidth(key)[-12:] not in shown


def test_plain_letters_that_a_letterlike_symbol_folds_to_leave_a_record_as_it_is() -> None:
    """``k``, ``K``, ``å`` and ``Ω`` are not compatibility forms: no copy, no folded reading."""
    record = {"kind": "ok", "cases": [{"Key": "skill kept", "note": "Ångström, Ω"}] * 50}
    assert redact_value(record, secrets=[]) is record


def test_a_key_with_a_kelvin_sign_for_its_k_is_redacted() -> None:
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    spelled = key.replace("K", "\u212a")
    shown = redact_value({"out": f"the key {spelled} was used"}, secrets=[])
    assert MARK in shown["out"] and spelled[8:] not in shown["out"]


def _page(middle: str) -> str:
    """A report-sized page: markup with character references (which send it to the folded
    reading), non-ASCII prose, ``middle`` half-way."""
    row = (
        '<tr><td class="ek-num">12.5&#8201;%</td>'
        "<td>Comparaison — caf\u00e9 &#x2192; r\u00e9sultat</td></tr>\n"
    )
    half = row * 1000
    return f"<html><body><table>{half}</table><p>{middle}</p><table>{half}</table></body></html>"


def test_a_page_of_references_and_prose_without_a_key_comes_back_unchanged() -> None:
    page = _page("nothing secret here")
    assert len(page) > 150_000
    assert redact_text(page, secrets=["hunter2-hunter2"]) == page


@pytest.mark.parametrize(
    "spell",
    [
        _fullwidth,
        lambda key: "".join(f"&#x{ord(c) + 0xFEE0:x};" for c in key),
        lambda key: "".join(f"\\u{ord(c) + 0xFEE0:04x}" for c in key),
        lambda key: key[:10] + _fullwidth(key[10:]),
    ],
    ids=["fullwidth", "fullwidth-references", "fullwidth-escapes", "half-fullwidth"],
)
def test_a_key_in_compatibility_forms_inside_a_page_is_redacted(spell: object) -> None:
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    spelled = spell(key)  # type: ignore[operator]
    page = _page(f"the key: {spelled} (from a tool output)")
    shown = redact_text(page, secrets=[])
    assert spelled not in shown and spelled[len(spelled) // 3:] not in shown
    assert MARK in shown
    assert shown.startswith(page[:2000]) and shown.endswith(page[-2000:])


@pytest.mark.parametrize("escapes", [1, 2], ids=["escaped-once", "escaped-twice"])
def test_fullwidth_references_html_escaped_on_a_page_are_redacted(escapes: int) -> None:
    """A model writes a secret as ``&#xff51;...``; the page escapes that text to
    ``&amp;#xff51;...``, which a reader (or ``html.unescape``) decodes back to the secret."""
    import html

    secret = "q7-Zr9tLw2Xv8Kp4Hs6Nd3Fb5Jm1Yc0Ge"
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    for value, secrets in ((secret, [secret]), (key, [])):
        spelled = "".join(f"&#x{ord(c) + 0xFEE0:x};" for c in value)
        for _ in range(escapes):
            spelled = html.escape(spelled)
        page = _page(f"the answer: {spelled} (from a tool output)")
        shown = redact_text(page, secrets=secrets)
        assert MARK in shown
        assert spelled[len(spelled) // 3 :] not in shown
        readable = html.unescape(html.unescape(shown))
        folded = unicodedata.normalize("NFKC", html.unescape(readable))
        assert value[8:] not in folded, "decoding the page gives no tail of it back"
        assert shown.startswith(page[:2000]) and shown.endswith(page[-2000:])


def test_every_character_whose_nfkc_form_is_ascii_sends_a_text_to_the_folded_reading() -> None:
    """Raw, as a ``\\u``/``\\U`` escape, a hex or decimal reference (HTML-escaped or not)."""
    from evalkit._redact import _has_compatibility_form

    missing = []
    for code in range(0x80, 0x110000):
        form = unicodedata.normalize("NFKC", chr(code))
        if not (form.isascii() and any(c.isalnum() for c in form)):
            continue
        escape = f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
        spellings = (chr(code), escape, f"&#x{code:x};", f"&#{code};", f"&amp;#x{code:X};")
        missing += [(hex(code), s) for s in spellings if not _has_compatibility_form(s)]
    assert not missing, missing[:20]


@pytest.mark.parametrize(
    ("swap", "spell"),
    [
        ({"I": "\u2160"}, lambda t: t),  # Roman numeral one for I
        ({"I": "\u2160"}, lambda t: "".join(f"\\u{ord(c):04x}" if ord(c) > 127 else c for c in t)),
        ({"I": "\u2160"}, lambda t: "".join(f"&#x{ord(c):x};" if ord(c) > 127 else c for c in t)),
        ({"fi": "\ufb01"}, lambda t: t),  # the fi ligature
        ({"s": "\u017f"}, lambda t: t),  # the long s
    ],
    ids=["roman", "roman-escaped", "roman-references", "ligature", "long-s"],
)
def test_a_secret_with_look_alikes_outside_the_alphanumeric_blocks_is_redacted(
    swap: dict[str, str], spell: object
) -> None:
    secret = "fiQ7sZr9IwIXv8Kp4Hs6Nd3Fb5Jm1YfiGe"
    key = "sk-proj-" + "A1b2C3d4E5fiG7h8I9j0K1l2M3n4O5p6Q7r8I"
    for value, secrets in ((secret, [secret]), (key, [])):
        spelled = value
        for plain, alike in swap.items():
            spelled = spelled.replace(plain, alike)
        assert spelled != value
        spelled = spell(spelled)  # type: ignore[operator]
        shown = redact_text(f"the tool printed {spelled} and stopped", secrets=secrets)
        assert MARK in shown and spelled[len(spelled) // 3 :] not in shown, shown


@pytest.mark.parametrize(
    "name",
    ["x-api-key", "X-Goog-Api-Key", "api_key", "API-KEY", "apikey", "Api\u212aey",
     "access_token", "ACCESS-TOKEN", "accesstoken", "acce\u017f\u017f_token"],
)
def test_every_spelling_of_the_key_headers_is_redacted_whatever_the_case(name: str) -> None:
    """The header pattern's trigger words are its own spellings: each one still redacts."""
    value = "v4lue-Of-The-Header-77"
    for text in (f"{name}: {value}", f'{{"{name}": "{value}"}}', f"?{name}={value}&x=1"):
        shown = redact_text(text, secrets=[])
        assert value not in shown and MARK in shown, (text, shown)


def test_a_notebook_with_an_image_and_no_secret_is_returned_as_it_is() -> None:
    """Base64 image data holds "api" by chance; it is no reason to read it string by string."""
    import random

    payload = base64.b64encode(random.Random(2).randbytes(600_000)).decode()
    assert "api" in payload.casefold()
    output = {"data": {"image/png": payload, "text/html": "<p>ok</p>"}}
    notebook = {"cells": [{"outputs": [output]}]}
    assert redact_value(notebook, secrets=[]) is notebook
