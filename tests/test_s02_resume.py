"""s02: the state saved every step to a transcript, and a stopped or killed run resumed from it.

Exercise 3 (``answer_interrupted_calls``) is pinned by the tests marked ``exercise(3)``.
"""

from __future__ import annotations

import json
import os

import pytest

import course
from course.offline import Faults, Reply
from helpers import REPORT_TASK as REPORT, assert_valid_history, load_stage, results_in, scripted_client

LIST = "List the files in the workspace"


def lines_of(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_run_names_its_transcript_and_the_transcript_holds_the_whole_history(workspace):
    result = load_stage("s02").run(REPORT, workspace=workspace)
    path = course.transcript.find(result.transcript)
    loaded = course.transcript.load(path)
    assert loaded.history() == result.messages
    assert loaded.last["stop_reason"] == "end_turn" and loaded.last["turn"] == result.turns == 3
    assert loaded.records[0]["workspace"] == str(workspace) and loaded.records[0]["model"] == "offline"
    assert course.transcript.find("last") == path == course.transcript.find(path.stem)


def test_a_call_is_saved_before_it_runs(workspace):
    """The line that holds a tool_use is on disk when the tool runs: a kill then cannot lose the call."""
    s02 = load_stage("s02")
    seen = []

    def list_files(workspace, path="."):
        seen.append(lines_of(course.transcript.find("last"))[-1]["messages"][-1])
        return "a.txt"

    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(s02.TOOL_FUNCTIONS, "list_files", list_files)
        s02.run(LIST, workspace=workspace)
    assert seen and seen[0]["role"] == "assistant" and seen[0]["content"][-1]["name"] == "list_files"


def test_a_run_stopped_by_an_api_error_is_resumed_to_the_end(workspace):
    s02 = load_stage("s02")
    down = course.make_client("offline", faults=Faults(rate=1.0, kinds=("overloaded",)), max_retries=0)
    stopped = s02.run(REPORT, client=down, model="offline", workspace=workspace)
    assert stopped.stop_reason == "api_error" and stopped.turns == 0
    finished = s02.run(resume="last")
    assert finished.stop_reason == "end_turn" and finished.transcript == stopped.transcript
    assert finished.workspace == str(workspace) and (workspace / "report.txt").exists()
    assert_valid_history(finished.messages)


@pytest.mark.exercise(3)
def test_a_call_killed_before_its_result_was_saved_is_answered_as_interrupted_not_run_again(workspace):
    s02 = load_stage("s02")
    path = course.transcript.folder() / "killed.jsonl"
    call = {"type": "tool_use", "id": "toolu_killed", "name": "write_file",
            "input": {"path": "report.txt", "content": "x"}}
    course.transcript.append(path, {"stage": "s02", "model": "offline", "workspace": str(workspace), "turn": 1,
                                    "usage": {"input_tokens": 1, "output_tokens": 1}, "stop_reason": None, "transitions": [],
                                    "messages": [{"role": "user", "content": REPORT},
                                                 {"role": "assistant", "content": [call]}]})
    writes = []
    client, requests = scripted_client(DONE_REPLY)
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(s02.TOOL_FUNCTIONS, "write_file", lambda *args, **kwargs: writes.append(args) or "wrote")
        result = s02.run(resume="killed", client=client)
    assert writes == []  # never run again by the harness
    answer = results_in(requests[0]["messages"])[-1]
    assert answer["tool_use_id"] == "toolu_killed" and answer["is_error"] is True
    assert "interrupted" in answer["content"] and "may or may not have happened" in answer["content"]
    assert result.stop_reason == "end_turn" and result.turns == 2
    assert_valid_history(result.messages)


DONE_REPLY = [{"type": "text", "text": "Done."}]


@pytest.mark.exercise(3)
def test_a_run_that_ended_with_the_models_answer_is_not_resumed(workspace):
    load_stage("s02").run(LIST, workspace=workspace)
    with pytest.raises(course.CourseError, match="nothing to go on from"):
        load_stage("s02").run(resume="last")


@pytest.mark.exercise(3)
def test_the_tutor_checks_an_interrupted_write_and_does_not_write_twice(workspace):
    """Killed right after write_file ran: on resume the tutor reads the file back instead of writing again."""
    s02 = load_stage("s02")
    writes = []
    real_write = s02.TOOL_FUNCTIONS["write_file"]

    def write_then_die(workspace, path, content):
        writes.append(path)
        real_write(workspace, path, content)
        raise KeyboardInterrupt  # the process ends here, before the result is saved

    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(s02.TOOL_FUNCTIONS, "write_file", write_then_die)
        with pytest.raises(KeyboardInterrupt):
            s02.run(REPORT, workspace=workspace)
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(s02.TOOL_FUNCTIONS, "write_file", lambda *a, **k: writes.append("again") or "wrote")
        result = s02.run(resume="last")
    assert writes == ["report.txt"]
    called = [block["name"] for message in result.messages if message["role"] == "assistant"
              for block in message["content"] if block["type"] == "tool_use"]
    assert called == ["list_files", "write_file", "read_file"] and result.stop_reason == "end_turn"


def test_limits_given_on_resume_apply(workspace):
    s03 = load_stage("s03")
    short = s03.run(REPORT, workspace=workspace, max_turns=1, runs_log=False)
    assert short.stop_reason == "max_turns"
    again = s03.run(resume="last", max_turns=1, runs_log=False)
    assert again.stop_reason == "max_turns" and again.turns == 1  # the turns taken count
    done = s03.run(resume="last", max_turns=5, runs_log=False)
    assert done.stop_reason == "end_turn" and done.turns == 3


@pytest.mark.parametrize("cut_at", [1, 7, -1])
def test_a_torn_last_line_is_ignored_then_cut_off_before_the_next(workspace, cut_at):
    result = load_stage("s02").run(LIST, workspace=workspace)
    path = course.transcript.find(result.transcript)
    data = path.read_bytes()
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    path.write_bytes(data[:last_start + (cut_at if cut_at > 0 else len(data) - last_start - 1)])
    loaded = course.transcript.load(path)
    assert loaded.torn_bytes > 0 and len(loaded.records) == len(lines_of_good(data)) - 1
    step = {"turn": 9, "usage": {"input_tokens": 1, "output_tokens": 1}, "stop_reason": None, "transitions": [],
            "messages": []}
    course.transcript.append(path, step)
    assert course.transcript.load(path).records[-1] == step
    assert course.transcript.load(path).torn_bytes == 0


def lines_of_good(data: bytes) -> list[bytes]:
    return data.rstrip(b"\n").split(b"\n")


def test_a_damaged_line_inside_a_transcript_is_refused_in_one_line(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_text('{"turn": 0}\nnot json\n{"turn": 1}\n', encoding="utf-8")
    with pytest.raises(course.CourseError, match=r"damaged at line 2"):
        course.transcript.load(path)


def test_resume_of_an_unknown_run_says_what_to_give(tmp_path):
    with pytest.raises(course.CourseError, match="no run 'nope' to resume"):
        course.transcript.find("nope")
    with pytest.raises(course.CourseError, match="no run to resume"):
        course.transcript.find("last")


def test_last_is_the_newest_transcript_and_another_log_is_never_taken_for_one(workspace):
    """A runs log or an audit log in the same folder is a .jsonl too: it must not pass for a run."""
    s02 = load_stage("s02")
    stopped = s02.run(REPORT, client=course.make_client("offline", faults=Faults(rate=1.0), max_retries=0),
                      workspace=workspace)
    log = course.transcript.folder() / "runs.jsonl"
    log.write_text(json.dumps({"stage": "s03", "stop_reason": "end_turn"}) + "\n", encoding="utf-8")
    assert str(course.transcript.find("last")) == stopped.transcript
    with pytest.raises(course.CourseError, match="is not a run's transcript"):
        course.transcript.find(str(log))


def test_the_command_line_resumes_the_last_run(capsys):
    s02 = load_stage("s02")
    assert s02.main([REPORT, "--faults", "1", "--retries", "0"]) == 1
    out = capsys.readouterr().out
    assert "api_error" in out and "go on with --resume s02-" in out
    assert s02.main(["--resume", "last"]) == 0
    assert "resuming run s02-" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    ([], "give a task, or --resume RUN"),
    ([REPORT, "--resume", "last"], "give a task, or --resume RUN"),
])
def test_the_command_line_wants_a_task_or_a_run_to_resume(argv, message, capsys):
    with pytest.raises(SystemExit):
        load_stage("s02").main(argv)
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--faults", "2"], "between 0 and 1"),
    (["--retries", "-1"], "0 or more"),
    (["--faults", "0.3", "--model", "claude-sonnet-5"], "offline model only"),
])
def test_fault_options_are_checked_in_one_line(argv, message, capsys):
    assert load_stage("s01").main([LIST] + argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


# Red team, round 7: a line of JSON in another shape (the file edited by hand, or by something else)
# crashed every stage's resume; so did resuming another stage's run, whose state lacks what this one keeps.
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
    # round 8
    "an assistant message that is text": lambda line: {**line, "messages": [{"role": "user", "content": "x"},
                                                                           {"role": "assistant", "content": "hi"}]},
    "a call named by a list": lambda line: {**line, "messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": ["a"], "input": 5}]}]},
    "an answer to no call": lambda line: {**line, "messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": [
        {"type": "text", "text": "hm"}]}, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "zz", "content": "x"}]}]},
    "a count of 400 digits": lambda line: {**line, "usage": {"input_tokens": 10**400, "output_tokens": 1}},
}


