"""``evalkit view``: a real server on 127.0.0.1, read by a real Chromium and by plain requests.

The runs directory holds the committed ``before`` / ``after`` runs (their case ids and answers
are script and image payloads) and, for the live test, a run started in another process while
the page is open.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from evalkit.viewer import ViewServer
from tests.conftest import DEMO, ROOT, evalkit_cli

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

FIXTURE_RUNS = ROOT / "tests" / "fixtures" / "runs"


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    dest = tmp_path / "runs"
    dest.mkdir()
    for name in ("before", "after"):
        shutil.copytree(FIXTURE_RUNS / name, dest / name)
    return dest


def _client(server: ViewServer, *, token: bool = True) -> httpx.Client:
    cookies = {server.cookie_name: server.token} if token else {}
    return httpx.Client(base_url=f"http://127.0.0.1:{server.port}", cookies=cookies,
                        follow_redirects=False, timeout=60)


def _tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(str(path.relative_to(root)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def test_it_refuses_requests_without_the_token_a_foreign_host_or_a_way_out(
    server: ViewServer, runs: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    shutil.copytree(FIXTURE_RUNS / "before", outside)
    (runs / "linked").symlink_to(outside)  # a run that is a link out of the directory
    before = _tree_digest(runs)
    with _client(server, token=False) as anonymous:
        assert anonymous.get("/").status_code == 403
        assert anonymous.get("/api/runs").status_code == 403
        assert anonymous.get("/?token=wrong").status_code == 403
        first = anonymous.get(f"/run/after?token={server.token}")
        assert first.status_code == 303 and first.headers["location"] == "/run/after"
        cookie = first.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    with _client(server) as client:
        rebound = client.get("/api/runs", headers={"Host": f"evil.example:{server.port}"})
        assert rebound.status_code == 403  # DNS rebinding: the name is not this server's
        for escape in ("/run/..%2F..%2Fetc", "/run/../../etc/passwd",
                       "/static/../../pyproject.toml", "/run/linked", "/run/.cache",
                       "/explain?run=../before&case=x"):
            answer = client.get(escape)
            assert answer.status_code in (400, 404), escape
            assert "root:" not in answer.text and "[project]" not in answer.text
        assert client.post("/api/runs").status_code == 405
        assert client.request("DELETE", "/run/after").status_code == 405
        for path in ("/", "/api/runs", "/run/after", "/compare?baseline=before&candidate=after",
                     "/static/view.js"):
            answer = client.get(path)
            assert answer.status_code == 200, path
            policy = answer.headers["content-security-policy"]
            assert "script-src 'self'" in policy and "default-src 'none'" in policy
            assert answer.headers["x-content-type-options"] == "nosniff"
        listed = {r["run_id"]: r for r in client.get("/api/runs").json()["runs"]}
        assert listed["linked"]["error"] == "links outside the runs directory"
    assert _tree_digest(runs) == before, "the viewer wrote into the runs directory"


def test_a_damaged_run_is_an_error_row_and_the_server_stays_up(
    server: ViewServer, runs: Path
) -> None:
    (runs / "broken").mkdir()
    (runs / "broken" / "manifest.json").write_text("{not json")
    with _client(server) as client:
        listed = {r["run_id"]: r for r in client.get("/api/runs").json()["runs"]}
        assert listed["broken"]["error"].startswith("manifest unreadable")
        assert listed["after"]["error"] == "" and listed["after"]["done"] == 168
        page = client.get("/run/broken")
        assert page.status_code in (400, 500) and "Traceback" not in page.text
        assert client.get("/api/runs").status_code == 200  # still serving


def test_pages_are_redacted_and_bidi_controls_shown_as_markers(
    server: ViewServer, runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A key that reached a transcript (an older run's) and a bidi override in a case id."""
    import pyarrow.parquet as pq

    secret = "sk-view-" + "Q7x" * 10
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    shard = next((runs / "after" / "transcripts").glob("*.jsonl"))
    lines = shard.read_text().splitlines()
    lines[0] = lines[0].replace('"content":"', f'"content":"key {secret} ', 1)
    shard.write_text("\n".join(lines) + "\n")
    assert secret in shard.read_text(), "the key is planted"
    table = pq.read_table(runs / "after" / "results.parquet")
    ids = [("evil\u202egnp.exe" if i == 0 else c) for i, c in
           enumerate(table.column("case_id").to_pylist())]
    table = table.set_column(table.schema.get_field_index("case_id"), "case_id",
                             __import__("pyarrow").array(ids, type=table.schema.field(
                                 "case_id").type))
    pq.write_table(table, runs / "after" / "results.parquet")
    with _client(server) as client:
        page = client.get("/run/after").text
    assert secret not in page and secret[8:] not in page
    assert "key [REDACTED]" in page  # the planted event is on the page, its key redacted
    assert "\u202e" not in page and "evil\u27e8U+202E\u27e9gnp.exe" in page


