"""A deterministic description optimizer for ``evalkit optimize --target description``.

Run as ``--optimizer "command:python3 /abs/path/scripts/describe_from_misses.py"``. It reads the
mis-routed train cases in ``failures/``, collects the words (4+ letters) of the prompts that
should have loaded the skill but did not, and writes ``Use for WORD, WORD, ... . `` in front of
the current description in ``DESCRIPTION.txt`` (at most 1024 characters). With no missed
should-trigger prompt it leaves the description unchanged. A baseline to beat, not a good
optimizer: it learns the train prompts' vocabulary, including words that other tasks share.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

WORD = re.compile(r"[a-z][a-z0-9-]{3,}")
LIMIT = 1024


def missed_words(failures: Path) -> list[str]:
    """Words of the should-trigger prompts in ``failures/``, in first-seen order."""
    words: list[str] = []
    for path in sorted(failures.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        if "- should trigger: yes" not in text:
            continue
        prompt = text.split("## Prompt\n", 1)[-1]
        for word in WORD.findall(prompt.lower()):
            if word not in words:
                words.append(word)
    return words


def main() -> None:
    """Rewrite ``DESCRIPTION.txt`` in the current workspace."""
    target = Path(os.environ.get("EVALKIT_DESCRIPTION_PATH", "DESCRIPTION.txt"))
    current = target.read_text(encoding="utf-8").strip()
    words = missed_words(Path(os.environ.get("EVALKIT_FAILURES_DIR", "failures")))
    if words:
        target.write_text(f"Use for {', '.join(words)}. {current}"[:LIMIT] + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
