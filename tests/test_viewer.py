"""The trace viewer (course/viewer/pages.py): a run read into turns, from a transcript or from the site's
recording of the trace, and written as a page that shows everything in it as data."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import course
from course.lab import ladder
from course.runtime import prices, transcript
from course.site import pages as site
from course.viewer import pages as viewer
from course.__main__ import main as course_main
from helpers import REPORT_TASK, load_stage, scripted_client

MARKUP = '<script>document.title="pwned"</script><img src=x onerror="document.title=\'pwned\'"><!-- </script> -->'


def embedded(page_text: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="run-data">(.*?)</script>', page_text, re.S)[1])


def prompt(usage: dict) -> int:
    return prices.prompt_tokens(usage)


@pytest.mark.stage("s03")
def test_a_transcript_shows_each_turn_with_its_tokens_and_its_stop(tmp_path):
    s03 = load_stage("s03")
    result = s03.run(REPORT_TASK, model="offline", transcript=tmp_path / "run.jsonl", runs_log=False)
    view = viewer.read_transcript(tmp_path / "run.jsonl")
    assert len(view["turns"]) == result.turns
    assert view["totals"]["input"] == prompt(result.usage)
    assert view["totals"]["output"] == result.usage["output_tokens"]
    assert view["end"] == {"state": "stopped", "reason": result.stop_reason, "answer": result.answer,
                           "explanation": viewer.STOP_GLOSSES["end_turn"]}
    called = [block["name"] for message in result.messages if message["role"] == "assistant"
              for block in message["content"] if block["type"] == "tool_use"]
    assert [block["name"] for turn in view["turns"] for block in turn["blocks"] if block["type"] == "tool_use"] == called
    grown = [turn["sent"]["grew"] for turn in view["turns"]]
    assert grown[0] is None and all(growth > 0 for growth in grown[1:])  # every call resends a longer history
    assert view["totals"]["cost"] == pytest.approx(prices.cost("offline", result.usage))


@pytest.mark.stage("s03")
def test_the_command_line_saves_the_stop_explanation_and_a_run_still_resumes(capsys):
    s03 = load_stage("s03")
    assert s03.main([REPORT_TASK, "--model", "offline-looping"]) == 1
    path = viewer.find_run("last")
    view = viewer.read_transcript(path)
    assert view["end"]["reason"] == "no_progress"
    assert view["end"]["explanation"].startswith("no progress: write_file(")  # the stage's own words
    assert transcript.load(path).last["stop_reason"] == "no_progress"  # the notes' line changes nothing to go on from
    taken = len(view["turns"])
    assert s03.main(["--resume", "last", "--max-turns", str(taken)]) == 1  # the limit, checked before a call
    again = viewer.read_transcript(path)
    assert again["resumed"] and len(again["turns"]) == taken
    assert again["end"]["reason"] == "max_turns" and again["end"]["explanation"].startswith(f"turn limit: {taken} of {taken}")
    assert any(event["kind"] == "resumed" for event in again["turns"][-1]["after"])


@pytest.mark.stage("s02")
def test_a_killed_run_shows_where_it_ended_and_its_resumption_goes_on_numbering(tmp_path):
    s02 = load_stage("s02")
    saved = tmp_path / "run.jsonl"
    with pytest.raises(ladder.Killed):
        s02.run(REPORT_TASK, model="offline", transcript=saved, trace=ladder.killer("write_file", None))
    killed = viewer.read_transcript(saved)
    # Said as the command line says a Ctrl-C: interrupted.
    assert killed["end"]["state"] == "interrupted" and killed["end"]["reason"] is None
    assert killed["turns"][-1]["after"][-1]["kind"] == "interrupted"
    result = s02.run(resume=str(saved), model="offline")
    view = viewer.read_transcript(saved)
    assert view["resumed"] and view["end"]["reason"] == result.stop_reason == "end_turn"
    assert [turn["number"] for turn in view["turns"]] == list(range(1, result.turns + 1))
    interrupted = [result for turn in view["turns"] for result in turn["results"] if "interrupted" in result["text"]]
    assert interrupted and all(result["error"] for result in interrupted)


@pytest.mark.stage("s06")
def test_a_gated_run_shows_each_denial_and_its_reason(tmp_path):
    s06 = load_stage("s06")
    s06.run("Tidy up the workspace, then write the list of files and their count to report.txt", model="offline-reckless",
            transcript=tmp_path / "run.jsonl", approver=None, audit_log=False, runs_log=False)
    view = viewer.read_transcript(tmp_path / "run.jsonl")
    denials = [event["text"] for turn in view["turns"] for event in turn["after"] if event["kind"] == "gate"]
    assert denials and all("denied:" in text and "was not run" in text for text in denials)


def hostile_run(tmp_path):
    """A run of s03 whose model writes markup and reads it back from a file: text and a tool's output."""
    s03 = load_stage("s03")
    client, _ = scripted_client(
        [{"type": "text", "text": MARKUP},
         {"type": "tool_use", "id": "toolu_1", "name": "write_file", "input": {"path": "x.html", "content": MARKUP}}],
        [{"type": "tool_use", "id": "toolu_2", "name": "read_file", "input": {"path": "x.html"}}],
        [{"type": "text", "text": f"Done: {MARKUP}"}])
    s03.run(REPORT_TASK, client=client, model="offline", transcript=tmp_path / "hostile.jsonl", runs_log=False)
    return tmp_path / "hostile.jsonl"


