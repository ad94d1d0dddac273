"""A skill's components and its ablated copies (evalkit.ablation._components)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from evalkit.ablation import (
    estimate_tokens,
    pick_components,
    skill_components,
    write_ablated_copy,
)
from evalkit.ablation._components import text_without
from evalkit.cases import directory_hash, load_suite
from evalkit.errors import ConfigError

SUITE = Path(__file__).resolve().parents[1] / "fixtures" / "suites" / "ablation"


def test_components_are_description_sections_and_files() -> None:
    components = skill_components(load_suite(SUITE), "shell")
    assert [c.id for c in components] == [
        "description",
        "section/quoting",
        "section/legacy-tips",
        "section/history",
        "section/waiting",
        "file/references/waiting.md",
    ]
    for c in components:
        assert c.tokens == math.ceil(len(c.text) / 4)
    assert components[1].text.startswith("## Quoting\n")
    assert "sleep 10" in components[2].text and "Quote" not in components[2].text


def test_headings_in_code_fences_and_a_lone_title() -> None:
    text = "# Title\n\nintro\n\n## A\na\n```\n## not a heading\n```\n### A.1\nx\n## A\nb\n"
    from evalkit.ablation._components import _named_sections, split_frontmatter

    _, body = split_frontmatter(text)
    named = [(cid, s.title) for cid, s in _named_sections(body)]
    assert named == [("section/a", "A"), ("section/a-2", "A")]
    stripped = text_without(text, [])
    assert stripped == text


def test_ablated_copy_removes_exactly_one_component(tmp_path: Path) -> None:
    suite = load_suite(SUITE)
    components = {c.id: c for c in skill_components(suite, "shell")}
    full = write_ablated_copy(suite, "shell", [], tmp_path / "full")
    no_legacy = write_ablated_copy(
        suite, "shell", [components["section/legacy-tips"]], tmp_path / "legacy"
    )
    no_file = write_ablated_copy(
        suite, "shell", [components["file/references/waiting.md"]], tmp_path / "file"
    )
    no_description = write_ablated_copy(
        suite, "shell", [components["description"]], tmp_path / "description"
    )
    assert full.text == suite.skills["shell"].texts["canonical"]
    assert "sleep 10" not in no_legacy.text and "## Quoting" in no_legacy.text
    assert no_legacy.text.count("\n") < full.text.count("\n")
    # a removed file is absent, its mention in SKILL.md left dangling as a deletion leaves it
    assert not (no_file.path / "references" / "waiting.md").exists()
    assert "references/waiting.md" in no_file.text
    assert (no_legacy.path / "references" / "waiting.md").is_file()
    assert "description:" not in no_description.text and no_description.description == ""
    assert no_description.text.startswith("---\nname: shell\n---\n")
    hashes = {c.tree_hash for c in (full, no_legacy, no_file, no_description)}
    assert len(hashes) == 4
    assert no_file.tree_hash == directory_hash(no_file.path)


def test_unknown_component_is_named() -> None:
    components = skill_components(load_suite(SUITE), "shell")
    with pytest.raises(ConfigError, match="'section/nope'.*section/quoting"):
        pick_components(components, ("section/quoting", "section/nope"))
    assert [c.id for c in pick_components(components, ("section/history",))] == [
        "section/history"
    ]


def test_estimate_tokens() -> None:
    assert estimate_tokens("a" * 9) == 3
