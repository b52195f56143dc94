"""The HTML report rendered by headless Chromium (opt-in tier: ``make test-browser`` installs Debian's
chromium). What the browser shows must be what ``--json`` says: the DOM after rendering is parsed and compared.
A screenshot proves the page paints (inline SVG, no network)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from . import traces as t
from .test_cli import check_html_matches_json, parse_html, run_cli

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
         "--disable-extensions", "--disable-sync", "--disable-component-update"]


@pytest.fixture
def chromium(request: pytest.FixtureRequest) -> str:
    if CHROMIUM is None:
        if "browser" in (request.config.getoption("-m") or ""):
            pytest.fail("chromium is required for the browser tier (make test-browser installs it)")
        pytest.skip("chromium not installed (opt-in browser tier: make test-browser)")
    return CHROMIUM


@pytest.mark.browser
def test_report_renders_in_chromium_and_its_numbers_match_the_json(chromium: str, tmp_path: Path) -> None:
    runs = t.write_lines(tmp_path / "runs.jsonl", [t.request(t.looping("loop")), t.request(t.healthy("fine")),
                                                   t.request(t.looping("loop2", steps=30))])
    page = tmp_path / "report.html"
    done = run_cli("replay", runs, "--json", "--html", page)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    profile = tmp_path / "profile"
    base = [chromium, *FLAGS, f"--user-data-dir={profile}"]
    dom = subprocess.run([*base, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=90)
    assert dom.returncode == 0, dom.stderr[-2000:]
    parsed = parse_html(dom.stdout)
    assert {"svg", "rect", "section"} <= parsed.tags
    check_html_matches_json(parsed, lines)
    shot = tmp_path / "report.png"
    painted = subprocess.run([*base, "--window-size=1100,900", f"--screenshot={shot}", page.as_uri()],
                             capture_output=True, text=True, timeout=90)
    assert painted.returncode == 0, painted.stderr[-2000:]
    assert shot.stat().st_size > 10_000  # a painted page, not a blank one
