"""The documentation site: it builds in strict mode, offline, and its pages show the code as it is.

The site is built once per test session (``built_site``) in a subprocess whose network is blocked
like the tests' own. The chapter checks compare the built pages with the stage files and with real
runs, so that prose cannot drift from the code it describes.
"""

from __future__ import annotations

import functools
import html
import http.server
import importlib
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import threading
import typing
from pathlib import Path

import pytest
from mkdocs.exceptions import PluginError

import course
from course.site import pages as renderer
from course.site import questions
from helpers import REPORT_TASK, load_hook

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
CHAPTERS = {"s00": "s00-one-call", "s01": "s01-closed-loop", "s02": "s02-loop-state",
            "s03": "s03-stop-conditions", "s04": "s04-error-feedback", "s05": "s05-pruning",
            "s06": "s06-permission-gates"}

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
    env["AGENT_COURSE_AUDIT_LOG"] = str(tmp_path_factory.mktemp("audit") / "audit.jsonl")
    process = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                             cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
                             stdin=subprocess.DEVNULL)
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


def page_tables(site: Path, page: str) -> list[list[list[str]]]:
    """The tables of a built page's article: each a list of rows, each row a list of cell texts."""
    raw = (site / page / "index.html").read_text(encoding="utf-8")
    article = raw[raw.index("<article"):raw.index("</article>")]
    # A cell's run may end with a link to it in the trace viewer (▶): a link, not the cell's text.
    return [[[html.unescape(re.sub(r"<[^>]+>", "", cell)).strip().removesuffix("▶").strip()
              for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]
             for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)]
            for table in re.findall(r"<table>(.*?)</table>", article, re.S)]


def table_with(site: Path, page: str, first_header: str) -> list[list[str]]:
    """The table of a page whose first column is headed ``first_header``."""
    found = [table for table in page_tables(site, page) if table and table[0][0] == first_header]
    assert found, f"{page} has no table headed {first_header!r}"
    return found[0]


def number(cell: str) -> float:
    return float(cell.replace(",", "").rstrip("×").lstrip("$"))


def answers(text: str) -> list[tuple[str, int, int, int]]:
    """The answer lines of the traces on a page: (stop reason, turns, input tokens, output tokens)."""
    return [(reason, int(turns), int(tokens_in), int(tokens_out)) for reason, turns, tokens_in, tokens_out in
            re.findall(r"answer \((\w+), (\d+) turns?, (\d+) input \+ (\d+) output tokens(?:, and [^)]*)?\)", text)]


def section(stage: str, name: str, module: str = "agent.py") -> list[str]:
    """The lines of a snippet section of a stage's module, markers excluded."""
    source = (ROOT / stage / module).read_text(encoding="utf-8")
    match = re.search(rf"# --8<-- \[start:{name}\]\n(.*?)# --8<-- \[end:{name}\]", source, re.S)
    assert match, f"{stage}/{module} has no section {name!r}"
    # A section may hold another's markers (pymdownx.snippets leaves them out of what it includes).
    return [line for line in match.group(1).splitlines() if not re.match(r"\s*# --8<-- \[(start|end):[\w-]+\]\s*$", line)]


def included_sections(chapter: str) -> list[tuple[str, str, str]]:
    """(stage, module, section) of every code include of a chapter, e.g. ("s06", "gate.py", "parse")."""
    markdown = (DOCS / f"{chapter}.md").read_text(encoding="utf-8")
    return re.findall(r'^--8<-- "(s\d\d)/(\w+\.py):([\w-]+)"$', markdown, re.M)


# ---------------------------------------------------------------- the build

def test_the_site_builds_in_strict_mode_without_the_network(built_site):
    process, _ = built_site
    assert process.returncode == 0, f"{process.stdout}\n{process.stderr}"


def test_the_hook_is_not_published(site):
    assert not (site / "hooks").exists()


def test_no_placeholder_is_left_in_the_built_pages(site):
    kinds = "|".join(load_hook().KINDS)
    for page in site.rglob("*.html"):
        raw = page.read_text(encoding="utf-8")
        assert not re.search(rf"<!--\s*({kinds})\b", raw), f"unexpanded placeholder in {page}"


def test_every_page_is_in_the_navigation():
    """Every English page is in the nav; its Japanese twin (NAME.ja.md) takes its place in the Japanese
    site's nav (mkdocs-static-i18n), so it is not named there."""
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8").split("\nnav:", 1)[1]
    english = {page.name for page in DOCS.glob("*.md") if not page.name.endswith(".ja.md")}
    assert english == set(re.findall(r"[\w-]+\.md", nav))


def test_the_home_page_links_every_chapter_and_promises_none():
    home = (DOCS / "index.md").read_text(encoding="utf-8")
    assert "coming" not in home
    for chapter in CHAPTERS.values():
        assert f"({chapter}.md)" in home


# ---------------------------------------------------------------- chapters show the code as it is

@pytest.mark.parametrize("stage", sorted(CHAPTERS))
def test_a_chapter_includes_its_stage_code(site, stage):
    chapter = CHAPTERS[stage]
    sections = included_sections(chapter)
    assert sections, f"{chapter}.md includes no code from {stage}/agent.py"
    text = page_text(site, chapter)
    for source_stage, module, name in sections:
        for line in section(source_stage, name, module):
            assert line.rstrip() in text, f"{chapter}: line of {source_stage}/{module}:{name} missing: {line!r}"


def reading_path(site: Path, page: str) -> str:
    """A built chapter's article up to its exercises section: what a learner reads as the chapter."""
    raw = (site / page / "index.html").read_text(encoding="utf-8")
    article = raw[raw.index("<article"):raw.index("</article>")]
    exercises = re.search(r'<h2 id="exercises"', article)
    return article[:exercises.start()] if exercises else article