@pytest.mark.parametrize("damage", DAMAGED)
@pytest.mark.parametrize("stage_name", ["s02", "s06"])
def test_a_transcript_damaged_into_other_json_is_refused_in_one_line(stage_name, damage, workspace):
    stage = load_stage(stage_name)
    options = {"approver": None, "audit_log": False} if stage_name == "s06" else {}
    result = stage.run(LIST, workspace=workspace, **options)
    path = course.transcript.find(result.transcript)
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[-1] = json.dumps(DAMAGED[damage](json.loads(lines[-1])))  # the last: its messages end the history
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(course.CourseError, match=r"is damaged at line \d+ \(.*\): it was changed by something other"
                                                 r"|is not a run's transcript|holds no history a run can go on from") as raised:
        stage.run(resume=result.transcript, **options)
    assert "\n" not in str(raised.value)


def test_another_stages_run_is_not_resumed_and_the_line_says_which_stage_can(workspace):
    s04, s06 = load_stage("s04"), load_stage("s06")
    stopped = s04.run(LIST, workspace=workspace, max_turns=1)
    with pytest.raises(course.CourseError, match=r"^no run to resume: .* holds no transcript of s06; run a task first$"):
        s06.run(resume="last", approver=None, audit_log=False)
    run_id = course.transcript.run_id(stopped.transcript)
    with pytest.raises(course.CourseError, match=rf"^run {run_id} was made by s04, not s06: resume it with "
                                                 rf"\.venv/bin/python s04/agent\.py --resume {run_id}$"):
        s06.run(resume=run_id, approver=None, audit_log=False)
    assert s04.run(resume="last").stop_reason == "end_turn"


