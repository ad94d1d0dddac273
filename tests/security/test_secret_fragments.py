"""The documented gaps of round two: keys split over fields, hidden by format characters,
dashes, spaces, HTML character references or ``\\u`` escapes never reach a file.

A real HTTP server on 127.0.0.1 reads the key from each request's ``Authorization`` header and
sends it back in each of those forms: in a 401 body whose two adjacent JSON fields hold the two
halves (``{"key": "Zq7TESTKE", "rest": "Y123456789wxyz"}``, which stops its run), in 400
bodies, and in successful answers (which are cached). Then ``evalkit report`` and ``evalkit
export`` run. Everything written (runs, manifests, events, items.log, parquet, transcripts, the
cache, the report page and notebook, the export, the commands' stderr) is searched for the key,
for each of its fragments of 8 or more characters, and for both in every decoded view
(escapes and character references decoded; whitespace, format characters and dashes removed).
"""

from __future__ import annotations

import html
import json
import os
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tests.conftest import CliResult, evalkit_process
from tests.providers.loopback_server import LoopbackModelServer, Recorded, Reply, Status, Text
from tests.security.leak_probes import texts_of

ROOT = Path(__file__).resolve().parents[2]
KEY = "Zq7TESTKEY123456789wxyz"
SCENARIO = re.compile(r"scenario ([\w-]+) ([\w-]+)")
PLANES = [*range(0x20000), *range(0xE0000, 0xE1000)]  # the planes holding Cf and Pd characters
FORMAT_CHARS = [chr(c) for c in PLANES if unicodedata.category(chr(c)) == "Cf"]


def forms(key: str) -> dict[str, str]:
    """The forms round two let through, by name."""
    out = {
        "soft-hyphen": "\u00ad".join(key),
        "word-joiner-and-bidi": "".join(c + "\u2061\u202e" for c in key),
        "tag-characters": "\U000e0041".join(key),
        "dashes": "-".join(key),
        "em-dashes": "\u2014".join(key),
        "spaces": " ".join(key),
        "dash-spaced": " - ".join(key),
        "html-decimal": "".join(f"&#{ord(c)};" for c in key),
        "html-hex": "".join(f"&#x{ord(c):X};" for c in key),
        "html-mixed": "".join(f"&#x{ord(c):x};" if i % 2 else c for i, c in enumerate(key)),
        "html-shy": "&shy;".join(key),
        "u-escapes": "".join(f"\\u{ord(c):04x}" for c in key),
        "u-escapes-mixed": "".join(f"\\u{ord(c):04X}" if i % 3 else c for i, c in enumerate(key)),
        "u-escaped-soft-hyphen": "\\u00ad".join(key),
    }
    # every format character of Unicode (category Cf), a few of them per form
    for start in range(0, len(FORMAT_CHARS), 24):
        chars = FORMAT_CHARS[start : start + 24]
        out[f"cf-{start}"] = "".join(c + chars[i % len(chars)] for i, c in enumerate(key))
    return out


def _user_text(request: Recorded) -> str:
    body = request.body if isinstance(request.body, dict) else {}
    return json.dumps(body.get("messages") or body.get("input") or "")


def hostile(request: Recorded) -> Reply:
    found = SCENARIO.search(_user_text(request))
    if found is None:
        return Text("no scenario")
    kind, name = found.groups()
    key = request.headers.get("authorization", "").removeprefix("Bearer ")
    half = 9
    if kind == "split-401":
        return Status(401, json.dumps({"key": key[:half], "rest": key[half:]}))
    if kind == "split-400":
        return Status(400, json.dumps({"error": {"key": key[:half], "rest": key[half:]}}))
    if kind == "split-answer":
        return Text(f"The answer is 5050. {json.dumps({'a': key[:12], 'b': key[12:]})}")
    leaked = forms(key)[name]
    if kind == "status-400":
        return Status(400, json.dumps({"error": {"message": f"bad key {leaked} here"}}))
    return Text(f"The answer is 5050. Your key: {leaked}")


def _scenarios() -> list[tuple[str, str]]:
    names = list(forms(KEY))
    return [(k, n) for k in ("status-400", "answer") for n in names] + [
        ("split-400", "halves"),
        ("split-answer", "halves"),
    ]