def code_blocks(html_text: str) -> list[str]:
    return [html.unescape(re.sub(r"<[^>]+>", "", block)) for block in re.findall(r"<pre[^>]*>(.*?)</pre>", html_text, re.S)]


@pytest.mark.parametrize("stage", sorted(CHAPTERS))
def test_a_chapter_shows_no_stub_and_no_folded_solution(site, stage):
    raw = (site / CHAPTERS[stage] / "index.html").read_text(encoding="utf-8")
    article = raw[raw.index("<article"):raw.index("</article>")]
    assert not any("NotImplementedError" in block for block in code_blocks(article)), \
        f"{CHAPTERS[stage]} shows a stub in its code"
    assert "NotImplementedError" not in html.unescape(re.sub(r"<[^>]+>", "", reading_path(site, CHAPTERS[stage])))
    assert "reference solution" not in article.lower(), f"{CHAPTERS[stage]} folds a solution away"


@pytest.mark.parametrize("stage", sorted(CHAPTERS))
def test_a_chapter_shows_each_exercise_region_it_includes_as_the_real_code(site, stage):
    from course.grading import exercises

    shown = "\n".join(code_blocks(reading_path(site, CHAPTERS[stage])))
    included = {(module, name) for _, module, name in included_sections(CHAPTERS[stage])}
    for region in exercises.stage_regions(stage):
        source = (ROOT / stage / region.file).read_text(encoding="utf-8").splitlines()
        if not any(source[region.start - 1] in section(stage, name, module)
                   for module, name in included if module == region.file):
            continue  # the chapter does not include the code around this exercise
        for line in source[region.start - 1:region.end]:  # the markers too: they say which lines to write
            assert line.rstrip() in shown, f"{CHAPTERS[stage]}: exercise {region.number}'s line {line!r} is not shown"


# ---------------------------------------------------------------- the three questions

@pytest.mark.parametrize("stage", sorted(CHAPTERS))
def test_a_chapter_ends_with_the_three_questions_answered(site, stage):
    raw = (site / CHAPTERS[stage] / "index.html").read_text(encoding="utf-8")
    article = raw[raw.index("<article"):raw.index("</article>")]
    headings = re.findall(r"<h2[^>]*>(.*?)</h2>", article, re.S)
    assert headings and html.unescape(re.sub(r"<[^>]+>", "", headings[-1])).strip(" ¶\n") == "The three questions"
    last = page_text(site, CHAPTERS[stage]).split("The three questions")[-1]
    for question in ("How does it stop?", "What is the worst it can cost?", "What does a failed tool call return"):
        assert question in last
    module = renderer.stage_module(stage)
    for reason in typing.get_args(getattr(module, "StopReason", None)) or ():
        assert f"{reason}:" in last, f"{CHAPTERS[stage]} does not name the stop reason {reason}"
    if getattr(module, "Limits", None) is None and questions.model_calls_in_run(module) is None:
        assert "There is no bound" in last  # s01, s02: only the model can stop them
    else:
        assert re.search(r"worst case, dollars on claude-[\w-]+\s+\$\d", last)
    assert '"is_error": true' in last and "/tmp/" not in last


@pytest.mark.parametrize("stage", sorted(CHAPTERS))
def test_every_stop_reason_of_a_stage_is_explained(stage):
    module = renderer.stage_module(stage)
    unexplained = set(typing.get_args(getattr(module, "StopReason", None)) or ()) - set(questions.STOP_REASONS)
    assert not unexplained, f"add {sorted(unexplained)} to course/site/questions.py's STOP_REASONS"


def worst_dollars(markdown: str) -> float:
    return float(re.search(r"worst case, dollars on `[^`]+` \| \*\*\$([\d.,]+)\*\*", markdown)[1].replace(",", ""))


def test_the_worst_case_is_priced_from_the_price_list(monkeypatch):
    from course.runtime import prices

    model = questions.priced_model()
    before = worst_dollars(renderer.render("three-questions", "s03"))
    price = prices.PRICES[model]
    monkeypatch.setitem(prices.PRICES, model, prices.Price(input=price.input * 3, output=price.output * 3,
                                                          cache_write=price.cache_write * 3, cache_read=price.cache_read * 3))
    after = worst_dollars(renderer.render("three-questions", "s03"))
    assert after == pytest.approx(3 * before, rel=0.01)


def test_the_worst_case_of_s03_follows_its_limits_and_max_tokens(monkeypatch):
    from course.runtime import prices
    from course.offline import DEFAULT_CONTEXT_WINDOW

    module = renderer.stage_module("s03")
    limits, price = module.Limits(), prices.price_of(questions.priced_model())
    for max_tokens in (module.MAX_TOKENS, 4 * module.MAX_TOKENS):
        monkeypatch.setattr(module, "MAX_TOKENS", max_tokens)
        shown = renderer.render("three-questions", "s03")
        # A run stops at the first turn that finds the budget spent: under it before, plus one whole call.
        tokens = limits.token_budget - 1 + DEFAULT_CONTEXT_WINDOW + max_tokens
        output = min(limits.token_budget - 1, (limits.max_turns - 1) * max_tokens) + max_tokens
        assert f"worst case, tokens | **{tokens:,}**" in shown
        expected = ((tokens - output) * price.input + output * price.output) / prices.MILLION
        assert worst_dollars(shown) == pytest.approx(expected, abs=0.005)


