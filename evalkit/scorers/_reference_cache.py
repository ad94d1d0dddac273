"""Reference checks that passed, remembered by the content address of all they depend on.

``evalkit cases validate`` runs each execution case's setup, verifier and solution commands
in the sandbox; a case whose commands sleep or wait (a timeout test, a polling script) costs
seconds every time. A check that passed is stored under
``<runs_dir>/.cache/references/<hh>/<key>.json``; the key (:func:`reference_check_key`) is
the hash of the whole case (every field, expectations included), its fixture tree, the
suite's pass threshold and anti-patterns, the scorer and evalkit versions and the sandbox
settings (:func:`evalkit.sandbox.sandbox_fingerprint`). Change any of them and the check runs
again. Failures are never stored (a fix is expected, and a check that failed by a timeout on
a busy machine must be retried), nor are checks run without the sandbox (they see the whole
machine, which no key can describe).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from evalkit._keyed import keyed_path, write_keyed_json
from evalkit._untrusted import read_json
from evalkit._version import __version__
from evalkit.cases import Case, Suite, directory_hash, stable_hash
from evalkit.sandbox import sandbox_fingerprint
from evalkit.scorers._evidence import EVIDENCE_SCORER_VERSION
from evalkit.scorers._score import SCORER_VERSION

#: Where passed reference checks live under the runs directory.
REFERENCE_CACHE_DIR = Path(".cache") / "references"

#: Layout of an entry and of what its key covers; entries of another version are misses.
ENTRY_VERSION = 1


def reference_check_key(suite: Suite, case: Case) -> str | None:
    """The content address of one case's reference check, or None when it is not cacheable.

    Args:
        suite: The suite (fixtures, pass threshold, suite-wide anti-patterns).
        case: The case.

    Returns:
        A hex key, or None when the sandbox is off (an unsandboxed check is never cached).
    """
    sandbox = sandbox_fingerprint()
    if not sandbox["sandboxed"]:
        return None
    content: dict[str, Any] = {
        "version": ENTRY_VERSION,
        "evalkit": __version__,
        "scorer": SCORER_VERSION,
        "case": case.model_dump(mode="json"),
        "fixture": directory_hash(suite.root / case.fixture) if case.fixture else None,
        "pass_threshold": suite.spec.defaults.pass_threshold,
        "anti_patterns": [r.model_dump(mode="json") for r in suite.spec.anti_patterns],
        "sandbox": sandbox,
    }
    if case.lane == "evidence":  # evidence items' hashes carry it too (other keys unchanged)
        content["evidence_scorer"] = EVIDENCE_SCORER_VERSION
    return stable_hash(content)


class ReferenceCache:
    """Passed reference checks by key, one small JSON file each, written by atomic rename.

    Safe to share between threads; :attr:`hits` counts the checks it answered.

    Args:
        root: The cache directory (``<runs_dir>/.cache/references``).
        lookups: False answers no look-up but still stores passes (``--no-cache``: every
            check runs, and what passes is remembered afresh).
    """

    def __init__(self, root: Path, *, lookups: bool = True) -> None:
        self.root = root
        self.lookups = lookups
        self.hits = 0
        self._lock = threading.Lock()

    def _path(self, key: str) -> Path:
        return keyed_path(self.root, key)

    def passed(self, key: str) -> bool:
        """Whether a check with this key passed before (the entry must name its own key)."""
        if not self.lookups:
            return False
        try:
            data = read_json(self._path(key))
        except (OSError, ValueError):
            return False
        hit = (
            isinstance(data, dict)
            and data.get("version") == ENTRY_VERSION
            and data.get("key") == key
            and data.get("passed") is True
        )
        if hit:
            with self._lock:
                self.hits += 1
        return hit

    def record_pass(self, key: str, case_id: str, seconds: float) -> None:
        """Store that the check with this key passed (best effort: a read-only disk is no error).

        Args:
            key: The check's key.
            case_id: The case (for people reading the file).
            seconds: How long the check took.
        """
        entry = {
            "version": ENTRY_VERSION,
            "key": key,
            "case_id": case_id,
            "passed": True,
            "seconds": round(seconds, 3),
        }
        try:
            write_keyed_json(self._path(key), entry)
        except OSError:
            return
