"""Split assignment for optimisation: train (dev), validation (holdout), sealed test."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from evalkit._settings import SEED
from evalkit._untrusted import read_json
from evalkit.cases import Suite, stable_hash
from evalkit.errors import ConfigError

#: Roles of the three splits in an optimisation run.
ROLES = {"dev": "train", "holdout": "validation", "test": "test"}


@dataclass(frozen=True)
class Splits:
    """Which case belongs to which split, and the hash that commits the assignment.

    Attributes:
        assignment: ``case_id -> dev | holdout | test``.
        source: ``suite`` (the cases' own ``split`` fields) or ``derived:<seed>``.
    """

    assignment: dict[str, str]
    source: str

    def cases(self, split: str) -> tuple[str, ...]:
        """Case ids of one split, sorted."""
        return tuple(sorted(c for c, s in self.assignment.items() if s == split))

    @property
    def digest(self) -> str:
        """SHA-256 of the canonical JSON of the assignment."""
        text = json.dumps(self.assignment, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def write(self, path: Path) -> str:
        """Write ``splits.json`` and return its digest."""
        payload = {"source": self.source, "assignment": self.assignment, "sha256": self.digest}
        path.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        return self.digest

    @classmethod
    def read(cls, path: Path) -> Splits:
        """Read ``splits.json`` written by :meth:`write`."""
        data = read_json(path)
        return cls(assignment=dict(data["assignment"]), source=str(data["source"]))


def assign_splits(
    suite: Suite,
    case_ids: tuple[str, ...],
    *,
    derive: tuple[float, float, float] | None = None,
    seed: int = SEED.default,
) -> Splits:
    """Assign every case to a split.

    Args:
        suite: The suite.
        case_ids: The cases taking part.
        derive: Shares ``(dev, holdout, test)``; when given, splits are derived
            deterministically from a hash of ``(seed, case_id)`` instead of the case files.
        seed: Seed of the derived assignment.

    Returns:
        The assignment.

    Raises:
        ConfigError: A split ends up empty (each of the three is needed).
    """
    if derive is None:
        assignment: dict[str, str] = {cid: str(suite.case(cid).split) for cid in case_ids}
        source = "suite"
    else:
        if len(derive) != 3 or any(s < 0 for s in derive) or sum(derive) <= 0:
            raise ConfigError("--derive-splits expects three non-negative shares, e.g. 0.6,0.2,0.2")
        total = sum(derive)
        cut_dev = derive[0] / total
        cut_holdout = cut_dev + derive[1] / total
        assignment = {}
        for cid in case_ids:
            u = int(stable_hash([seed, cid]), 16) / 16**16
            assignment[cid] = "dev" if u < cut_dev else "holdout" if u < cut_holdout else "test"
        source = f"derived:{seed}"
    splits = Splits(assignment=assignment, source=source)
    for split in ("dev", "holdout", "test"):
        if not splits.cases(split):
            raise ConfigError(
                f"the '{split}' split ({ROLES[split]}) has no case; optimisation needs all three "
                "(set `split:` on cases or pass --derive-splits 0.6,0.2,0.2)"
            )
    return splits
