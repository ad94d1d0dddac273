"""claude_code and codex on an evidence case: the real CLI writes the bundle through a real
tool call, and the runner collects it from the workspace into the run directory (sizes
bounded, symlinks not followed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalkit.results import read_evidence
from tests.providers.agent_harness import agent_binary, run_items, steps
from tests.providers.loopback_server import LoopbackModelServer
from tests.providers.test_cli_agents import FLAVOURS, Flavour, _options

PROOF_COMMAND = (
    "wc -l < data.txt | tr -d ' ' > report.txt && mkdir -p proof"
    " && printf '# Line count\\n\\n## Steps\\nwc -l < data.txt gave 3 lines\\n' > proof/notes.md"
    " && head -c 5000 /dev/zero | tr '\\0' a > proof/big.log"
    " && ln -s /etc/passwd proof/link.md"
)


@pytest.fixture(params=FLAVOURS, ids=lambda f: f.provider)
def flavour(request: pytest.FixtureRequest) -> Flavour:
    value: Flavour = request.param
    return value


@pytest.fixture
def options(
    flavour: Flavour, loopback: LoopbackModelServer, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> dict[str, Any]:
    binary = agent_binary(flavour.binary, flavour.binary_env)
    return _options(flavour, binary, loopback.base_url, tmp_path, monkeypatch)


def _add_evidence_case(suite: Path) -> None:
    case = {
        "id": "report-with-proof",
        "lane": "evidence",
        "expected_skill": "waiting",
        "fixture": "fixtures/make-report",
        "prompt": "Count the lines of data.txt into report.txt and leave notes under proof/.",
        "verifier": [{"kind": "file_matches", "path": "report.txt", "pattern": "^3$"}],
        "artifacts_required": [
            {"path": "proof/notes.md", "sections": ["Steps"]},
            {"path": "proof/big.log", "max_bytes": 1000},
            "proof/link.md",
        ],
    }
    (suite / "cases" / "evidence.yaml").write_text(yaml.safe_dump([case], sort_keys=False))


def test_cli_agent_bundle_is_collected_bounded_without_symlinks(
    flavour: Flavour, tiny_suite: Path, runs_dir: Path, loopback: LoopbackModelServer,
    options: dict[str, Any],
) -> None:
    _add_evidence_case(tiny_suite)
    loopback.script = steps(flavour.shell(PROOF_COMMAND), final="Counted 3 lines; notes in proof/.")
    rows, _ = run_items(tiny_suite, runs_dir, flavour.provider, options,
                        cases=("report-with-proof",))
    row = rows.iloc[0]
    assert row.status == "ok"
    assert not row.passed  # the task succeeded, but two artifacts are invalid: no pass
    record = read_evidence(runs_dir / row.run_id, row.item_key)
    assert record is not None
    status = {r["path"]: (r["status"], r["reason"]) for r in record["requirements"]}
    assert status["proof/notes.md"][0] == "validated"
    assert status["proof/big.log"] == ("invalid", "proof/big.log: oversized: 5000 bytes, above "
                                       "the limit 1000")
    assert "symlink" in status["proof/link.md"][1]
    files = Path(record["files_dir"])
    assert (files / "proof" / "notes.md").read_text().startswith("# Line count")
    assert not (files / "proof" / "big.log").exists()  # over its max_bytes: not copied
    assert not (files / "proof" / "link.md").exists()  # a symlink: never followed
    passwd_line = Path("/etc/passwd").read_text().splitlines()[0]
    stored = "".join(p.read_text(errors="replace") for p in files.rglob("*") if p.is_file())
    assert passwd_line not in stored and passwd_line not in json.dumps(record)