@pytest.mark.stage("s03")
def test_markup_in_a_run_stays_data_in_the_page(tmp_path):
    view = viewer.read_transcript(hostile_run(tmp_path))
    page = viewer.page(view)
    assert page.count("<script") == 2 and page.count("</script>") == 2  # the data's block and the page's script
    assert "<!--" not in page and "<img" not in page
    assert embedded(page) == view  # the text itself is kept, only written so that HTML cannot read it as markup
    assert view["turns"][1]["results"][0]["text"] == MARKUP
    assert "script-src 'sha256-" in page and "default-src 'none'" in page  # and no other script would run


@pytest.mark.parametrize("content", [b"", b"\xff\xfe\x00garbage\n", b'{"tool": "read_file", "decision": "allow"}\n',
                                     b"[1, 2, 3]\n", b'{"turn": 1}\n'], ids=["empty", "bytes", "audit-log", "array", "partial"])
def test_a_file_that_is_no_transcript_is_refused_in_one_line(tmp_path, content):
    path = tmp_path / "s02-20260101-000000-abc123.jsonl"
    path.write_bytes(content)
    with pytest.raises(course.CourseError) as refused:
        viewer.read_transcript(path)
    assert "\n" not in str(refused.value) and str(path) in str(refused.value)


@pytest.mark.stage("s03")
def test_a_damaged_transcript_is_shown_up_to_the_damage(tmp_path):
    s03 = load_stage("s03")
    s03.run(REPORT_TASK, model="offline", transcript=tmp_path / "run.jsonl", runs_log=False)
    lines = (tmp_path / "run.jsonl").read_text().splitlines(keepends=True)
    whole = viewer.read_transcript(tmp_path / "run.jsonl")
    (tmp_path / "run.jsonl").write_text("".join(lines[:4] + ["{not json\n"] + lines[5:]))
    cut = viewer.read_transcript(tmp_path / "run.jsonl")
    assert cut["warnings"][0].startswith("line 5: is not a JSON object")
    assert 0 < len(cut["turns"]) < len(whole["turns"]) and cut["end"]["state"] == "interrupted"


JSON = st.recursive(st.none() | st.booleans() | st.integers(-5, 10**12) | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                    max_leaves=4)
BLOCK = st.fixed_dictionaries({"type": st.sampled_from(["text", "tool_use", "tool_result", "thinking", "image"])},
                              optional={"text": JSON, "id": JSON, "name": JSON, "input": JSON, "tool_use_id": JSON,
                                        "content": JSON, "is_error": JSON, "thinking": JSON})
MESSAGE = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "system"]),
                                 "content": st.one_of(st.text(max_size=10), st.lists(BLOCK | JSON, max_size=3), JSON)})
RECORD = st.fixed_dictionaries(
    {"turn": st.integers(0, 5) | JSON, "usage": st.dictionaries(st.sampled_from(["input_tokens", "output_tokens",
                                                                                 "cache_read_input_tokens"]), JSON) | JSON,
     "stop_reason": st.none() | st.text(max_size=10) | JSON, "transitions": st.lists(JSON, max_size=2) | JSON,
     "messages": st.lists(MESSAGE | JSON, max_size=3) | JSON},
    optional={"from": JSON, "model": JSON, "stage": JSON, "notes": st.lists(JSON, max_size=2) | JSON})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(records=st.lists(RECORD, min_size=1, max_size=4), tail=st.binary(max_size=12))
def test_any_transcript_is_refused_in_one_line_or_shown(tmp_path, records, tail):
    path = tmp_path / "run.jsonl"  # written whole by each example
    path.write_bytes(b"".join(json.dumps(record).encode() + b"\n" for record in records) + tail)
    try:
        view = viewer.read_transcript(path)
    except course.CourseError as refused:
        assert "\n" not in str(refused)
        return
    assert embedded(viewer.page(view)) == view


