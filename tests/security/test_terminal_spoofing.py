"""Run data that would steer a terminal is shown as text by every command that prints it.

The attacks, done for real: a run imported from a JSONL file whose case id holds a carriage
return, ``ESC[2K`` (erase the line) followed by "FAKE: all trials pass", an OSC 52 sequence
(set the clipboard), a C1 CSI (U+009B), DEL and a bidi override, and whose provider name and
failure reasons hold the same. Each command's output is fed to a terminal emulator (pyte):
what the screen shows must be exactly the text printed (nothing overwritten, nothing erased),
with visible markers where the controls were, and the bytes must hold no control at all.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit._terminal import TextOnly, console, text_only_output
from tests.conftest import ROOT, evalkit_cli
from tests.security.terminal_screen import FORBIDDEN, SGR, assert_text_only, screen

OSC52 = "\x1b]52;c;dG91Y2ggWA==\x07"  # sets the clipboard to "touch X"
#: The hostile case id.
CASE = f"ok\r\x1b[2KFAKE: all trials pass{OSC52}\u009b2J\x7f\u202eevil"
#: The hostile provider name (lift's table titles, compare's groups).
PROVIDER = "sim\r\x1b[2KFAKE provider\u009b2J"
SHOWN_CASE = ("ok⟨U+000D⟩⟨U+001B⟩[2KFAKE: all trials pass⟨U+001B⟩]52;c;dG91Y2ggWA==⟨U+0007⟩"
              "⟨U+009B⟩2J⟨U+007F⟩⟨U+202E⟩evil")


def _rows(hostile_passes: bool, seed: int) -> list[dict[str, object]]:
    import random

    rng = random.Random(seed)
    rows: list[dict[str, object]] = []
    for case in [CASE, *(f"c{i}" for i in range(1, 10))]:
        for condition in ("none", "preloaded"):
            for trial in range(8):
                passed = hostile_passes if case == CASE else rng.random() < 0.5
                rows.append({"case_id": case, "condition": condition, "trial": trial,
                             "passed": passed, "provider": PROVIDER,
                             "reason": "fine" if passed else f"failed {CASE}"})
    return rows


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``before`` (the hostile case passes every trial) and ``after`` (it fails every one)."""
    root = tmp_path_factory.mktemp("spoof")
    for name, passes, seed in (("before", True, 1), ("after", False, 2)):
        path = root / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in _rows(passes, seed)),
                        encoding="utf-8")
        done = evalkit_cli("import", path, "--format", "jsonl", "--run-id", name,
                           "--runs-dir", root / "runs")
        assert done.returncode == 0, done.stderr
        assert_text_only(done.stdout.encode())
    return root / "runs"


def _shown(*argv: str | Path, code: int = 0) -> list[str]:
    done = evalkit_cli(*argv)
    assert done.returncode == code, done.stderr
    assert_text_only(done.stderr.encode())
    return assert_text_only(done.stdout.encode())


def test_the_emulator_shows_the_attack_when_nothing_neutralises_it() -> None:
    """The check can fail: printed raw, the case id erases its line, or the whole screen."""
    raw = b"case ok\r\x1b[2KFAKE: all trials pass\nverdict: regressed\n"
    assert screen(raw)[0] == "FAKE: all trials pass"  # "case ok" was erased
    cleared = screen(f"verdict: regressed\ncase {CASE}\n".encode())
    assert not any("verdict" in line for line in cleared)  # the C1 CSI 2J cleared the screen
    with pytest.raises(AssertionError, match="display controls"):
        assert_text_only(raw)


def test_explain_shows_the_case_id_as_text(hostile: Path) -> None:
    shown = _shown("explain", "after", "--case", CASE, "--runs-dir", hostile)
    assert any(SHOWN_CASE in line for line in shown)
    assert not any(line.startswith("FAKE") for line in shown)


