"""Write the small committed judged run the judge and labels reports are tested against.

Usage (from the project root)::

    .venv/bin/python scripts/make_judged_fixture.py          # -> tests/fixtures/judged/

A two-case suite whose statements carry a known truth is run by the simulated agent and graded
by the simulated judge at a 30 % error rate (so calibration has disagreements to show):
``run/`` is the run (2 cases x 2 conditions x 2 trials), ``labels.csv`` the unlabelled template
``evalkit judge sample`` writes for it, ``labelled.csv`` the same rows labelled with the known
truth, and ``run/calibration/`` the report ``evalkit judge calibrate`` stores from them.
"""

from __future__ import annotations

import csv
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = Path("tests/fixtures/judged")


def main() -> int:
    """Write the fixture (paths stored in it are relative to the project root)."""
    sys.path.insert(0, str(ROOT))
    import evalkit
    from evalkit.cases import load_suite
    from evalkit.judge import calibrate, known_truth, sample_labels, statements
    from evalkit.results import read_transcripts
    from evalkit.runner import RunConfig, run
    from tests.judge.conftest import write_suite

    out = ROOT / OUT
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:
        suite = write_suite(Path(tmp))
        config = RunConfig(runs_dir=Path(tmp) / "runs", run_id="run", progress=False, trials=2,
                           seed=4, use_cache=False,
                           judge_options={"error_rate": 0.3, "seed": 11})
        made = run(suite, config).run_dir
        shutil.copytree(made, out / "run", ignore=shutil.ignore_patterns("run.lock"))
        cases = {c.id: c for c in load_suite(suite).cases}
    run_dir = OUT / "run"
    sample_labels(run_dir, n=50, output=OUT / "labels.csv", runs_dir=ROOT)
    rows = evalkit.read_run(ROOT / run_dir)
    transcripts = read_transcripts(ROOT / run_dir)
    truth = {}
    for key, case_id in zip(rows["item_key"], rows["case_id"], strict=True):
        events = transcripts[key]["response"]["events"]
        text = "\n".join(e["content"] for e in events if e["kind"] in ("assistant", "tool_call"))
        for statement in statements(cases[case_id]):
            truth[(key, statement.text)] = known_truth(statement, cases[case_id], text)
    with (ROOT / OUT / "labels.csv").open(newline="", encoding="utf-8") as fh:
        labelled = list(csv.DictReader(fh))
    for row in labelled:
        row["label"] = "pass" if truth[(row["item_key"], row["expectation"])] else "fail"
    with (ROOT / OUT / "labelled.csv").open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(labelled[0]))
        writer.writeheader()
        writer.writerows(labelled)
    result = calibrate(run_dir, OUT / "labelled.csv", runs_dir=ROOT)
    print(f"wrote {OUT}: {len(rows)} items, {result.n} labelled statements, "
          f"kappa {result.kappa.estimate:.2f}, {len(result.disagreements)} disagreements")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
