"""Files the course reads back, damaged: transcripts (resume) and the folder they live in.

A transcript edited by hand, or by something else, must be refused in one line, never crash a
stage's resume or lose what was saved. Each stage resumes through
course.runtime.transcript, so s02 (the first to resume) and s06 (the last) stand for all.
"""

from __future__ import annotations

import json
import os

import pytest

import course
from helpers import load_stage, each_stage

LIST = "List the files in the workspace"


# A line of JSON in another shape (the file edited by hand, or by something else) would crash every
# stage's resume; so would resuming another stage's run, whose state lacks what this one keeps.
DAMAGED = {
    "an empty object": lambda line: {},
    "messages that are text": lambda line: {**line, "messages": "abc"},
    "a 'from' that is text": lambda line: {**line, "from": "x"},
    "transitions that are a number": lambda line: {**line, "transitions": 5},
    "usage that is a list": lambda line: {**line, "usage": []},
    "a turn that is null": lambda line: {**line, "turn": None},
    "a message with no role": lambda line: {**line, "messages": [{"content": "x"}]},
    "content that is null": lambda line: {**line, "messages": [{"role": "user", "content": None}]},
    "a call with no id": lambda line: {**line, "messages": [{"role": "assistant", "content": [
        {"type": "tool_use", "name": "list_files", "input": {}}]}]},
    "a workspace that is a number": lambda line: {**line, "workspace": 5},
    "a model that is a number": lambda line: {**line, "model": 5},
    "an assistant message that is text": lambda line: {**line, "messages": [{"role": "user", "content": "x"},
                                                                           {"role": "assistant", "content": "hi"}]},
    "a call named by a list": lambda line: {**line, "messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": ["a"], "input": 5}]}]},
    "an answer to no call": lambda line: {**line, "messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": [
        {"type": "text", "text": "hm"}]}, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "zz", "content": "x"}]}]},
    "a count of 400 digits": lambda line: {**line, "usage": {"input_tokens": 10**400, "output_tokens": 1}},
}


@pytest.mark.parametrize("damage", DAMAGED)
@pytest.mark.parametrize("stage_name", each_stage("s02", "s06"))
def test_a_transcript_damaged_into_other_json_is_refused_in_one_line(stage_name, damage, workspace):
    stage = load_stage(stage_name)
    options = {"approver": None, "audit_log": False} if stage_name == "s06" else {}
    result = stage.run(LIST, workspace=workspace, **options)
    path = course.runtime.transcript.find(result.transcript)
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[-1] = json.dumps(DAMAGED[damage](json.loads(lines[-1])))  # the last: its messages end the history
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(course.CourseError, match=r"is damaged at line \d+ \(.*\): it was changed by something other"
                                                 r"|is not a run's transcript|holds no history a run can go on from") as raised:
        stage.run(resume=result.transcript, **options)
    assert "\n" not in str(raised.value)


@pytest.mark.stage("s06")  # s06 is asked to resume s04's run
def test_another_stages_run_is_not_resumed_and_the_line_says_which_stage_can(workspace):
    s04, s06 = load_stage("s04"), load_stage("s06")
    stopped = s04.run(LIST, workspace=workspace, limits=s04.Limits(max_turns=1))
    with pytest.raises(course.CourseError, match=r"^no run to resume: .* holds no transcript of s06; run a task first$"):
        s06.run(resume="last", approver=None, audit_log=False)
    run_id = course.runtime.transcript.run_id(stopped.transcript)
    with pytest.raises(course.CourseError, match=rf"^run {run_id} was made by s04, not s06: resume it with "
                                                 rf"\.venv/bin/python s04/agent\.py --resume {run_id}$"):
        s06.run(resume=run_id, approver=None, audit_log=False)
    assert s04.run(resume="last").stop_reason == "end_turn"


@pytest.mark.stage("s02")  # s02 resumes
def test_a_line_nested_past_what_json_can_read_is_a_damaged_line(workspace):
    result = load_stage("s02").run(LIST, workspace=workspace)
    path = course.runtime.transcript.find(result.transcript)
    path.write_text(path.read_text(encoding="utf-8") + "[" * 50_000 + "\n" + path.read_text(encoding="utf-8"),
                    encoding="utf-8")
    with pytest.raises(course.CourseError, match=r"is damaged at line \d+ .*not a JSON object"):
        load_stage("s02").run(resume=result.transcript)


@pytest.mark.stage("s03")  # s03 resumes
def test_a_lone_surrogate_saved_as_an_escape_is_replaced_when_the_run_goes_on(workspace):
    s03 = load_stage("s03")
    stopped = s03.run(LIST, workspace=workspace, limits=s03.Limits(max_turns=1))
    path = course.runtime.transcript.find(stopped.transcript)
    path.write_text(path.read_text(encoding="utf-8").replace(json.dumps(LIST), json.dumps(LIST + "\ud800"), 1),
                    encoding="utf-8")
    course.runtime.transcript.sign_again(path)  # changed by hand: resumed once a person signs it again
    assert s03.run(resume=stopped.transcript).stop_reason == "end_turn"  # a lone surrogate kept as is could not be saved again


@pytest.mark.stage("s02")  # s02 resumes
def test_resume_last_takes_only_a_regular_file(workspace):
    s02 = load_stage("s02")
    s02.run(LIST, workspace=workspace)
    folder = course.runtime.transcript.folder()
    newest = sorted(folder.glob("s02-*.jsonl"))[-1]
    os.mkfifo(folder / "s02-20991231-000000-aaaaaa.jsonl")  # named like a newer run: it hung resume
    (folder / "s02-20991231-000001-bbbbbb.jsonl").mkdir()
    (folder / "s02-20991231-000002-cccccc.jsonl").symlink_to(folder / "gone")
    assert course.runtime.transcript.find("last", "s02") == newest