def test_explain_in_a_real_process_writes_no_control_byte(hostile: Path) -> None:
    """The bytes on the child's stdout, as a terminal receives them."""
    done = subprocess.run(
        [sys.executable, "-m", "evalkit", "explain", "after", "--case", CASE,
         "--runs-dir", str(hostile)],
        capture_output=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    for byte in (b"\x1b", b"\r", b"\x07", b"\x7f", "\u009b".encode(), "\u202e".encode()):
        assert byte not in done.stdout
    shown = assert_text_only(done.stdout)
    assert any(SHOWN_CASE in line for line in shown)


def test_explain_json_is_valid_and_keeps_the_exact_case_id(hostile: Path) -> None:
    done = evalkit_cli("explain", "after", "--case", CASE, "--runs-dir", hostile, "--json")
    assert done.returncode == 0, done.stderr
    assert not set(done.stdout) & FORBIDDEN and done.stdout.isascii()
    assert json.loads(done.stdout)["case_id"] == CASE  # escaped, not altered


@pytest.mark.parametrize("argv", [
    ("compare", "before", "after"),
    ("flips", "before", "after"),
    ("gate", "--baseline", "before", "--candidate", "after"),
], ids=["compare", "flips", "gate"])
def test_analyses_show_the_case_id_as_text(hostile: Path, argv: tuple[str, ...]) -> None:
    code = 1 if argv[0] == "gate" else 0  # the hostile case regressed: the gate blocks
    shown = _shown(*argv, "--runs-dir", hostile, code=code)
    assert any(SHOWN_CASE in line for line in shown), "\n".join(shown)
    assert not any(line.startswith("FAKE") for line in shown)


def test_compare_json_is_valid_and_ascii(hostile: Path) -> None:
    done = evalkit_cli("compare", "before", "after", "--runs-dir", hostile, "--json")
    assert done.returncode == 0, done.stderr
    assert done.stdout.isascii() and not set(done.stdout) & FORBIDDEN
    assert CASE in json.loads(done.stdout)["regressed_cases"]


def test_lift_shows_the_provider_name_as_text(hostile: Path) -> None:
    shown = _shown("lift", "after", "--roles", "none=A,preloaded=C", "--runs-dir", hostile)
    assert any("sim⟨U+000D⟩⟨U+001B⟩[2KFAKE provider⟨U+009B⟩2J" in line for line in shown)


def test_an_import_summary_shows_a_hostile_condition_as_text(tmp_path: Path) -> None:
    path = tmp_path / "odd.jsonl"
    path.write_text(json.dumps({"case_id": "a", "condition": CASE, "passed": True}) + "\n",
                    encoding="utf-8")
    shown = _shown("import", path, "--format", "jsonl", "--run-id", "odd",
                   "--runs-dir", tmp_path / "runs")
    assert any(line.startswith(f"  {SHOWN_CASE}: 1 items") for line in shown)


def test_an_error_naming_a_bad_field_shows_its_value_as_text(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"case_id": "a", "condition": "none",
                                "passed": f"maybe{CASE}"}) + "\n", encoding="utf-8")
    done = evalkit_cli("import", path, "--format", "jsonl", "--run-id", "bad",
                       "--runs-dir", tmp_path / "runs")
    assert done.returncode == 2
    shown = assert_text_only(done.stderr.encode())
    assert shown[0].startswith(f"error: {path}: line 1: passed must be")
    assert "FAKE: all trials pass" in shown[0]


def test_a_missing_case_error_shows_the_asked_id_as_text(hostile: Path) -> None:
    done = evalkit_cli("explain", "after", "--case", f"x{CASE}", "--runs-dir", hostile)
    assert done.returncode == 2
    shown = assert_text_only(done.stderr.encode())
    assert len(shown) == 1 and shown[0].startswith("error: after: no case")


def test_styled_output_keeps_rich_styles_and_neutralises_the_data(hostile: Path) -> None:
    """On a terminal (forced here) compare's verdicts are bold: SGR only, the data as text."""
    done = evalkit_cli("compare", "before", "after", "--runs-dir", hostile,
                       env={"TTY_COMPATIBLE": "1"})
    assert done.returncode == 0, done.stderr
    assert SGR.search(done.stdout), "the verdicts are styled"
    shown = assert_text_only(done.stdout.encode(), styled=True)
    assert any(line.startswith(f"regressed cases: {SHOWN_CASE}") for line in shown)


def test_a_console_under_the_wrapper_writes_styles_underneath_and_text_neutralised() -> None:
    import io

    from rich.text import Text

    out = io.StringIO()
    saved = sys.stdout
    sys.stdout = out
    try:
        with text_only_output():
            assert isinstance(sys.stdout, TextOnly)
            shown = console(force_terminal=True, color_system="standard", width=200)
            shown.print(Text("case", style="bold"), CASE)  # a str: neutralised, then laid out
            shown.print(Text(f"built {CASE}"))  # a Text built by the caller: its segments
            shown.print(f"[red]{PROVIDER}[/red]", markup=True)
            print(f"plain {CASE}")
    finally:
        sys.stdout = saved
    text = out.getvalue()
    assert "\x1b[1m" in text and "\x1b[31m" in text  # rich's own styles reach the terminal
    assert_text_only(text.encode(), styled=True)
    plain = SGR.sub("", text)
    assert "built ok⟨U+001B⟩[2KFAKE" in plain  # rich's Text itself drops CR and BEL
    assert plain.count(SHOWN_CASE) == 2 and "sim⟨U+000D⟩⟨U+001B⟩[2KFAKE provider" in plain
    assert not any(line.startswith("FAKE") for line in screen(text.encode()))


def test_a_console_outside_the_command_line_is_richs_own() -> None:
    """In a notebook or a library call nothing is wrapped: rich picks its stream as usual."""
    assert not isinstance(sys.stdout, TextOnly)
    shown = console()
    assert shown.file is sys.stdout
