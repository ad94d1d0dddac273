"""Evidence artifacts: every validator on good and bad files (empty, truncated, wrong kind,
symlink, oversized), the bundle manifest against the files, and the evidence gates."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from PIL import Image

from evalkit.cases import ArtifactRequirement, BundleSpec, Case
from evalkit.providers import AgentResponse, Event
from evalkit.scorers import score_item
from evalkit.scorers._artifacts import check_requirement
from evalkit.scorers._bundle import check_bundle

CAST = (
    '{"version": 2, "width": 80, "height": 24}\n'
    '[0.1, "o", "$ pytest -x\\r\\n"]\n'
    '[1.5, "o", "1 failed\\r\\n"]\n'
)


def png(path: Path, size: tuple[int, int] = (64, 48)) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, (200, 30, 30)).save(path, format="PNG")
    return path


def write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return path


def check(ws: Path, **req: object):  # type: ignore[no-untyped-def]
    return check_requirement(ws, ArtifactRequirement.model_validate(req))


# -- image ------------------------------------------------------------------------------------


def test_image_good(tmp_path: Path) -> None:
    png(tmp_path / "shot.png")
    result = check(tmp_path, path="shot.png", min_width=32, min_height=32)
    assert result.status == "validated", result.reason
    assert "64x48 PNG" in result.reason


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda p: write(p, b""), "empty"),
        (lambda p: write(p, png(p).read_bytes()[:60]), "does not decode"),  # truncated
        (lambda p: write(p, "# notes, not a picture\n"), "does not decode"),  # wrong kind
        (lambda p: png(p, (8, 8)), "smaller than the minimum"),
    ],
    ids=["empty", "truncated", "wrong-kind", "too-small"],
)
def test_image_bad(tmp_path: Path, make, reason: str) -> None:  # type: ignore[no-untyped-def]
    make(tmp_path / "shot.png")
    result = check(tmp_path, path="shot.png", min_width=32, min_height=32)
    assert result.status == "invalid"
    assert reason in result.reason


def test_missing_is_missing_not_invalid(tmp_path: Path) -> None:
    result = check(tmp_path, path="shot.png")
    assert (result.status, result.reason) == ("missing", "missing")


def test_symlink_is_not_followed(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = png(tmp_path / "elsewhere.png")
    (ws / "shot.png").symlink_to(outside)
    result = check(ws, path="shot.png")
    assert result.status == "invalid"
    assert "symlink" in result.reason


def test_symlinked_directory_is_not_followed(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    png(tmp_path / "secret" / "shot.png")
    (ws / "proof").symlink_to(tmp_path / "secret", target_is_directory=True)
    assert "symlink" in check(ws, path="proof/shot.png").reason
    # a glob through the link finds the file but refuses it
    globbed = check(ws, path="proof/*.png")
    assert globbed.status == "invalid" and "symlink" in globbed.reason


def test_oversized_is_refused_unread(tmp_path: Path) -> None:
    png(tmp_path / "shot.png", (400, 400))
    size = (tmp_path / "shot.png").stat().st_size
    result = check(tmp_path, path="shot.png", max_bytes=size - 1)
    assert result.status == "invalid"
    assert f"oversized: {size} bytes" in result.reason


# -- json -------------------------------------------------------------------------------------

SCHEMA = {
    "type": "object",
    "required": ["exit_code", "flake_rate"],
    "properties": {"exit_code": {"type": "integer"}, "flake_rate": {"type": "number"}},
}


def test_json_good_with_schema(tmp_path: Path) -> None:
    write(tmp_path / "r.json", json.dumps({"exit_code": 1, "flake_rate": 0.3}))
    assert check(tmp_path, path="r.json", json_schema=SCHEMA).status == "validated"


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ("", "empty"),
        ('{"exit_code": 1, "flake', "not JSON"),  # truncated
        ("exit_code=1\n", "not JSON"),  # wrong kind
        ('{"exit_code": "one", "flake_rate": 0.3}', "fails its JSON Schema at /exit_code"),
        ('{"exit_code": 1}', "'flake_rate' is a required property"),
    ],
    ids=["empty", "truncated", "wrong-kind", "wrong-type", "missing-key"],
)
def test_json_bad(tmp_path: Path, data: str, reason: str) -> None:
    write(tmp_path / "r.json", data)
    result = check(tmp_path, path="r.json", json_schema=SCHEMA)
    assert result.status == "invalid"
    assert reason in result.reason


def test_bad_json_schema_is_a_load_error() -> None:
    with pytest.raises(ValueError, match="not a valid JSON Schema"):
        ArtifactRequirement(path="r.json", json_schema={"type": "no-such-type"})


# -- text / markdown --------------------------------------------------------------------------

NOTES = """# Flaky test: test_upload