@pytest.mark.parametrize("stage", ["s04", "s05"])
def test_the_worst_case_stops_at_the_token_budget_plus_the_last_turn(stage, monkeypatch):
    """Output is counted in the budget: before the last turn, at most the budget's worth; then one turn's calls."""
    import dataclasses

    from course.runtime import prices
    from course.offline import DEFAULT_CONTEXT_WINDOW

    module = renderer.stage_module(stage)
    price = prices.price_of(questions.priced_model())
    rate = questions.input_price(module, price)[0]
    last_output = sum(questions.asked_in_one_turn(stage, module)) + module.MAX_TOKENS * len(questions.other_model_calls(module))
    last_calls = len(questions.asked_in_one_turn(stage, module)) + len(questions.other_model_calls(module))
    shown = {}
    for budget in (module.Limits().token_budget, module.Limits().token_budget // 3):
        monkeypatch.setattr(module, "Limits", dataclasses.make_dataclass(
            "Limits", [("token_budget", int, dataclasses.field(default=budget))], bases=(module.Limits,), frozen=True))
        tokens = budget - 1 + last_calls * DEFAULT_CONTEXT_WINDOW + last_output
        output = budget - 1 + last_output  # 40 turns could write more than the budget lets through
        expected = ((tokens - output) * rate + output * price.output) / prices.MILLION
        shown[budget] = worst_dollars(renderer.render("three-questions", stage))
        assert shown[budget] == pytest.approx(expected, abs=0.005)
    smaller, default = sorted(shown)
    assert shown[default] - shown[smaller] == pytest.approx((default - smaller) * price.output / prices.MILLION, abs=0.01)


def test_a_turn_limit_tighter_than_the_budget_bounds_the_worst_case(monkeypatch):
    import dataclasses

    module = renderer.stage_module("s04")
    monkeypatch.setattr(module, "Limits", dataclasses.make_dataclass(
        "Limits", [("max_turns", int, dataclasses.field(default=1))], bases=(module.Limits,), frozen=True))
    shown = renderer.render("three-questions", "s04")
    ladder = questions.asked_in_one_turn("s04", module)
    from course.offline import DEFAULT_CONTEXT_WINDOW
    turn = len(ladder) * DEFAULT_CONTEXT_WINDOW + sum(ladder)
    # One turn of four calls at a full window is less than the budget plus that turn: the turns bound it.
    assert f"worst case, tokens | **{turn:,}**" in shown


def test_a_turn_that_asks_again_with_more_room_is_counted_whole():
    from course.lab import ladder

    s04 = ladder.load_stage("s04")
    asked = questions.asked_in_one_turn("s04", s04)
    assert asked[0] == s04.MAX_TOKENS and asked[-1] == s04.MAX_TOKENS_CEILING and len(asked) > 1
    assert "+".join(f"{n:,}" for n in asked).replace("+", " + ") in renderer.render("three-questions", "s04")


def test_the_loop_chapter_shows_the_while_line_of_s01(site):
    while_line = next(line for line in (ROOT / "s01" / "agent.py").read_text(encoding="utf-8").splitlines()
                      if line.strip() == "while True:")
    assert while_line in page_text(site, "s01-closed-loop")


def test_the_loop_chapter_shows_the_diff_from_s00(site):
    text = page_text(site, "s01-closed-loop")
    diff = renderer.stage_diff("s00", "s01")
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
    # The SDK's wording around it changes between releases (and carries each response's own request id):
    # the page shows the status and the API's own message, as the installed SDK prints them.
    shown = page_text(site, "s01-closed-loop")
    assert refused.value.status_code == 400 and refused.value.body["error"]["message"] in shown


# ---------------------------------------------------------------- what the prose of s02-s04 says about its runs

def test_the_state_chapter_shows_transitions_and_the_outage_s01_loses(site):
    text = page_text(site, "s02-loop-state")
    assert text.count("↻ continue: tool_results_written") >= 2
    assert ("end_turn", 3) in [answer[:2] for answer in answers(text)]
    # The seeded outage: s01 wrote report.txt, then lost the run to the error; s02 stops and says why.
    crash = text.index("error: the API answered 529")
    assert text.rindex("wrote", 0, crash) > text.rindex("── turn 1 · model", 0, crash)
    stopped = [answer for answer in answers(text) if answer[0] == "api_error"]
    assert stopped and stopped[0][1] >= 1, "the outage should strike after at least one turn"
    outage = {row[0]: row[1:] for row in table_with(site, "ladder", "scenario")}["outage"]
    stages = table_with(site, "ladder", "scenario")[0][1:]
    assert all("crashed" in outage[stages.index(stage)] for stage in ("s00", "s01"))  # the cell may add a symbol
    # From s02 on, the ladder resumes the stopped run (its transcript) as the API recovers.
    assert all(cell.startswith("completed") for cell in outage[stages.index("s02"):])


def test_the_stop_chapter_shows_each_stop(site):
    text = page_text(site, "s03-stop-conditions") + page_text(site, "s03-bills-and-logs")  # the rarer ones in depth
    reasons = [answer[0] for answer in answers(text)]
    for reason in ("end_turn", "no_progress", "max_turns", "token_budget", "max_tokens", "refusal"):
        assert reason in reasons, f"no trace ends with {reason}"
    limits = importlib.import_module("s03.agent").Limits()
    assert f"called {limits.max_repeats} times in a row" in text
    assert f"the last {limits.max_consecutive_errors} tool calls failed" in text
    assert ("max_turns", 3) in [answer[:2] for answer in answers(text)]  # max_turns=3 in the placeholder
    assert ("max_tokens", 1) in [answer[:2] for answer in answers(text)]
    assert "answer (max_tokens, 1 turn," in text  # one turn, not "1 turns"


def test_the_stop_chapter_states_the_defaults_of_the_code(site):
    limits = importlib.import_module("s03.agent").Limits()
    rows = table_with(site, "s03-bills-and-logs", "limit")[1:]  # why these defaults, in depth
    stated = {row[0]: int(row[1].replace(",", "")) for row in rows}
    assert stated == {name: getattr(limits, name) for name in stated}
    assert set(stated) == {"max_turns", "token_budget", "max_repeats", "max_consecutive_errors"}


def test_the_stop_chapter_shows_what_the_stops_save(site):
    rows = {row[0]: row[1:] for row in table_with(site, "s03-bills-and-logs", "scenario")[1:]}
    for scenario in ("looping", "long-budget"):
        before, after = rows[scenario]
        assert "runaway" in before and "stopped" in after  # the cell may add a symbol
        billed = [number(re.search(r"([\d,]+) input tokens", cell).group(1)) for cell in (before, after)]
        assert billed[1] < billed[0]


def test_the_bill_grows_with_the_square_of_the_turns(site):
    """The prose of s03 reads this table: per-call input grows linearly, the history part about
    quadruples when the turns double, the bill's ratio climbs towards four, the formula lands close."""
    calls = table_with(site, "s03-bills-and-logs", "model call")[1:]
    added = [number(row[2]) for row in calls[2:]]
    assert added and max(added) - min(added) <= 0.5 * max(added)  # about the same each turn
    assert number(calls[-1][3]) == sum(number(row[1]) for row in calls)
    header, *rows = table_with(site, "s03-bills-and-logs", "turns N")
    turns = [int(row[0]) for row in rows]
    assert all(later == 2 * earlier for earlier, later in zip(turns, turns[1:]))
    bill_ratios = [number(row[header.index("billed ÷ row above")]) for row in rows[1:]]
    history_ratios = [number(row[header.index("history ÷ row above")]) for row in rows[1:]]
    assert all(3.5 <= ratio <= 5 for ratio in history_ratios)
    assert bill_ratios == sorted(bill_ratios) and all(2 < ratio < 4 for ratio in bill_ratios)
    for row in rows:
        formula, billed = number(row[header.index("N·T0 + t·N²/2")]), number(row[header.index("input billed")])
        assert abs(formula - billed) <= 0.1 * billed


def test_the_stop_chapter_shows_the_stats_of_its_runs(site):
    text = page_text(site, "s03-bills-and-logs")
    assert "runs log: runs/runs.jsonl" in text and "/tmp/" not in text
    for line in ("cut off (any stop but end_turn):", "stop reason", "tool              calls  errors  failed"):
        assert line in text


def test_the_error_chapter_puts_bare_and_actionable_errors_side_by_side(site):
    text = page_text(site, "s04-error-feedback") + page_text(site, "s04-in-depth")  # two there, three more in depth
    bare = re.findall(r"^✗ (Error: .*)$", text, re.M)
    actionable = [json.loads(line) for line in re.findall(r"^✗ (\{.*\})$", text, re.M)]
    assert len(bare) >= 5 and len(actionable) >= 5
    assert all(set(error) == {"ok", "error", "message", "hint"} and error["ok"] is False for error in actionable)
    assert "nearest existing names: memo.md" in text


def test_the_error_chapter_compares_the_same_scenario_on_both_stages(site):
    text = page_text(site, "s04-error-feedback")
    start = text.index("The same mistake, the two kinds of error")
    pair = text[start:text.index("A long result, cut with a marker")]
    (bare, actionable) = answers(pair)
    assert bare[0] == "no_progress" and actionable[0] == "end_turn"
    assert actionable[1] <= bare[1]                   # no more turns than the bare error spends failing
    assert actionable[2] <= 1.5 * bare[2]             # "about as much"
    assert pair.count("\n   ✗ ") == 3 + 1             # three failures on s03, one on s04
    header, *rows = table_with(site, "s04-error-feedback", "stage")
    assert [(row[0], row[1], int(row[2]), number(row[3]), number(row[4])) for row in rows] == [
        ("s03", *bare), ("s04", *actionable)]


def test_the_error_chapter_shows_text_calls_recovered_and_missed(site):
    text = page_text(site, "s04-error-feedback")
    assert ("end_turn", 1) in [answer[:2] for answer in answers(text)]  # s03 takes the text for an answer
    assert "↻ continue: text_calls_recovered" in text
    rows = table_with(site, "s04-in-depth", "the reply's text")[1:]  # which text counts as a call, in depth
    runs = [row[2] for row in rows]
    assert all(found != "nothing" for found in runs[:4]) and runs[4:] == ["nothing"] * (len(runs) - 4)
    assert "[cut: " in text and "characters not shown" in text


def test_the_pruning_chapter_shows_the_benchmark_it_ran(site):
    raw = (site / "s05-bench" / "index.html").read_text(encoding="utf-8")
    assert 'src="data:image/svg+xml;base64,' in raw  # the plot, drawn at build time, on the depth page
    rows = {row[0]: row for row in table_with(site, "s05-pruning", "run")[1:]}
    assert list(rows) == ["s03", "s04", "s04+cache", "s04+clearing", "s04+compaction", "s05-every-turn", "s05"]
    assert rows["s05"][1] == "yes"
    assert number(rows["s05"][2]) < number(rows["s04"][2])  # the tokens sent, with and without pruning
    assert number(rows["s05"][5]) < number(rows["s04+cache"][5])  # the dollars, both cached
    text = " ".join(page_text(site, "s05-pruning").split())
    assert re.search(r"the cache-aware s05 costs \d+% of what s04 costs .*and this run gets there\.", text)
    assert re.search(r"Without caching, s05 would be billed for [\d.]+% of s04's input tokens", text)


def test_the_server_side_page_compares_s05_with_the_apis_own_pruning_in_dollars(site):
    rows = {row[0]: row for row in table_with(site, "s05-server-side", "run")[1:]}
    assert {"s04+clearing", "s04+compaction", "s05"} <= set(rows) and rows["s04+compaction"][1] == "yes"
    text = " ".join(page_text(site, "s05-server-side").split())
    assert re.search(r"Beside the API's own pruning on s04, the cache-aware s05 costs \$[\d.]+, against", text)


def test_the_instructors_guide_lists_every_exercise_of_the_code(site):
    from course.grading import exercises

    rows = table_with(site, "instructors", "stage")[1:]
    listed = {(row[0], row[1], row[2]) for row in rows if row[1]}
    for agent in sorted(ROOT.glob("s[0-9][0-9]/agent.py")):
        stage = agent.parent.name
        try:
            regions = exercises.stage_regions(stage)
        except course.CourseError:
            continue  # the table shows the refusal instead (another test would pin the markers)
        for region in regions:
            assert (stage, str(region.number), region.title) in listed


def test_the_ladder_page_shows_every_scenario_and_stage(site):
    from course.lab import ladder, scenarios

    header, *rows = table_with(site, "ladder", "scenario")
    assert header[1:] == ladder.stage_names()
    assert [row[0] for row in rows] == [scenario.name for scenario in scenarios.SCENARIOS]


def test_the_notebooks_named_in_the_docs_exist():
    named = {name for page in DOCS.glob("*.md")
             for name in re.findall(r"s\d\d/\w+\.ipynb", page.read_text(encoding="utf-8"))}
    assert named
    assert [name for name in sorted(named) if not (ROOT / name).is_file()] == []


# ---------------------------------------------------------------- the hook and the renderer

def test_a_trace_is_what_the_command_line_prints(capsys):
    s01 = importlib.import_module("s01.agent")
    assert s01.main([REPORT_TASK, "--model", "offline"]) == 0
    printed = capsys.readouterr().out
    workspace = re.search(r"^workspace: (.+)$", printed, re.M).group(1)  # a page names the folder <workspace>
    assert renderer.trace("s01", REPORT_TASK) == printed.replace(workspace, "<workspace>")


def test_a_stopped_run_ends_with_the_answer_lines_of_the_command_line(capsys):
    """The stop's explanation and the cache's tokens, as course.running.cli.answer_text prints them; no
    transcript line, since a page's run is saved nowhere."""
    task = "Add up the amounts in every file of the ledger folder"
    printed = renderer.trace("s03", task, model="offline-long-20", ledger=18, max_turns=5)
    answer = printed[printed.index("\nanswer (max_turns, 5 turns, "):]
    assert re.search(r"^stopped: .+$", answer, re.M) and "transcript:" not in answer
    cached = renderer.trace("s05", None, scenario="flood")
    assert re.search(r"output tokens, and \d+ read from the cache \+ \d+ written to it\):", cached)


def test_a_page_run_writes_no_runs_log_no_transcript_and_no_audit_log(tmp_path, monkeypatch):
    for variable, name in (("AGENT_COURSE_RUNS_LOG", "runs.jsonl"), ("AGENT_COURSE_TRANSCRIPTS", "transcripts"),
                           ("AGENT_COURSE_AUDIT_LOG", "audit.jsonl")):
        monkeypatch.setenv(variable, str(tmp_path / name))
    renderer.start_build()  # no run of an earlier test reused: these run now
    renderer.trace("s06", REPORT_TASK)
    renderer.render("compare", "s06 s06 list")
    assert renderer.stats_report("s03").startswith("runs log: runs/runs.jsonl")
    assert [name for name in ("runs.jsonl", "transcripts", "audit.jsonl") if (tmp_path / name).exists()] == []


def test_the_renderer_needs_no_mkdocs():
    blocked = "import sys; sys.modules['mkdocs'] = None; import course.site.pages; print(course.site.pages.render('diff', 's00 s01')[:3])"
    shown = subprocess.run([sys.executable, "-c", blocked], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0 and shown.stdout == "???\n", shown.stderr


def test_the_hook_is_glue_and_stays_short():
    lines = (DOCS / "hooks" / "generate.py").read_text(encoding="utf-8").splitlines()
    assert len(lines) < 200
    assert not [line for line in lines if re.match(r"\s*def (trace|run|render|fenced|markdown_table)\b", line)]


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
    assert block.startswith('    ??? abstract "s00/agent.py → s01/agent.py: ')  # folded away, in the tab
    assert "\n        ```diff\n" in block
    assert all(line.startswith("    ") for line in block.splitlines() if line)


def test_a_generated_diff_leaves_out_the_snippet_markers():
    assert "# --8<-- [start:" in (ROOT / "s01" / "agent.py").read_text(encoding="utf-8")
    diff_block = renderer.render("diff", "s00 s01")
    assert "--8<--" not in diff_block


@pytest.mark.parametrize("placeholder, complaint", [
    ("<!-- diff s00 s99 -->", "s99/agent.py does not exist"),
    ("<!-- diff s00 -->", "expected <!-- diff sNN sMM -->"),
    ('<!-- trace s01 "List the files" turns=3 -->', "unknown option"),
    ('<!-- trace s01 "List the files" max_turns=3 -->', "not a parameter of s01's run()"),
    ("<!-- trace s01 -->", "expected <!-- trace sNN"),
    ('<!-- trace s02 "List the files" faults=2 -->', "faults must be a share"),
    ('<!-- trace s02 "List the files" seed=3 -->', "seed=N goes with faults=RATE"),
    ("<!-- trace s03 scenario=looping model=offline -->", "a scenario sets its own task"),
    ("<!-- trace s03 scenario=nowhere -->", "no scenario is called 'nowhere'"),
    ('<!-- tokens s03 "List the files" cap=0 -->', "cap must be a positive whole number"),
    ("<!-- growth s03 turns=2,4 -->", "at least 3"),
    ('<!-- tool s04 read_file {"path": -->', "the arguments are not JSON"),
    ('<!-- tool s04 read_file {"path": "memo.md"} tail=x -->', "unknown option"),
    ("<!-- textcalls s00 -->", "s00/agent.py has no calls_written_as_text()"),
    ("<!-- compare s02 -->", "expected <!-- compare sNN sMM SCENARIO"),
    ("<!-- stats s99 -->", "s99/agent.py does not exist"),
    ("<!-- exercises now -->", "takes no arguments"),
])
def test_a_placeholder_that_cannot_be_honoured_fails_with_its_place(placeholder, complaint):
    with pytest.raises(PluginError, match=re.escape(complaint)) as failure:
        load_hook().expand(f"# Title\n\n{placeholder}\n", where="chapter.md")
    assert str(failure.value).startswith("chapter.md:3:")


def test_a_renderer_that_crashes_fails_the_build_with_its_place(monkeypatch):
    hook = load_hook()
    monkeypatch.setattr(renderer, "scenario_table", lambda: 1 / 0)
    with pytest.raises(PluginError, match=r"^chapter.md:2: scenarios failed: ZeroDivisionError"):
        hook.expand("# Title\n<!-- scenarios -->\n", where="chapter.md")


def test_an_exercise_section_that_is_not_there_fails_with_its_place(tmp_path):
    class Page:
        class file:
            src_uri = "chapter.md"
    with pytest.raises(PluginError, match=r"^chapter.md:3: s01/agent.py has no section 'nowhere'"):
        load_hook().on_page_markdown('# Title\n\n```python\n--8<-- "s01/agent.py:nowhere"\n```\n', Page, None, None)


def test_a_token_table_lists_every_call_and_adds_up_the_bill():
    table = renderer.token_table("s01", REPORT_TASK)
    rows = [line.strip("|").split("|") for line in table.splitlines()[2:]]
    billed = int(re.search(r"(\d+) input \+", renderer.trace("s01", REPORT_TASK)).group(1))
    assert len(rows) == 3 and int(rows[-1][3].replace(",", "")) == billed


def test_a_tool_placeholder_shows_what_the_dispatcher_answers(workspace):
    s04 = importlib.import_module("s04.agent")
    text, is_error = s04.run_tool(workspace, "read_file", {"path": "meom.md"})
    shown = renderer.render("tool", 's04 read_file {"path": "meom.md"}')
    assert is_error and f"✗ {text}" in shown


def test_an_outage_in_a_trace_is_printed_as_the_command_line_prints_it():
    printed = renderer.trace("s01", "List the files", faults=1.0)
    assert printed.strip() == "error: the API answered 529: Overloaded (the API is overloaded; retry later)"


def test_a_scenario_trace_runs_the_scenario():
    from course.lab import scenarios

    printed = renderer.trace("s03", None, scenario="looping")
    assert scenarios.scenario_named("looping").task
    assert "answer (no_progress," in printed


def test_a_shortened_trace_says_how_much_it_left_out():
    line = renderer.shortened("x" * 50 + "\n", 10)
    assert line == "xxxxxxxxxx… (40 more characters on this line, left out on this page)\n"
    assert renderer.shortened("short\n", 10) == "short\n"


def test_text_call_samples_are_shown_without_markup():
    table = renderer.render("textcalls", "s04")
    assert "<tool_call>" not in table and "&lt;tool&#95;call&gt;" in table
    assert "&#96;&#96;&#96;json" in table


# ---------------------------------------------------------------- the built site in a browser, with no network

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"]
WIDTH = 1280  # the width a learner's laptop shows the site at

# Served beside the site: loads each page in a frame 1280 px wide, waits for its diagrams, and writes
# what it measured into its own page, which Chromium's --dump-dom prints.
PROBE = """<!doctype html><html><body><pre id="result">waiting</pre><script>
const pages = %(pages)s, width = %(width)d, result = {};
function measure(frame) {
  const page = frame.contentDocument, view = frame.contentWindow;
  const hosts = [...page.querySelectorAll("div.mermaid")];
  const clipped = [...page.querySelectorAll("article pre > code")].filter(c => c.scrollWidth > c.clientWidth + 1);
  const tables = [...page.querySelectorAll("article .md-typeset__scrollwrap")].filter(t => t.scrollWidth > t.clientWidth + 1);
  return {drawn: hosts.filter(h => h.shadowRoot && h.shadowRoot.querySelector("svg")).length,
          mermaid: typeof view.mermaid,
          clipped: clipped.map(c => c.textContent.slice(0, 60)), tables: tables.length,
          outside: view.performance.getEntriesByType("resource").map(e => e.name)
                       .filter(name => !name.startsWith(location.origin))};
}
function load(index) {
  if (index === pages.length) { document.getElementById("result").textContent = JSON.stringify(result); return; }
  const frame = document.createElement("iframe");
  frame.style.width = width + "px"; frame.style.height = "2000px";
  frame.onload = () => {
    let waited = 0;
    const poll = setInterval(() => {
      const seen = measure(frame);
      waited += 100;
      if (seen.drawn >= pages[index][1] || waited > 8000) {
        clearInterval(poll); result[pages[index][0]] = seen; frame.remove(); load(index + 1);
      }
    }, 100);
  };
  frame.src = pages[index][0];
  document.body.appendChild(frame);
}
load(0);
</script></body></html>"""


@pytest.fixture(scope="module")
def browser_view(site, tmp_path_factory):
    """What headless Chromium saw on every page with a diagram, the ladder and the chapters, at 1280 px."""
    if CHROMIUM is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium); the site was not checked in a browser")
    chapters = [f"{CHAPTERS[stage]}/" for stage in sorted(CHAPTERS)]
    diagrams = {page: (site / page / "index.html").read_text(encoding="utf-8").count('class="mermaid"')
                for page in chapters + ["ladder/"]}
    pages = [[f"/site/{page}", count] for page, count in diagrams.items()]

    serve = tmp_path_factory.mktemp("serve")
    (serve / "site").symlink_to(site)
    (serve / "probe.html").write_text(PROBE % {"pages": json.dumps(pages), "width": WIDTH}, encoding="utf-8")
    handler = functools.partial(QuietHandler, directory=str(serve))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            shown = subprocess.run(
                [CHROMIUM, *CHROMIUM_FLAGS, f"--window-size={WIDTH},900", "--virtual-time-budget=60000",
                 f"--user-data-dir={tmp_path_factory.mktemp('chromium')}", "--dump-dom",
                 f"http://127.0.0.1:{server.server_address[1]}/probe.html"],
                capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        finally:
            server.shutdown()
    found = re.search(r'<pre id="result">(.*?)</pre>', shown.stdout, re.S)
    assert found and found[1] != "waiting", f"the probe page did not finish in Chromium:\n{shown.stderr[-2000:]}"
    seen = json.loads(html.unescape(found[1]))
    return {page.removeprefix("/site/"): dict(seen[page], expected=count) for page, count in pages}


# Material draws each diagram into a closed shadow root, out of a probe's sight; the pages are served
# with this first script, which opens them, so that the probe can see the SVG inside.
OPEN_SHADOW_ROOTS = ("<script>const attach = Element.prototype.attachShadow; Element.prototype.attachShadow = "
                     "function (options) { return attach.call(this, {...options, mode: 'open'}); };</script>")


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def send_head(self):
        path = Path(self.translate_path(self.path))
        page = path / "index.html" if path.is_dir() else path
        if not self.path.startswith("/site/") or page.suffix != ".html" or not page.is_file():
            return super().send_head()
        body = page.read_bytes().replace(b"<head>", b"<head>" + OPEN_SHADOW_ROOTS.encode(), 1)
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)

    def log_message(self, *args):
        pass


def test_every_diagram_is_drawn_with_no_network(site, browser_view):
    if not (site / "assets" / "javascripts" / "mermaid.min.js").is_file():
        if shutil.which("npm") is None:
            pytest.skip("npm is absent, so make install could not vendor mermaid: the diagrams need the network")
        pytest.fail("the site has no vendored mermaid: run make install (it fetches the pinned version with npm)")
    assert sum(view["expected"] for view in browser_view.values()) >= len(CHAPTERS), "the chapters lost their diagrams"
    for page, view in browser_view.items():
        assert view["drawn"] == view["expected"], (
            f"{page}: {view['drawn']} of {view['expected']} diagrams became an SVG (mermaid is {view['mermaid']}; "
            f"run make install, which vendors it)")
        assert view["outside"] == [], f"{page} asked for something beyond the site: {view['outside']}"


def test_stage_code_and_the_ladder_are_not_clipped_at_1280_px(browser_view):
    for page, view in browser_view.items():
        assert view["clipped"] == [], f"{page}: code cut off at the right edge at {WIDTH} px: {view['clipped']}"
        assert view["tables"] == 0, f"{page}: a table scrolls sideways at {WIDTH} px"


@pytest.mark.parametrize("stage", sorted(CHAPTERS))
def test_diffs_are_folded_away_and_show_no_snippet_markers(site, stage):
    # A chapter's diff is on its page, or on its depth page when the chapter is a reading without it (s03).
    pages = [CHAPTERS[stage]] + [path.stem for path in DOCS.glob(f"{stage}-*.md")
                                 if path.stem != CHAPTERS[stage] and not path.name.endswith(".ja.md")]
    raw = "".join((site / page / "index.html").read_text(encoding="utf-8") for page in pages)
    diffs = re.findall(r"<details([^>]*)>\s*<summary>s\d\d/agent\.py → s\d\d/agent\.py: ", raw)
    if stage != "s00":
        assert diffs, f"{CHAPTERS[stage]} shows no diff from the stage before"
    assert all("open" not in attributes for attributes in diffs), "a diff is open by default"
    assert "--8<--" not in page_text(site, CHAPTERS[stage])


NUMBER_WORDS = {"Two": 2, "Three": 3, "Four": 4, "Five": 5, "Six": 6, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


@pytest.mark.parametrize("page", sorted(path.name for path in DOCS.glob("*.md")))
def test_a_list_announced_with_a_number_has_that_many_items(page):
    text = (DOCS / page).read_text(encoding="utf-8")
    # "Four things about that call:" then a list; the sentence is the announcement, its colon ends it.
    announced = re.finditer(r"(?:^|\. )(?P<word>" + "|".join(NUMBER_WORDS) + r")\b[^.:\n]*:\n\n"
                            r"(?P<items>(?:- .*\n(?:  .*\n)*)+)", text, re.M)
    for match in announced:
        items = len(re.findall(r"^- ", match["items"], re.M))
        line = text.count("\n", 0, match.start()) + 1
        assert items == NUMBER_WORDS[match["word"]], f"{page}:{line} announces {match['word']} and lists {items}"


# ---------------------------------------------------------------- the articles, by name

# "seed 000", "seeds", "the seed article": internal names of the articles. A random seed (`seed=3`,
# `--seed 2`, "seeded faults") is fine.
INTERNAL_LABEL = re.compile(r"(?<!--)\bseeds?\b(?!\s*=)(?!\s+\d\b)|\bsource articles?\b", re.I)
ARTICLES = ("Building an agent loop yourself: the minimal form of tool calling",
            "An AI agent is a while loop inside: built from scratch and measured how it breaks",
            "learn-claude-code",
            "Building an AI agent without a framework: Python and function calling")


PAGES = sorted(path.stem for path in DOCS.glob("*.md"))
# Its chapter is being rewritten on another branch, which is to name the article there too.
@pytest.mark.parametrize("page", PAGES)
def test_no_page_names_an_article_by_an_internal_label(site, page):
    english = page.removesuffix(".ja")
    name = ("ja/" if page.endswith(".ja") else "") + ("" if english == "index" else english)
    raw = (site / name / "index.html").read_text(encoding="utf-8")
    text = html.unescape(re.sub(r"<[^>]+>", "", raw[raw.index("<article"):raw.index("</article>")]))
    found = [match.group(0) for match in INTERNAL_LABEL.finditer(text)]
    assert not found, f"{page} says {found}: name the article by its title (see the Sources page)"


def test_the_sources_page_names_each_article_with_what_it_measured_and_what_the_course_took(site):
    text = page_text(site, "sources")
    for title in ARTICLES:
        assert title in text
    assert text.count("What the course took.") == len(ARTICLES)


def test_the_tutor_is_introduced_where_a_learner_first_meets_it():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8").split("\nnav:", 1)[1]
    for page in re.findall(r"[\w-]+\.md", nav):
        text = (DOCS / page).read_text(encoding="utf-8")
        if "tutor" in text:
            first = text.index("tutor")
            assert "calls **the tutor**" in text[max(0, first - 40):first + 20], (
                f"{page} is the first page to mention the tutor; say there what it is")
            break


# ---------------------------------------------------------------- commands that work as printed

BARE_PYTHON = re.compile(r"(?<![/\w.-])python3? (?:-m course\b|s\d\d/)")  # `.venv/bin/python ...` is fine
@pytest.mark.parametrize("page", sorted(path.name for path in DOCS.glob("*.md")) + ["README.md"])
def test_every_command_shown_runs_the_course_python_from_the_repository_root(page):
    text = (ROOT / page if page == "README.md" else DOCS / page).read_text(encoding="utf-8")
    bare = [line.strip() for line in text.splitlines() if BARE_PYTHON.search(line)]
    assert not bare, f"{page}: a bare python has neither the course nor anthropic; write .venv/bin/python: {bare}"


@pytest.mark.parametrize("stage", sorted(CHAPTERS))
def test_a_stage_says_how_to_run_it_with_the_course_python(stage):
    docstring = importlib.import_module(f"{stage}.agent").__doc__
    assert not BARE_PYTHON.search(docstring), f"{stage}/agent.py's docstring tells a bare python to run it"


def test_every_page_switches_to_the_same_page_in_the_other_language(site):
    """mkdocs-static-i18n: each page links to its twin under /ja/ (and back), and that page exists."""
    pages = [page for page in site.rglob("index.html") if not {"assets", "search"} & set(page.relative_to(site).parts)]
    assert len(pages) >= 2 * len([name for name in DOCS.glob("*.md") if not name.name.endswith(".ja.md")])
    for page in pages:
        japanese = page.relative_to(site).parts[0] == "ja"
        other = "en" if japanese else "ja"
        links = re.findall(rf'href="([^"]+)"[^>]*hreflang="{other}"', page.read_text(encoding="utf-8"))
        assert links, f"{page.relative_to(site)} has no switch to {other}"
        target = (page.parent / links[0]).resolve() / "index.html"
        expected = site / Path(*page.relative_to(site).parts[japanese:]) if japanese else site / "ja" / page.relative_to(site)
        assert target == expected.resolve(), f"{page.relative_to(site)} switches to {target}, not its twin"


def test_a_japanese_query_finds_the_stop_chapter_and_the_switch_leads_to_its_twin(site, tmp_path):
    """Search on the Japanese home page (lunr.ja splits 停止条件 into words) lists the s03 chapter's
    Japanese page first; the language switch on that chapter leads to the English chapter."""
    if CHROMIUM is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium); the site was not checked in a browser")
    from test_viewer_in_a_browser import Browser  # Chromium over the DevTools protocol, as a reader's keys press

    handler = functools.partial(QuietHandler, directory=str(site))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        origin = f"http://127.0.0.1:{server.server_address[1]}"
        browser = Browser(tmp_path)
        try:
            browser.open(f"{origin}/ja/")
            browser.evaluate("""(() => { const box = document.querySelector("input[data-md-component=search-query]");
                box.focus(); box.value = "停止条件"; box.dispatchEvent(new Event("input", {bubbles: true})); })()""")
            links = poll(lambda: browser.evaluate(
                "[...document.querySelectorAll('.md-search-result__item a')].map(a => new URL(a.href).pathname)"))
            assert "/ja/s03-stop-conditions/" in links
            assert all(link.startswith("/ja/") for link in links[:3]), links  # the Japanese pages come first

            # The first result opens the chapter; its language switch leads to the English chapter.
            browser.evaluate("document.querySelector('.md-search-result__item a').click()")
            assert poll(lambda: browser.evaluate("location.pathname === '/ja/s03-stop-conditions/' "
                                                 "&& document.readyState === 'complete' && document.documentElement.lang")) == "ja"
            browser.evaluate("document.querySelector('a[hreflang=en]').click()")
            assert poll(lambda: browser.evaluate("location.pathname === '/s03-stop-conditions/' "
                                                 "&& document.readyState === 'complete' && document.documentElement.lang")) == "en"
        finally:
            browser.close()
            server.shutdown()


def poll(ask, seconds: float = 10.0):
    """What ``ask()`` answers once it answers something (the page's script runs on its own time). A question
    put while a click is loading the next page is answered by Chromium with "Inspected target navigated or
    closed": that is no answer yet, and it is asked again."""
    import time
    deadline = time.monotonic() + seconds
    while True:
        try:
            answer = ask()
        except AssertionError as error:
            if "navigated or closed" not in str(error):
                raise
            answer = None
        if answer or time.monotonic() >= deadline:
            return answer
        time.sleep(0.05)