def test_a_comparison_is_the_one_evalkit_compare_prints(server: ViewServer, runs: Path) -> None:
    cli = evalkit_cli("compare", "before", "after", "--runs-dir", str(runs), "--json")
    assert cli.returncode == 0, cli.stderr
    with _client(server) as client:
        served = client.get("/api/compare", params={"baseline": "before", "candidate": "after"})
        assert served.status_code == 200
        assert served.json() == json.loads(cli.stdout)
        within = client.get("/api/compare", params={"run": "after", "a": "none",
                                                    "b": "preloaded"})
        cli_within = evalkit_cli("compare", "after", "--conditions", "none,preloaded",
                                 "--runs-dir", str(runs), "--json")
        assert within.json() == json.loads(cli_within.stdout)
        page = client.get("/compare", params={"baseline": "before", "candidate": "after"})
        assert json.loads(cli.stdout)["verdict"].upper() in page.text.upper()


def _open(chromium: Browser, server: ViewServer, path: str = "/") -> tuple[Page, list[str]]:
    """A new page at ``path``, opened with the token, and the errors it logs."""
    page = chromium.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.goto(f"http://127.0.0.1:{server.port}{path}{'&' if '?' in path else '?'}"
              f"token={server.token}")
    return page, errors


@pytest.mark.slow
def test_hostile_ids_and_answers_render_as_text_in_chromium(
    chromium: Browser, server: ViewServer
) -> None:
    for path in ("/", "/run/after", "/compare?baseline=before&candidate=after"):
        page, errors = _open(chromium, server, path)
        page.wait_for_load_state("networkidle")
        if path == "/":
            page.wait_for_selector("tr[data-run='after']")
        assert page.evaluate("window.__pwned") is None, path
        if path == "/run/after":
            assert "<script>window.__pwned=1</script>" in page.inner_text("body")
        assert not [e for e in errors if "Content Security Policy" in e], errors
        page.close()


def test_a_click_on_a_failed_item_opens_its_reason_and_transcript(
    chromium: Browser, server: ViewServer
) -> None:
    page, _ = _open(chromium, server, "/run/after")
    row = page.locator("tr.ek-browser-row.ek-fail").first
    reason = row.locator("td.ek-cell-reason").inner_text().strip()
    row.click()
    panel = page.locator("details.ek-browser-item[open]")
    panel.wait_for()
    assert panel.count() == 1
    assert panel.locator(".ek-event").count() > 0  # the transcript's events
    if reason:
        assert reason.rstrip("…").strip()[:40] in panel.inner_text()
    page.close()


@pytest.mark.slow
def test_a_run_started_elsewhere_appears_and_its_counts_move(
    chromium: Browser, server: ViewServer, runs: Path
) -> None:
    page, _ = _open(chromium, server)
    page.wait_for_selector("tr[data-run='after']")
    assert page.locator("tr[data-run='live']").count() == 0
    child = subprocess.Popen(
        [sys.executable, "-m", "evalkit", "run", str(DEMO), "--lane", "execution", "--trials",
         "2", "--concurrency", "1", "--runs-dir", str(runs), "--run-id", "live", "--no-progress",
         "--no-cache"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        progress = "tr[data-run='live'] .ek-view-progress"
        page.wait_for_selector(progress, timeout=60_000)
        seen = {page.inner_text(progress)}
        for _ in range(2):  # it moves, twice, with no reload
            page.wait_for_function(
                "([sel, seen]) => !seen.includes(document.querySelector(sel).textContent)",
                arg=[progress, sorted(seen)], timeout=60_000,
            )
            seen.add(page.inner_text(progress))
        done = [int(text.split("/")[0]) for text in seen if text.split("/")[0].strip().isdigit()]
        assert len(set(done)) >= 2 and max(done) > min(done)
        assert page.evaluate("performance.getEntriesByType('navigation').length") == 1
    finally:
        child.terminate()
        child.wait(timeout=60)
        page.close()


def test_a_notebook_starts_it_with_evalkit_view_and_gets_a_link(runs: Path) -> None:
    import evalkit

    started = evalkit.view(runs)
    try:
        link = started._repr_html_()
        assert started.url in link.replace("&amp;", "&") and started.url.startswith(
            "http://127.0.0.1:")
        with httpx.Client(follow_redirects=True, timeout=60) as client:
            index = client.get(started.url)
            assert index.status_code == 200 and "ek-view-runs" in index.text
    finally:
        started.stop()
