"""The documentation site: it builds in strict mode, offline, and its pages show the code as it is.

The site is built once per test session (``built_site``) in a subprocess whose network is blocked
like the tests' own. The chapter checks compare the built pages with the stage files and with real
runs, so that prose cannot drift from the code it describes.
"""

from __future__ import annotations

import html
import importlib.util
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from mkdocs.exceptions import PluginError

import course

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
REPORT_TASK = "List the files and write their count and names to report.txt"
CHAPTERS = {"s00": "s00-one-call", "s01": "s01-closed-loop"}

# Loaded into the build subprocess through PYTHONPATH: the same rule as tests/conftest.py.
NO_NETWORK = '''
import socket
_real_connect = socket.socket.connect
def _loopback_only(sock, address):
    host = address[0] if isinstance(address, tuple) else address
    if sock.family == getattr(socket, "AF_UNIX", None) or host in ("127.0.0.1", "::1", "localhost"):
        return _real_connect(sock, address)
    raise ConnectionRefusedError(f"the docs build must not reach the network (tried {address!r})")
socket.socket.connect = _loopback_only
'''


def load_hook():
    spec = importlib.util.spec_from_file_location("docs_hook_generate", DOCS / "hooks" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def built_site(tmp_path_factory):
    """One strict build for the whole module: (the completed process, the site folder)."""
    site = tmp_path_factory.mktemp("site")
    guard = tmp_path_factory.mktemp("no-network")
    (guard / "sitecustomize.py").write_text(NO_NETWORK, encoding="utf-8")
    env = {name: value for name, value in os.environ.items()
           if name not in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "MODEL_ID")}
    env["PYTHONPATH"] = os.pathsep.join([str(guard), str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["NO_MKDOCS_2_WARNING"] = "1"
    env["AGENT_COURSE_RUNS_LOG"] = str(tmp_path_factory.mktemp("runs") / "runs.jsonl")
    process = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                             cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    return process, site


@pytest.fixture(scope="module")
def site(built_site):
    process, folder = built_site
    if process.returncode != 0:
        pytest.fail(f"mkdocs build --strict failed:\n{process.stdout}\n{process.stderr}")
    return folder


def page_text(site: Path, page: str) -> str:
    """The visible text of a built page's article: tags removed, entities decoded."""
    raw = (site / page / "index.html").read_text(encoding="utf-8")
    article = raw[raw.index("<article"):raw.index("</article>")]
    return html.unescape(re.sub(r"<[^>]+>", "", article))


def section(stage: str, name: str) -> list[str]:
    """The lines of a snippet section of a stage file, markers excluded."""
    source = (ROOT / stage / "agent.py").read_text(encoding="utf-8")
    match = re.search(rf"# --8<-- \[start:{name}\]\n(.*?)# --8<-- \[end:{name}\]", source, re.S)
    assert match, f"{stage}/agent.py has no section {name!r}"
    return match.group(1).splitlines()


def included_sections(chapter: str) -> list[tuple[str, str]]:
    markdown = (DOCS / f"{chapter}.md").read_text(encoding="utf-8")
    return re.findall(r'^--8<-- "(s\d\d)/agent\.py:([\w-]+)"$', markdown, re.M)


# ---------------------------------------------------------------- the build

def test_the_site_builds_in_strict_mode_without_the_network(built_site):
    process, _ = built_site
    assert process.returncode == 0, f"{process.stdout}\n{process.stderr}"


def test_the_hook_is_not_published(site):
    assert not (site / "hooks").exists()


def test_no_placeholder_is_left_in_the_built_pages(site):
    for page in site.rglob("*.html"):
        raw = page.read_text(encoding="utf-8")
        assert not re.search(r"<!--\s*(diff|trace|ladder)\b", raw), f"unexpanded placeholder in {page}"


# ---------------------------------------------------------------- chapters show the code as it is

@pytest.mark.parametrize("stage", sorted(CHAPTERS))
def test_a_chapter_includes_its_stage_code(site, stage):
    chapter = CHAPTERS[stage]
    sections = included_sections(chapter)
    assert sections, f"{chapter}.md includes no code from {stage}/agent.py"
    text = page_text(site, chapter)
    for source_stage, name in sections:
        for line in section(source_stage, name):
            assert line.rstrip() in text, f"{chapter}: line of {source_stage}:{name} missing: {line!r}"


def test_the_loop_chapter_shows_the_while_line_of_s01(site):
    while_line = next(line for line in (ROOT / "s01" / "agent.py").read_text(encoding="utf-8").splitlines()
                      if line.strip() == "while True:")
    assert while_line in page_text(site, "s01-closed-loop")


def test_the_loop_chapter_shows_the_diff_from_s00(site):
    text = page_text(site, "s01-closed-loop")
    diff = load_hook().stage_diff("s00", "s01")
    changed = [line.rstrip() for line in diff.splitlines() if line[:1] in "+-" and line.strip("+- ")]
    assert changed and all(line in text for line in changed)


def test_the_chapters_show_real_traces(site):
    loop = page_text(site, "s01-closed-loop")
    assert "── turn 3 · model" in loop
    assert "answer (end_turn, 3 turns," in loop
    assert "■ guard: still going after 8 model calls" in loop  # offline-looping, cut from outside
    one_call = page_text(site, "s00-one-call")
    assert "answer (tool_use, 2 turns," in one_call  # the report task stops after one round trip
    assert "answer (end_turn, 2 turns," in one_call
    assert "/tmp/" not in loop + one_call  # workspace paths are shown as <workspace>


def test_the_quoted_api_error_is_the_one_the_offline_model_sends(site):
    s01 = importlib.import_module("s01.agent")
    import anthropic

    client = course.make_client("offline")
    messages = [{"role": "user", "content": "List the files"}]
    messages.append(s01.assistant_message(s01.ask(client, "offline", messages)))
    messages.append({"role": "user", "content": "Go on."})
    with pytest.raises(anthropic.BadRequestError) as refused:
        s01.ask(client, "offline", messages)
    assert str(refused.value) in page_text(site, "s01-closed-loop")


def test_the_notebooks_named_in_the_docs_exist():
    named = {name for page in DOCS.glob("*.md")
             for name in re.findall(r"s\d\d/\w+\.ipynb", page.read_text(encoding="utf-8"))}
    assert named
    assert [name for name in sorted(named) if not (ROOT / name).is_file()] == []


# ---------------------------------------------------------------- the hook itself

def test_a_trace_is_what_the_command_line_prints(capsys):
    s01 = importlib.import_module("s01.agent")
    assert s01.main([REPORT_TASK, "--model", "offline"]) == 0
    printed = capsys.readouterr().out
    workspace = re.search(r"^workspace: (.+)$", printed, re.M).group(1)
    assert load_hook().trace("s01", REPORT_TASK) == printed.replace(workspace, "<workspace>")


def test_placeholders_inside_code_blocks_are_left_alone():
    page = textwrap.dedent("""\
        ```markdown
        <!-- trace s01 "List the files" -->
        ```
    """)
    assert load_hook().expand(page) == page


def test_an_indented_placeholder_gives_an_indented_block():
    expanded = load_hook().expand('=== "tab"\n\n    <!-- diff s00 s01 -->\n')
    block = expanded.split("\n\n", 1)[1]
    assert block.startswith("    ```diff\n")
    assert all(line.startswith("    ") for line in block.splitlines() if line.strip())


def test_snippet_markers_in_a_generated_diff_are_escaped():
    diff_block = load_hook().generate("diff", "s00 s01")
    assert "# ;--8<-- [start:" in diff_block  # pymdownx.snippets removes the ';' and keeps the line


@pytest.mark.parametrize("placeholder, complaint", [
    ("<!-- diff s00 s99 -->", "s99/agent.py does not exist"),
    ("<!-- diff s00 -->", "expected <!-- diff sNN sMM -->"),
    ('<!-- trace s01 "List the files" turns=3 -->', "unknown option"),
    ("<!-- trace s01 -->", "expected <!-- trace sNN"),
])
def test_a_placeholder_that_cannot_be_honoured_fails_with_its_place(placeholder, complaint):
    with pytest.raises(PluginError, match=re.escape(complaint)) as failure:
        load_hook().expand(f"# Title\n\n{placeholder}\n", where="chapter.md")
    assert str(failure.value).startswith("chapter.md:3:")


def test_the_ladder_placeholder_fails_without_course_ladder(monkeypatch):
    hook = load_hook()
    real_import = hook.importlib.import_module

    def without_ladder(name, *args):
        if name == "course.ladder":
            raise ModuleNotFoundError("No module named 'course.ladder'", name="course.ladder")
        return real_import(name, *args)

    monkeypatch.setattr(hook.importlib, "import_module", without_ladder)
    with pytest.raises(PluginError, match="course.ladder"):
        hook.expand("<!-- ladder -->\n")