def _write_suite(root: Path, scenarios: list[tuple[str, str]]) -> Path:
    cases = [
        {"id": f"{kind}-{name}".lower(), "prompt": f"scenario {kind} {name}",
         "expected_patterns": ["5050"]}
        for kind, name in scenarios
    ]  # fmt: skip
    (root / "cases").mkdir(parents=True)
    suite = {"name": "fragments", "description": "A hostile server echoes the key.",
             "defaults": {"trials": 1, "conditions": ["none"]}}  # fmt: skip
    (root / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    (root / "cases" / "c.yaml").write_text(yaml.safe_dump({"cases": cases}, sort_keys=False))
    return root


_ESCAPE = re.compile(r"\\+u([0-9a-fA-F]{4})|\\+x([0-9a-fA-F]{2})")
_HIDING = {ord(c): None for c in FORMAT_CHARS}
_HIDING |= {c: None for c in PLANES if unicodedata.category(chr(c)) == "Pd"}
_HIDING |= {ord(c): None for c in " \t\n\r\x0b\x0c\xa0"}


def _views(text: str) -> Iterator[str]:
    unescaped = _ESCAPE.sub(lambda m: chr(int(m.group(1) or m.group(2), 16)), text)
    for view in {text, unescaped, html.unescape(text), html.unescape(unescaped)}:
        yield view
        yield view.translate(_HIDING)


def fragments(key: str, size: int = 8) -> set[str]:
    """Every substring of ``key`` of ``size`` characters (longer ones contain one)."""
    return {key[i : i + size] for i in range(len(key) - size + 1)}


def found_in(files: list[Path], key: str) -> list[str]:
    wanted = fragments(key)
    hits = []
    for path in files:
        for text in texts_of(path):
            for view in _views(text):
                hits += [f"{path}: {part!r}" for part in wanted if part in view]
    return sorted(set(hits))


def _evalkit(*args: str, env: dict[str, str], cwd: Path) -> CliResult:
    """``evalkit ARGS`` in a child whose whole environment is ``env`` (what reaches it)."""
    return evalkit_process(*args, env=env, cwd=cwd, inherit_env=False, timeout=900)


@pytest.fixture
def server() -> Iterator[LoopbackModelServer]:
    loopback = LoopbackModelServer(script=hostile).start()
    try:
        yield loopback
    finally:
        loopback.stop()


def test_the_probe_finds_every_form_it_sends() -> None:
    """The search itself is not blind: each form of the key, unredacted, is found."""
    for name, form in forms(KEY).items():
        assert any(part in view for view in _views(form) for part in fragments(KEY)), name
    halves = json.dumps({"key": KEY[:9], "rest": KEY[9:]})
    assert any(part in view for view in _views(halves) for part in fragments(KEY))


@pytest.mark.slow
def test_split_hidden_and_encoded_keys_reach_no_file(
    tmp_path: Path, server: LoopbackModelServer
) -> None:
    suite = _write_suite(tmp_path / "suite", _scenarios())
    refused = _write_suite(tmp_path / "refused", [("split-401", "halves")])
    runs = tmp_path / "runs"
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN"))}
    env |= {"OPENAI_API_KEY": KEY}
    options = ["--provider", "openai_compat", "--provider-opt", f"base_url={server.base_url}/v1",
               "--model", "loopback-1", "--runs-dir", str(runs), "--backend", "threading",
               "--concurrency", "4", "--retries", "0", "--no-progress"]  # fmt: skip
    stopped = _evalkit("run", str(refused), *options, "--run-id", "refused", env=env, cwd=tmp_path)
    assert stopped.returncode == 2, stopped.stderr
    assert "refused the credentials" in stopped.stderr and "[REDACTED]" in stopped.stderr
    done = _evalkit("run", str(suite), *options, "--run-id", "forms", "-v", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = tmp_path / "out" / "forms.html"
    shown = _evalkit("report", "forms", "--runs-dir", str(runs), "-o", str(report),
                     env=env, cwd=tmp_path)  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    exported = tmp_path / "out" / "benchmark.json"
    export = _evalkit("export", "forms", "--format", "skill-creator", "-o", str(exported),
                      "--runs-dir", str(runs), env=env, cwd=tmp_path)  # fmt: skip
    stderr = tmp_path / "out" / "stderr.txt"
    stderr.write_text(stopped.stderr + done.stderr + shown.stderr + export.stderr)

    # the attacks happened: every request carried the key, and every answer was recorded
    assert {r.headers.get("authorization") for r in server.model_requests()} == {f"Bearer {KEY}"}
    rows = pd.read_parquet(runs / "forms" / "results.parquet").set_index("case_id")
    assert len(rows) == len(_scenarios())
    assert rows.loc[rows.index.str.startswith("answer"), "status"].eq("ok").all()
    assert rows.loc[rows.index.str.startswith("status-400"), "error_message"].str.contains(
        r"\[REDACTED\]"
    ).all()
    assert list((runs / ".cache").rglob("*.json")), "the answers were cached"

    files = [p for p in runs.rglob("*") if p.is_file()]
    files += [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert report in files and report.with_suffix(".ipynb") in files and stderr in files
    assert found_in(files, KEY) == []
