"""Runs keep the skill texts they ran with: ``skills/<hash>/SKILL.md`` beside the manifest."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evalkit.cases import load_skill_text, load_suite, skill_text_hash, store_skill_texts
from evalkit.errors import InputError
from evalkit.results import SKILLS_DIR, load_manifest
from evalkit.runner import RunConfig, SkillOverride, run
from tests.conftest import TINY

CONDITIONS = ("none", "self-load", "preloaded", "stale")


def _config(runs_dir: Path, run_id: str, **extra: object) -> RunConfig:
    return RunConfig(
        conditions=CONDITIONS, trials=1, progress=False, runs_dir=runs_dir, run_id=run_id,
        concurrency=1, **extra,
    )  # fmt: skip


def _stored(run_dir: Path) -> dict[str, str]:
    """Every text the manifest names, read back (and checked) from the run's store."""
    manifest = load_manifest(run_dir)
    assert manifest is not None and manifest.skill_texts
    return {h: load_skill_text(run_dir / SKILLS_DIR, h) for h in manifest.skill_texts}


def test_a_run_keeps_every_text_its_conditions_exposed(runs_dir: Path) -> None:
    result = run(TINY, _config(runs_dir, "r1"))
    run_dir = Path(result.run_dir)
    stored = _stored(run_dir)
    suite = load_suite(TINY)
    texts = suite.skills["waiting"].texts
    manifest = load_manifest(run_dir)
    assert manifest is not None
    conditions = manifest.conditions
    assert conditions["none"].skill_hashes == {}
    assert stored[conditions["preloaded"].skill_hashes["waiting"]] == texts["canonical"]
    assert stored[conditions["stale"].skill_hashes["waiting"]] == texts["stale"]
    bootstrap = conditions["self-load"].bootstrap_hashes
    assert bootstrap is not None and stored[bootstrap["waiting"]] == texts["bootstrap"]
    assert sorted(stored) == sorted({skill_text_hash(texts[v]) for v in
                                     ("canonical", "stale", "bootstrap")})  # fmt: skip
    assert not list(run_dir.rglob("*.tmp"))


def test_a_candidate_text_is_kept_not_the_suite_file(runs_dir: Path, tmp_path: Path) -> None:
    candidate = tmp_path / "candidate.md"
    candidate.write_text("# Waiting\n\nPoll with a deadline.\n", encoding="utf-8")
    override = SkillOverride(skill="waiting", path=candidate)
    result = run(TINY, _config(runs_dir, "cand", skills=(override,)))
    manifest = load_manifest(result.run_dir)
    assert manifest is not None
    address = manifest.conditions["preloaded"].skill_hashes["waiting"]
    assert load_skill_text(Path(result.run_dir) / SKILLS_DIR, address) == candidate.read_text()


def test_a_cached_run_and_a_resumed_run_keep_them_too(runs_dir: Path) -> None:
    first = run(TINY, _config(runs_dir, "first"))
    cached = run(TINY, _config(runs_dir, "cached"))
    assert cached.cache_hits == cached.items  # every outcome copied from the cache
    assert _stored(Path(cached.run_dir)) == _stored(Path(first.run_dir))
    store = Path(cached.run_dir) / SKILLS_DIR
    removed = sorted(store.iterdir())[0]
    (removed / "SKILL.md").unlink()
    run(TINY, _config(runs_dir, "cached", resume=True))
    assert _stored(Path(cached.run_dir)) == _stored(Path(first.run_dir))


def test_a_resume_into_a_symlinked_store_is_refused(runs_dir: Path, tmp_path: Path) -> None:
    result = run(TINY, _config(runs_dir, "r2"))
    run_dir = Path(result.run_dir)
    target = tmp_path / "elsewhere"
    target.mkdir()
    os.rename(run_dir / SKILLS_DIR, tmp_path / "moved")
    (run_dir / SKILLS_DIR).symlink_to(target, target_is_directory=True)
    with pytest.raises(InputError, match="symbolic link"):
        run(TINY, _config(runs_dir, "r2", resume=True))
    assert list(target.iterdir()) == []  # nothing written through the link


def test_the_store_refuses_what_it_did_not_write(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    (address,) = store_skill_texts(root, ["# text\n"])
    assert load_skill_text(root, address) == "# text\n"
    for bad in ("../x", "0" * 15, address.upper(), f"{address}/.."):
        with pytest.raises(InputError, match="not a 16-digit hex hash"):
            load_skill_text(root, bad)
    other = tmp_path / "other.md"
    other.write_text("# text\n", encoding="utf-8")
    (root / address / "SKILL.md").unlink()
    (root / address / "SKILL.md").symlink_to(other)
    with pytest.raises(InputError, match="symbolic link"):
        load_skill_text(root, address)
    (root / address / "SKILL.md").unlink()
    (root / address / "SKILL.md").write_text("# changed\n", encoding="utf-8")
    with pytest.raises(InputError, match="does not hash to"):
        load_skill_text(root, address)
    missing = skill_text_hash("never stored")
    with pytest.raises(InputError, match="not stored"):
        load_skill_text(root, missing)


def test_texts_keep_their_bytes(tmp_path: Path) -> None:
    text = "line one\r\nline two\n\u00e9\u202e\n"
    (address,) = store_skill_texts(tmp_path / "skills", [text])
    assert load_skill_text(tmp_path / "skills", address) == text
