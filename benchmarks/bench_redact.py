"""Redaction cost: ``evalkit._redact.redact_text`` on texts of 1 MB, and on a typical outcome.

Usage: python benchmarks/bench_redact.py [--repeat 5] [--secrets 3]

Every outcome, cache entry, recording and report page passes the redactor, so its cost per
megabyte matters. Texts: English-like prose with no secret (the common case: only the
substring pre-check runs), 1 MB of base64 (report pages carry images), and prose holding the
key in all 31 transformations of the security tests every 30 KB (the full pattern runs). The
baseline is the redactor before transformations were handled: literal ``str.replace`` of each
secret plus the same header and key-shape patterns, each run on every text.
"""

from __future__ import annotations

import argparse
import base64
import random
import re
import statistics
import string
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evalkit._redact import MARK, redact_text, redact_value  # noqa: E402
from tests.security.leak_probes import transformations  # noqa: E402

_BASELINE_PATTERNS = (
    re.compile(r"(?i)(\bauthorization\s*[:=]\s*[\"']?(?:bearer|basic|token)\s+)[^\s\"',;]+"),
    re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}"),
    re.compile(r"(?i)(\b(?:x-api-key|api[_-]?key|access[_-]?token)[\"']?\s*[:=]\s*[\"']?)"
               r"[A-Za-z0-9._~+/=-]{8,}"),
    re.compile(r"()\bsk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}"),
    re.compile(r"()\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"()\bgh[pousr]_[A-Za-z0-9]{30,}\b"),
    re.compile(r"()\bxox[abprs]-[A-Za-z0-9-]{10,}"),
)


def baseline(text: str, secrets: tuple[str, ...]) -> str:
    """The previous redactor: literal secrets and the fixed patterns."""
    for value in secrets:
        if value in text:
            text = text.replace(value, MARK)
    for pattern in _BASELINE_PATTERNS:
        text = pattern.sub(lambda m: m.group(1) + MARK, text)
    return text


def _prose(rng: random.Random, size: int) -> str:
    words = ["the", "agent", "polled", "server", "loop", "timeout", "deadline", "exit", "0",
             "grep", "status", "ok", "wait", "file", "done.txt", "\n"]
    out, length = [], 0
    while length < size:
        word = rng.choice(words)
        out.append(word)
        length += len(word) + 1
    return " ".join(out)[:size]


def _time(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--secrets", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(7)
    alphabet = string.ascii_letters + string.digits + "-_~"
    secrets = tuple("".join(rng.choice(alphabet) for _ in range(40)) for _ in range(args.secrets))
    size = 1_000_000
    prose = _prose(rng, size)
    blob = base64.b64encode(rng.randbytes(size * 3 // 4)).decode()
    forms = list(transformations(secrets[0]).values())
    chunks = [_prose(rng, 30_000) + " " + forms[i % len(forms)] for i in range(size // 30_000)]
    leaky = " ".join(chunks)
    assert secrets[0] not in redact_text(leaky, secrets)
    response = {
        "events": [{"kind": "tool_result", "content": _prose(rng, 2_000), "name": "bash"}
                   for _ in range(50)],
        "extra": {"stop_reason": "final_answer", "turns": 25},
    }
    redact_text("warm up the cached patterns", secrets)
    print(f"{args.secrets} known secrets; median of {args.repeat}\n")
    print("| text | evalkit s | baseline s |")
    print("|---|---:|---:|")
    for name, text in (("1 MB prose, no secret", prose), ("1 MB base64", blob),
                       (f"1 MB prose, a transformed key every 30 KB ({len(chunks)})", leaky)):
        ours = _time(lambda t=text: redact_text(t, secrets), args.repeat)
        old = _time(lambda t=text: baseline(t, secrets), args.repeat)
        print(f"| {name} | {ours:.3f} | {old:.3f} |")
    ours = _time(lambda: redact_value(response, secrets), args.repeat * 20)
    old = _time(
        lambda: [baseline(e["content"], secrets) for e in response["events"]], args.repeat * 20
    )
    print(f"| outcome: 50 events of 2 KB (100 KB) | {ours:.4f} | {old:.4f} |")


if __name__ == "__main__":
    main()