## Steps to reproduce
Run `pytest -p no:randomly tests/test_upload.py` 20 times.

## Observed
Fails 6 of 20 runs: a race between the uploader thread and the assertion.

## Classification
Label: race-condition
"""


def notes_requirement(**kw: object) -> dict[str, object]:
    return {
        "path": "notes.md",
        "sections": ["Steps to reproduce", "Observed", "Classification"],
        "issue_labels": ["race-condition", "order-dependence", "time-dependence"],
        **kw,
    }


def test_markdown_good(tmp_path: Path) -> None:
    write(tmp_path / "notes.md", NOTES)
    result = check(tmp_path, **notes_requirement(patterns=[r"\d+ of \d+ runs"]))
    assert result.status == "validated", result.reason
    assert result.sections_found == 3
    assert result.labels_used == ("race-condition",)


def test_markdown_missing_section_counts_what_is_there(tmp_path: Path) -> None:
    write(tmp_path / "notes.md", NOTES.replace("## Observed", "Observed:"))
    result = check(tmp_path, **notes_requirement())
    assert result.status == "invalid"
    assert "missing headings: Observed" in result.reason
    assert result.sections_found == 2


def test_negated_label_does_not_count(tmp_path: Path) -> None:
    text = NOTES.replace("Label: race-condition", "This is not a race-condition.")
    write(tmp_path / "notes.md", text)
    result = check(tmp_path, **notes_requirement())
    assert result.status == "invalid"
    assert result.labels_used == ()
    assert "uses none of the issue labels" in result.reason


def test_negated_pattern_does_not_count(tmp_path: Path) -> None:
    write(tmp_path / "notes.txt", "Summary: the failure is not reproducible here.\n")
    result = check(tmp_path, path="notes.txt", patterns=[r"\breproducible\b"])
    assert result.status == "invalid" and "no affirmed match" in result.reason
    write(tmp_path / "notes.txt", "Summary: reproducible in 6 of 20 runs.\n")
    assert check(tmp_path, path="notes.txt", patterns=[r"\breproducible\b"]).status == "validated"


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "empty"),
        (b"   \n\n\t\n", "blank"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary data"),
        (b"caf\xe9 notes\n", "not UTF-8"),
    ],
    ids=["empty", "blank", "wrong-kind", "not-utf8"],
)
def test_text_bad(tmp_path: Path, data: bytes, reason: str) -> None:
    write(tmp_path / "notes.txt", data)
    result = check(tmp_path, path="notes.txt")
    assert result.status == "invalid" and reason in result.reason


def test_text_sections_are_line_prefixes(tmp_path: Path) -> None:
    write(tmp_path / "notes.txt", "Steps: run it twice\nExpected: green\n")
    result = check(tmp_path, path="notes.txt", sections=["steps", "expected", "actual"])
    assert result.status == "invalid" and result.sections_found == 2


# -- cast -------------------------------------------------------------------------------------


def test_cast_good(tmp_path: Path) -> None:
    write(tmp_path / "repro.cast", CAST)
    result = check(tmp_path, path="repro.cast", min_events=2)
    assert result.status == "validated", result.reason
    assert "2 events" in result.reason


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ("", "empty"),
        (CAST[:-12], "not a JSON event (truncated"),  # truncated mid-event
        (NOTES, "not an asciinema header"),  # wrong kind
        ('{"version": 1, "width": 80, "height": 24}\n[0.1, "o", "x"]\n', "v2"),
        ('{"version": 2, "width": 80, "height": 24}\n[2.0, "o", "a"]\n[1.0, "o", "b"]\n',
         "back in time"),
        ('{"version": 2, "width": 80, "height": 24}\n', "0 events"),
    ],
    ids=["empty", "truncated", "wrong-kind", "v1", "time-order", "no-events"],
)
def test_cast_bad(tmp_path: Path, data: str, reason: str) -> None:
    write(tmp_path / "repro.cast", data)
    result = check(tmp_path, path="repro.cast")
    assert result.status == "invalid" and reason in result.reason


# -- video ------------------------------------------------------------------------------------

MP4_HEAD = b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"


def test_video_signature(tmp_path: Path) -> None:
    write(tmp_path / "run.mp4", MP4_HEAD + b"\x00" * 4096)
    assert check(tmp_path, path="run.mp4").status == "validated"
    write(tmp_path / "run.webm", b"\x1a\x45\xdf\xa3" + b"\x00" * 4096)
    assert "WebM" in check(tmp_path, path="run.webm").reason


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "empty"),
        (MP4_HEAD, "below the minimum"),  # truncated: a header and no media
        (b"GIF89a" + b"\x00" * 4096, "no video container signature"),  # wrong kind
    ],
    ids=["empty", "truncated", "wrong-kind"],
)
def test_video_bad(tmp_path: Path, data: bytes, reason: str) -> None:
    write(tmp_path / "run.mp4", data)
    result = check(tmp_path, path="run.mp4")
    assert result.status == "invalid" and reason in result.reason


# -- globs ------------------------------------------------------------------------------------


def test_glob_needs_min_count_valid_files(tmp_path: Path) -> None:
    png(tmp_path / "shots" / "a.png")
    write(tmp_path / "shots" / "b.png", b"")
    one = check(tmp_path, path="shots/*.png", min_count=1)
    two = check(tmp_path, path="shots/*.png", min_count=2)
    assert one.status == "validated"
    assert two.status == "invalid" and "1 valid file(s), 2 needed" in two.reason
    assert check(tmp_path, path="none/*.png").status == "missing"


def test_path_must_stay_in_the_workspace() -> None:
    with pytest.raises(ValueError, match="relative to the workspace"):
        ArtifactRequirement(path="../outside.png")
    with pytest.raises(ValueError, match="relative to the workspace"):
        BundleSpec(manifest="/etc/manifest.json")


# -- bundle manifest --------------------------------------------------------------------------


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def bundle_workspace(ws: Path) -> list[str]:
    png(ws / "proof" / "shot.png")
    write(ws / "proof" / "notes.md", NOTES)
    files = ["proof/shot.png", "proof/notes.md"]
    manifest = {"artifacts": [{"path": f, "sha256": sha(ws / f)} for f in files]}
    write(ws / "proof" / "manifest.json", json.dumps(manifest))
    return files


SPEC = BundleSpec(manifest="proof/manifest.json")


def test_bundle_good(tmp_path: Path) -> None:
    files = bundle_workspace(tmp_path)
    result = check_bundle(tmp_path, SPEC, files)
    assert result.passed, result.reason
    assert [e.reason for e in result.entries] == ["ok", "ok"]


def test_bundle_hash_mismatch_and_missing(tmp_path: Path) -> None:
    files = bundle_workspace(tmp_path)
    write(tmp_path / "proof" / "notes.md", NOTES + "edited after the manifest\n")
    result = check_bundle(tmp_path, SPEC, files)
    assert not result.passed
    assert {e.path: e.passed for e in result.entries} == {
        "proof/shot.png": True,
        "proof/notes.md": False,
    }
    assert "hash mismatch" in result.reason
    (tmp_path / "proof" / "shot.png").unlink()
    assert "listed but missing" in check_bundle(tmp_path, SPEC, files).reason


def test_bundle_must_list_every_required_artifact(tmp_path: Path) -> None:
    files = bundle_workspace(tmp_path)
    write(tmp_path / "repro.sh", "#!/bin/sh\npytest -x\n")
    result = check_bundle(tmp_path, SPEC, [*files, "repro.sh"])
    assert not result.passed
    assert "repro.sh: required artifact not listed" in result.reason


def test_bundle_entry_through_symlink_is_refused(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    bundle_workspace(ws)
    outside = write(tmp_path / "secret.txt", "token\n")
    (ws / "proof" / "link.txt").symlink_to(outside)
    manifest = json.loads((ws / "proof" / "manifest.json").read_text())
    manifest["artifacts"].append({"path": "proof/link.txt", "sha256": sha(outside)})
    write(ws / "proof" / "manifest.json", json.dumps(manifest))
    result = check_bundle(ws, SPEC, [])
    assert not result.passed and "symlink" in result.reason
    manifest["artifacts"][-1]["path"] = "../secret.txt"
    write(ws / "proof" / "manifest.json", json.dumps(manifest))
    assert "escapes the workspace" in check_bundle(ws, SPEC, []).reason


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ("", "not JSON"),
        ('{"artifacts": [{"path": "proof/shot.png", "sha', "not JSON"),
        ('["proof/shot.png"]', "manifest needs"),
        ('{"artifacts": []}', "lists no artifacts"),
        ('{"artifacts": [{"path": "proof/shot.png"}]}', "no 'sha256' hash"),
    ],
    ids=["empty", "truncated", "wrong-shape", "no-entries", "no-hash"],
)
def test_bundle_bad_manifest(tmp_path: Path, data: str, reason: str) -> None:
    bundle_workspace(tmp_path)
    write(tmp_path / "proof" / "manifest.json", data)
    result = check_bundle(tmp_path, SPEC, [])
    assert not result.passed and reason in result.reason


def test_manifest_symlink_is_refused(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    bundle_workspace(ws)
    os.replace(ws / "proof" / "manifest.json", tmp_path / "manifest.json")
    (ws / "proof" / "manifest.json").symlink_to(tmp_path / "manifest.json")
    assert "symlink" in check_bundle(ws, SPEC, []).reason


# -- the gates: no reward for artifacts without success ---------------------------------------


def evidence_case() -> Case:
    return Case.model_validate(
        {
            "id": "repro",
            "lane": "evidence",
            "prompt": "Reproduce the flaky test and leave a proof bundle.",
            "verifier": [{"kind": "file_exists", "path": "fixed.txt"}],
            "artifacts_required": [
                {"path": "proof/shot.png", "min_width": 32},
                notes_requirement(path="proof/notes.md"),
            ],
            "bundle": {"manifest": "proof/manifest.json"},
        }
    )


def done() -> AgentResponse:
    return AgentResponse(events=(Event("assistant", "Done."),))


def components(result) -> dict[str, float]:  # type: ignore[no-untyped-def]
    return {c.component: c.value for c in result.components}


def test_evidence_item_needs_verifier_and_bundle(tmp_path: Path) -> None:
    case = evidence_case()
    bundle_workspace(tmp_path)
    # artifacts and manifest perfect, but the task failed: no pass
    no_task = score_item(case, done(), tmp_path, pass_threshold=0.0)
    assert not no_task.passed and no_task.gate_failures == ("verifier",)
    assert components(no_task)["evidence_completeness"] == 1.0
    write(tmp_path / "fixed.txt", "yes\n")
    full = score_item(case, done(), tmp_path, pass_threshold=0.6)
    assert full.passed, full.gate_failures
    assert components(full)["report_completeness"] == 1.0
    assert components(full)["taxonomy_usage"] == 1.0
    # the task done, the notes edited after the manifest was written: the bundle fails
    write(tmp_path / "proof" / "notes.md", NOTES.replace("## Observed", "Observed"))
    broken = score_item(case, done(), tmp_path, pass_threshold=0.0)
    assert not broken.passed
    assert set(broken.gate_failures) == {"artifacts", "bundle"}
    values = components(broken)
    assert values["artifact:proof/shot.png"] == 1.0
    assert values["artifact:proof/notes.md"] == 0.0
    assert values["evidence_completeness"] == pytest.approx(1 / 3)
    assert values["report_completeness"] == pytest.approx(2 / 3)
    detail = {c.component: c.detail for c in broken.components}
    assert detail["artifact:proof/notes.md"].startswith("invalid: ")


def test_plain_path_takes_its_kind_from_the_extension(tmp_path: Path) -> None:
    case = Case.model_validate(
        {
            "id": "shot",
            "lane": "evidence",
            "prompt": "Take a screenshot.",
            "verifier": [{"kind": "file_exists", "path": "screenshot.png"}],
            "artifacts_required": ["screenshot.png"],
        }
    )
    write(tmp_path / "screenshot.png", b"")  # exists, so the verifier passes; but empty
    result = score_item(case, done(), tmp_path, pass_threshold=0.0)
    assert not result.passed and result.gate_failures == ("artifacts",)


@pytest.mark.parametrize("hostile", ["proof/a\u0000b", "proof/\u202enotes.md", "proof\\notes.md",
                                     "proof/../../etc/passwd"])
def test_a_hostile_manifest_path_is_the_agents_failure_not_a_crash(
    tmp_path: Path, hostile: str
) -> None:
    files = bundle_workspace(tmp_path)
    manifest = {"artifacts": [{"path": f, "sha256": sha(tmp_path / f)} for f in files]
                + [{"path": hostile, "sha256": "0" * 64}]}
    write(tmp_path / "proof" / "manifest.json", json.dumps(manifest))
    result = check_bundle(tmp_path, SPEC, files)  # a NUL used to raise ValueError here
    assert not result.passed
    bad = [e for e in result.entries if not e.passed]
    assert [e.path for e in bad] == [hostile]
    assert bad[0].reason.startswith(("path contains", "path escapes"))
