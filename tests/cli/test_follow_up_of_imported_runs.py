"""The follow-up of a comparison of imported runs does not offer a rerun evalkit cannot do."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import evalkit_cli

STARSIM = Path(__file__).resolve().parents[1] / "fixtures" / "imports" / "inspect-starsim"


def test_imported_logs_are_sent_back_to_their_harness(tmp_path: Path) -> None:
    for run, log in (("no-plugin", "sonnet-no-plugin-120s.eval"),
                     ("plugin", "sonnet-plugin-120s.eval")):
        done = evalkit_cli("import", STARSIM / log, "--format", "inspect", "--run-id", run,
                           "--runs-dir", tmp_path)
        assert done.returncode == 0, done.stderr
    compared = evalkit_cli("compare", "no-plugin", "plugin", "--runs-dir", tmp_path)
    assert compared.returncode == 0, compared.stderr
    follow = [line for line in compared.stdout.splitlines() if line.startswith("follow-up:")]
    assert len(follow) == 1
    assert "imported from inspect logs, which evalkit cannot rerun" in follow[0]
    assert "evalkit confirm" not in follow[0] and "starsim_t1.1" in follow[0]
