"""The reasons a name or a relative path is refused, one wording for what both check."""

from __future__ import annotations

import pytest

from evalkit._paths import unsafe_component_reason, unsafe_relative_reason

CHECKS = (unsafe_component_reason, unsafe_relative_reason)


@pytest.mark.parametrize("reason", CHECKS)
@pytest.mark.parametrize(
    ("value", "said"),
    [
        (3, "must be a string, got int"),
        (None, "must be a string, got NoneType"),
        ("", "is empty"),
        ("  \t", "is empty"),
        ("a\x00b", "contains the control character U+0000"),
        ("x\u202ey", "contains the control character U+202E"),
        ("/etc/passwd", None),  # each check words its own rule for this one
    ],
)
def test_both_checks_word_the_shared_rules_alike(
    reason: object, value: object, said: str | None
) -> None:
    got = reason(value)  # type: ignore[operator]
    if said is None:
        assert got is not None
    else:
        assert got == said


def test_each_check_keeps_its_own_order_of_rules() -> None:
    assert unsafe_component_reason("a/\x00") == "contains a path separator ('/')"
    assert unsafe_relative_reason("a\\\x00") == "contains the control character U+0000"
    assert unsafe_component_reason("-x") == "starts with '-' (it would be read as an option)"
    assert unsafe_relative_reason("a/../b") == "escapes its root (..)"
    assert unsafe_component_reason("ok-name") is None
    assert unsafe_relative_reason("proof/ok.md") is None