def test_a_line_nested_past_what_json_can_read_is_a_damaged_line(workspace):
    result = load_stage("s02").run(LIST, workspace=workspace)
    path = course.transcript.find(result.transcript)
    path.write_text(path.read_text(encoding="utf-8") + "[" * 50_000 + "\n" + path.read_text(encoding="utf-8"),
                    encoding="utf-8")
    with pytest.raises(course.CourseError, match=r"is damaged at line \d+ .*not a JSON object"):
        load_stage("s02").run(resume=result.transcript)


def test_a_lone_surrogate_saved_as_an_escape_is_replaced_when_the_run_goes_on(workspace):
    s03 = load_stage("s03")
    stopped = s03.run(LIST, workspace=workspace, max_turns=1)
    path = course.transcript.find(stopped.transcript)
    path.write_text(path.read_text(encoding="utf-8").replace(json.dumps(LIST), json.dumps(LIST + "\ud800"), 1),
                    encoding="utf-8")
    assert s03.run(resume=stopped.transcript).stop_reason == "end_turn"  # it could not be saved again before


def test_resume_last_takes_only_a_regular_file(workspace):
    s02 = load_stage("s02")
    s02.run(LIST, workspace=workspace)
    folder = course.transcript.folder()
    newest = sorted(folder.glob("s02-*.jsonl"))[-1]
    os.mkfifo(folder / "s02-20991231-000000-aaaaaa.jsonl")  # named like a newer run: it hung resume
    (folder / "s02-20991231-000001-bbbbbb.jsonl").mkdir()
    (folder / "s02-20991231-000002-cccccc.jsonl").symlink_to(folder / "gone")
    assert course.transcript.find("last", "s02") == newest
