"""s02: the state saved every step to a transcript, and a stopped or killed run resumed from it.

Exercise 3 (``answer_interrupted_calls``) is pinned by the tests marked ``exercise(3)``.
"""

from __future__ import annotations

import json

import pytest

import course
from course.offline import Faults
from helpers import REPORT_TASK as REPORT, assert_valid_history, load_stage, results_in, scripted_client

pytestmark = pytest.mark.stage("s02")  # every test here pins s02, unless it says otherwise

LIST = "List the files in the workspace"


def lines_of(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_run_names_its_transcript_and_the_transcript_holds_the_whole_history(workspace):
    result = load_stage("s02").run(REPORT, workspace=workspace)
    path = course.runtime.transcript.find(result.transcript)
    loaded = course.runtime.transcript.load(path)
    assert loaded.history() == result.messages
    assert loaded.last["stop_reason"] == "end_turn" and loaded.last["turn"] == result.turns == 3
    assert loaded.records[0]["workspace"] == str(workspace) and loaded.records[0]["model"] == "offline"
    assert course.runtime.transcript.find("last") == path == course.runtime.transcript.find(path.stem)


def test_a_call_is_saved_before_it_runs(workspace):
    """The line that holds a tool_use is on disk when the tool runs: a kill then cannot lose the call."""
    s02 = load_stage("s02")
    seen = []

    def list_files(workspace, path="."):
        seen.append(lines_of(course.runtime.transcript.find("last"))[-1]["messages"][-1])
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
    path = course.runtime.transcript.folder() / "killed.jsonl"
    call = {"type": "tool_use", "id": "toolu_killed", "name": "write_file",
            "input": {"path": "report.txt", "content": "x"}}
    course.runtime.transcript.append(path, {"stage": "s02", "model": "offline", "workspace": str(workspace), "turn": 1,
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


@pytest.mark.stage("s03")
def test_limits_given_on_resume_apply(workspace):
    s03 = load_stage("s03")
    short = s03.run(REPORT, workspace=workspace, limits=s03.Limits(max_turns=1), runs_log=False)
    assert short.stop_reason == "max_turns"
    again = s03.run(resume="last", limits=s03.Limits(max_turns=1), runs_log=False)
    assert again.stop_reason == "max_turns" and again.turns == 1  # the turns taken count
    done = s03.run(resume="last", limits=s03.Limits(max_turns=5), runs_log=False)
    assert done.stop_reason == "end_turn" and done.turns == 3


@pytest.mark.parametrize("cut_at", [1, 7, -1])
def test_a_torn_last_line_is_ignored_then_cut_off_before_the_next(workspace, cut_at):
    result = load_stage("s02").run(LIST, workspace=workspace)
    path = course.runtime.transcript.find(result.transcript)
    data = path.read_bytes()
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    path.write_bytes(data[:last_start + (cut_at if cut_at > 0 else len(data) - last_start - 1)])
    loaded = course.runtime.transcript.load(path)
    assert loaded.torn_bytes > 0 and len(loaded.records) == len(lines_of_good(data)) - 1
    step = {"turn": 9, "usage": {"input_tokens": 1, "output_tokens": 1}, "stop_reason": None, "transitions": [],
            "messages": []}
    course.runtime.transcript.append(path, step)
    assert course.runtime.transcript.load(path).records[-1] == step
    assert course.runtime.transcript.load(path).torn_bytes == 0


def lines_of_good(data: bytes) -> list[bytes]:
    return data.rstrip(b"\n").split(b"\n")


def test_a_damaged_line_inside_a_transcript_is_refused_in_one_line(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_text('{"turn": 0}\nnot json\n{"turn": 1}\n', encoding="utf-8")
    with pytest.raises(course.CourseError, match=r"damaged at line 2"):
        course.runtime.transcript.load(path)


def test_resume_of_an_unknown_run_says_what_to_give(tmp_path):
    with pytest.raises(course.CourseError, match="no run 'nope' to resume"):
        course.runtime.transcript.find("nope")
    with pytest.raises(course.CourseError, match="no run to resume"):
        course.runtime.transcript.find("last")


def test_last_is_the_newest_transcript_and_another_log_is_never_taken_for_one(workspace):
    """A runs log or an audit log in the same folder is a .jsonl too: it must not pass for a run."""
    s02 = load_stage("s02")
    stopped = s02.run(REPORT, client=course.make_client("offline", faults=Faults(rate=1.0), max_retries=0),
                      workspace=workspace)
    log = course.runtime.transcript.folder() / "runs.jsonl"
    log.write_text(json.dumps({"stage": "s03", "stop_reason": "end_turn"}) + "\n", encoding="utf-8")
    assert str(course.runtime.transcript.find("last")) == stopped.transcript
    with pytest.raises(course.CourseError, match="is not a run's transcript"):
        course.runtime.transcript.find(str(log))


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
@pytest.mark.stage("s01")
def test_fault_options_are_checked_in_one_line(argv, message, capsys):
    assert load_stage("s01").main([LIST] + argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
