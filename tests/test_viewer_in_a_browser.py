"""The trace viewer in a real browser: headless Chromium opens a page (one launch per test), its
script steps to the turn the URL names (#turn=N), and the DOM it leaves is checked for what a reader
sees: the turn, the running total of tokens, the stop reason, and markup from the run shown as text."""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess

import pytest

from course import site, viewer
from test_viewer import MARKUP, hostile_run

BROWSER = next((found for name in ("chromium", "chromium-browser", "google-chrome") if (found := shutil.which(name))), None)
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no chromium found (make install adds the Debian package "
                                                       "chromium when it runs as root with apt-get)")


def dom_of(url: str, tmp_path) -> str:
    """The page's DOM after its script ran, as headless Chromium dumps it (offline: no proxy, no network)."""
    done = subprocess.run(
        [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
         f"--user-data-dir={tmp_path / 'profile'}", "--proxy-server=127.0.0.1:9", "--dump-dom", url],
        capture_output=True, text=True, timeout=60, env=dict(os.environ, HOME=str(tmp_path)))
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def shown(dom: str, element_id: str) -> str:
    found = re.search(rf'id="{element_id}"[^>]*>(.*?)</', dom, re.S)
    assert found, f"no element #{element_id} in the page"
    return html.unescape(found[1])


@pytest.mark.stage("s03")
def test_a_run_is_shown_turn_by_turn_with_its_markup_as_text(tmp_path):
    view = viewer.read_transcript(hostile_run(tmp_path))
    page = tmp_path / "run.html"
    page.write_text(viewer.page(view), encoding="utf-8")
    dom = dom_of(page.as_uri() + "#turn=2", tmp_path)
    assert shown(dom, "turn-position") == f"2 of {len(view['turns'])}"
    so_far = view["turns"][0]["input_all"] + view["turns"][1]["input_all"]
    assert shown(dom, "tokens-in") == f"{so_far:,}"
    assert shown(dom, "stop-reason") == "end_turn"
    assert "pwned" not in re.search(r"<title>(.*?)</title>", dom, re.S)[1]  # no script of the run ran
    assert "<img" not in dom and html.escape(MARKUP, quote=False) in dom  # the tool's output, as text


@pytest.mark.stage()
def test_a_ladder_cell_opens_in_the_sites_viewer_at_its_stop(tmp_path):
    site.start_build()
    site.compare_table(["s03"], ["looping"])
    run_id = site.cell_view_id("s03", "looping")
    view = viewer.site_views()[run_id]
    viewer.write_site(tmp_path / "site")
    dom = dom_of((tmp_path / "site" / "viewer" / f"{run_id}.html").as_uri() + "#turn=999", tmp_path)
    turns = len(view["turns"])
    assert shown(dom, "turn-position") == f"{turns} of {turns}"  # past the last turn: the last
    assert shown(dom, "stop-reason") == "no_progress"
    assert shown(dom, "tokens-in") == f"{view['totals']['input']:,}"
    assert 'id="stop"' in dom and "ladder cell · scenario looping" in dom