@pytest.mark.stage("s02")
def test_course_view_writes_one_standalone_file_and_prints_its_path(tmp_path, capsys):
    load_stage("s02").run(REPORT_TASK, model="offline")
    assert course_main(["view", "last", "--out", str(tmp_path / "page.html")]) == 0
    printed = capsys.readouterr().out.strip()
    assert printed == str(tmp_path / "page.html")
    page = (tmp_path / "page.html").read_text()
    assert "src=" not in page and "href=" not in page  # its script and style are inside: it needs no other file
    assert embedded(page)["stage"] == "s02"


def test_course_view_of_no_run_says_so_in_one_line(capsys):
    assert course_main(["view", "s02-20200101-000000-000000"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: no run 's02-20200101-000000-000000' to view") and error.count("\n") == 1


def test_links_to_a_run_are_made_relative_to_the_page():
    html = f'<a href="{viewer.LINK_SCHEME}s03-run-0a1b2c3d" title="t">▶</a>'
    assert 'href="../viewer/s03-run-0a1b2c3d.html"' in viewer.resolve_links(html, "s03-stop-conditions/")
    assert 'href="viewer/s03-run-0a1b2c3d.html"' in viewer.resolve_links(html, "")
    assert 'href="viewer/s03-run-0a1b2c3d.html"' in viewer.resolve_links(html, "ladder.html")


@pytest.mark.stage()
def test_each_run_and_ladder_cell_a_page_shows_links_to_its_view():
    site.start_build()
    markdown = site.render("trace", f's04 "{REPORT_TASK}" model=offline-text-calls') + site.render("compare", "s02 s03 looping")
    linked = re.findall(re.escape(viewer.LINK_SCHEME) + r"([a-z0-9-]+)", markdown)
    assert len(linked) == 3 and set(linked) <= set(viewer.site_views())
    traced, *cells = (viewer.site_views()[run_id] for run_id in linked)
    assert (traced["stage"], traced["model"]) == ("s04", "offline-text-calls")
    assert [(cell["stage"], cell["ladder"]["scenario"]) for cell in cells] == [("s02", "looping"), ("s03", "looping")]
    looping = course.lab.scenarios.scenario_named("looping")
    table = site.with_run_links(ladder.markdown([site.ladder_cell(stage, looping) for stage in ("s02", "s03")]))
    assert [site.cell_view_id(stage, "looping") in table for stage in ("s02", "s03")] == [True, True]


@pytest.mark.stage()
def test_a_recorded_run_bills_every_call_of_a_turn():
    site.start_build()
    run = site.traced_run("s04", None, scenario="cut")  # a reply cut at max_tokens is asked for again
    view = run.view
    assert view["totals"]["input"] == sum(map(prompt, map(viewer._usage, run.usages)))
    assert any(turn["calls"] > 1 for turn in view["turns"])
    assert len(view["turns"]) == run.result["turns"]


@pytest.mark.stage("s05")
def test_a_summary_that_rewrote_the_history_is_a_note_and_repeats_no_turn(tmp_path, monkeypatch):
    s05 = load_stage("s05")
    monkeypatch.setattr(s05, "SUMMARY_THRESHOLD", 1500)  # summarise within a dozen turns
    workspace = course.prepare_workspace()
    course.lab.scenarios.ledger(workspace, 10)
    result = s05.run(course.lab.scenarios.LEDGER_TASK, model="offline-long-12", workspace=workspace, runs_log=False,
                     transcript=tmp_path / "run.jsonl")
    view = viewer.read_transcript(tmp_path / "run.jsonl")
    assert [turn["number"] for turn in view["turns"]] == list(range(1, result.turns + 1))
    assert sum(event["kind"] == "summary" for turn in view["turns"] for event in turn["before"]) >= 1
    assert all(len(turn["results"]) <= 1 for turn in view["turns"])  # each ledger turn reads one file, shown once
    assert view["totals"]["input"] == prompt(result.usage)


def test_thinking_and_an_unpriced_model_are_shown_as_they_are():
    reply = {"role": "assistant", "content": [{"type": "thinking", "thinking": "first, list", "signature": "x"},
                                              {"type": "redacted_thinking", "data": "..."},
                                              {"type": "server_tool_use", "id": "s1", "name": "web_search"}]}
    view = viewer.view_of_records([
        {"stage": "s05", "model": "qwen2.5-coder:7b", "turn": 0, "usage": {"input_tokens": 0, "output_tokens": 0},
         "stop_reason": None, "transitions": [], "messages": [{"role": "user", "content": "task"}]},
        {"turn": 1, "usage": {"input_tokens": 90, "output_tokens": 10}, "stop_reason": "end_turn", "transitions": [],
         "messages": [reply]}])
    assert [block["type"] for block in view["turns"][0]["blocks"]] == ["thinking", "thinking", "other"]
    assert view["turns"][0]["blocks"][0]["text"] == "first, list"
    assert view["priced_as"] is None and view["totals"] == {"input": 90, "output": 10, "cost": None}
