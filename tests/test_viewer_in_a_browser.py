"""The trace viewer in a real browser: headless Chromium opens a page (one launch per test), its
script steps to the turn the URL names (#turn=N), and the DOM it leaves is checked for what a reader
sees: the turn, the running total of tokens, the stop reason, and markup from the run shown as text."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

import pytest

from course.site import pages as site
from course.viewer import pages as viewer
from test_viewer import MARKUP, hostile_run

BROWSER = next((found for name in ("chromium", "chromium-browser", "google-chrome") if (found := shutil.which(name))), None)
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no chromium found (make install adds the Debian package "
                                                       "chromium when it runs as root with apt-get)")


def dom_of(url: str, tmp_path) -> str:
    """The page's DOM after its script ran, as headless Chromium dumps it (offline: no proxy, no network)."""
    done = subprocess.run([BROWSER, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", url],
                          capture_output=True, text=True, timeout=120, env=browser_environment(tmp_path))
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def browser_environment(tmp_path) -> dict:
    """Chromium keeps a socket in TMPDIR, whose path must fit a unix socket's 108 bytes: pytest's own
    folders for a test run by a pytest-xdist worker are longer, so the browser gets a short one."""
    short = tempfile.mkdtemp(prefix="cr-", dir="/tmp")
    SHORT_FOLDERS.append(short)
    return dict(os.environ, HOME=str(tmp_path), TMPDIR=short)


SHORT_FOLDERS: list[str] = []


@pytest.fixture(autouse=True)
def short_folders_are_removed():
    yield
    while SHORT_FOLDERS:
        shutil.rmtree(SHORT_FOLDERS.pop(), ignore_errors=True)


# No request leaves the browser: every one goes to a proxy on a closed local port.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
         "--proxy-server=127.0.0.1:9")


class Browser:
    """Headless Chromium driven over the DevTools protocol on a pipe, to press keys as a reader would:
    --remote-debugging-pipe reads commands on fd 3 and answers on fd 4, each a JSON text ended by NUL
    (https://chromedevtools.github.io/devtools-protocol/)."""

    def __init__(self, tmp_path):
        commands, self.commands = os.pipe()
        self.answers, answers = os.pipe()

        def on_fds_3_and_4():
            os.dup2(commands, 3)
            os.dup2(answers, 4)
        self.process = subprocess.Popen(
            [BROWSER, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--remote-debugging-pipe", "about:blank"],
            pass_fds=(3, 4), preexec_fn=on_fds_3_and_4, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, env=browser_environment(tmp_path))
        os.close(commands)
        os.close(answers)
        self.unread, self.last_id, self.session = b"", 0, None

    def send(self, method: str, **params):
        self.last_id += 1
        message = {"id": self.last_id, "method": method, "params": params}
        if self.session:
            message["sessionId"] = self.session
        os.write(self.commands, json.dumps(message).encode() + b"\0")
        while True:
            answer = self.read()
            if answer.get("id") == self.last_id:
                assert "error" not in answer, answer["error"]
                return answer.get("result", {})

    def read(self) -> dict:
        while b"\0" not in self.unread:
            chunk = os.read(self.answers, 1 << 16)
            assert chunk, "the browser closed its pipe"
            self.unread += chunk
        message, self.unread = self.unread.split(b"\0", 1)
        return json.loads(message)

    def open(self, url: str) -> None:
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.send("Page.navigate", url=url)
        deadline = time.monotonic() + 60
        while self.evaluate("document.readyState") != "complete":
            assert time.monotonic() < deadline, f"{url} did not load"
            time.sleep(0.02)

    def evaluate(self, expression: str):
        return self.send("Runtime.evaluate", expression=expression, returnByValue=True)["result"].get("value")

    def text_of(self, element_id: str) -> str:
        return self.evaluate(f"document.getElementById({json.dumps(element_id)}).textContent")

    def press(self, key: str, key_code: int) -> None:
        for kind in ("keyDown", "keyUp"):
            self.send("Input.dispatchKeyEvent", type=kind, key=key, code=key, windowsVirtualKeyCode=key_code)

    def close(self) -> None:
        self.process.kill()
        self.process.wait()
        os.close(self.commands)
        os.close(self.answers)


@pytest.fixture
def browser(tmp_path):
    opened = Browser(tmp_path)
    yield opened
    opened.close()


def shown(dom: str, element_id: str) -> str:
    found = re.search(rf'id="{element_id}"[^>]*>(.*?)</', dom, re.S)
    assert found, f"no element #{element_id} in the page"
    return html.unescape(found[1])


@pytest.mark.stage("s03")
def test_a_run_is_stepped_through_with_the_keys_and_its_markup_is_text(tmp_path, browser):
    view = viewer.read_transcript(hostile_run(tmp_path))
    page = tmp_path / "run.html"
    page.write_text(viewer.page(view), encoding="utf-8")
    browser.open(page.as_uri() + "#turn=2")
    turns = len(view["turns"])
    assert browser.text_of("turn-position") == f"2 of {turns}"
    so_far = view["turns"][0]["input_all"] + view["turns"][1]["input_all"]
    assert browser.text_of("tokens-in") == f"{so_far:,}"
    browser.press("ArrowRight", 39)
    assert (browser.text_of("turn-position"), browser.evaluate("location.hash")) == (f"3 of {turns}", "#turn=3")
    assert browser.text_of("stop-reason") == "end_turn" and "Stop" in browser.text_of("stop")
    browser.press("Home", 36)
    assert browser.text_of("turn-position") == f"1 of {turns}"
    # The run's markup is text on the page, and none of it ran: no image, no title changed.
    assert browser.evaluate("document.querySelectorAll('img').length") == 0
    assert "pwned" not in browser.evaluate("document.title")
    assert MARKUP in browser.evaluate("document.body.innerText")


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
