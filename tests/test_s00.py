"""Stage s00: one model call, one tool round trip done by hand, no loop.

Exercise 1 is the body of ``run_tool`` (the dispatcher), exercise 2 the body of ``tool_result``.
"""

from __future__ import annotations

import pytest
from anthropic.types import ToolUseBlock

import course
from helpers import REPORT_TASK, assert_valid_history, calls_of, tool_uses

pytestmark = pytest.mark.stage("s00")  # every test here pins s00, unless it says otherwise

TOTAL_TASK = "Read sample.txt and compute the total price"
RESULT_KEYS = {"stage", "model", "answer", "stop_reason", "turns", "usage", "workspace", "messages"}


def run_counted(stage, task: str, workspace, model: str = "offline"):
    client = course.capped(course.make_client(model), 10)
    return stage.run(task, client=client, model=model, workspace=workspace), client.calls


def call(name: str, **arguments) -> ToolUseBlock:
    return ToolUseBlock(id="toolu_test01", name=name, input=arguments, type="tool_use")


# ---------------------------------------------------------------- the single round trip

@pytest.mark.exercise(1)
@pytest.mark.exercise(2)
def test_stops_after_one_round_trip_before_the_report_is_written(s00, workspace):
    result, calls = run_counted(s00, REPORT_TASK, workspace)
    assert calls == 2
    assert result["turns"] == 2
    assert result["stop_reason"] == "tool_use"  # the model still wanted to write the report
    assert tool_uses(result["messages"][-1])[0]["name"] == "write_file"
    assert not (workspace / "report.txt").exists()
    assert_valid_history(result["messages"][:-1])  # all but the last reply, whose call s00 never answers


@pytest.mark.exercise(1)
@pytest.mark.exercise(2)
def test_reads_the_file_in_the_first_call_then_stops_after_the_second(s00, workspace):
    result, calls = run_counted(s00, TOTAL_TASK, workspace)
    assert calls == 2 and result["turns"] == 2
    task, first, results, last = result["messages"]
    assert calls_of(first) == [("read_file", {"path": "sample.txt"})]
    (answer,) = results["content"]
    assert answer["tool_use_id"] == tool_uses(first)[0]["id"]
    assert answer["content"] == (workspace / "sample.txt").read_text(encoding="utf-8")
    assert not answer["is_error"]
    assert result["stop_reason"] == "tool_use"  # it wants to calculate next, and s00 has no loop
    assert_valid_history(result["messages"][:-1])  # all but the last reply, whose call s00 never answers


def test_ends_in_one_call_when_the_model_asks_for_no_tool(s00, workspace):
    result, calls = run_counted(s00, "What is the capital of France?", workspace)
    assert calls == 1 and result["turns"] == 1
    assert result["stop_reason"] == "end_turn"
    assert len(result["messages"]) == 2
    assert "offline tutor" in result["answer"]


def test_returns_the_documented_result(s00, workspace):
    result = s00.run(TOTAL_TASK, workspace=workspace)
    assert set(result) == RESULT_KEYS
    assert result["stage"] == "s00"
    assert result["model"] == "offline"
    assert result["workspace"] == str(workspace)
    assert set(result["usage"]) == {"input_tokens", "output_tokens"}
    assert result["usage"]["input_tokens"] > 0 and result["usage"]["output_tokens"] > 0
    assert isinstance(result["answer"], str) and result["answer"]


@pytest.mark.exercise(1)
@pytest.mark.exercise(2)
def test_a_tool_that_raises_becomes_an_error_result_and_the_run_goes_on(s00, workspace, monkeypatch):
    def broken(workspace, path):
        raise PermissionError(f"cannot open {path}")

    monkeypatch.setitem(s00.TOOL_FUNCTIONS, "read_file", broken)
    result, calls = run_counted(s00, "Summarise memo.md", workspace)
    assert calls == 2
    (answer,) = result["messages"][2]["content"]
    assert answer["is_error"] is True
    assert "PermissionError" in answer["content"] and "cannot open memo.md" in answer["content"]
    assert result["stop_reason"] == "end_turn"
    assert_valid_history(result["messages"])


# ---------------------------------------------------------------- exercise 1: the dispatcher

@pytest.mark.exercise(1)
def test_dispatches_a_call_to_the_tool_of_that_name(s00, workspace):
    text, is_error = s00.run_tool(workspace, "read_file", {"path": "hello.txt"})
    assert (text, is_error) == ((workspace / "hello.txt").read_text(encoding="utf-8"), False)
    text, is_error = s00.run_tool(workspace, "calculate", {"expression": "1250 * 16"})
    assert (text, is_error) == (str(1250 * 16), False)


@pytest.mark.exercise(1)
def test_an_unknown_tool_is_an_error_result_naming_it(s00, workspace):
    text, is_error = s00.run_tool(workspace, "delete_everything", {"path": "."})
    assert is_error is True
    assert text.startswith("Error: unknown tool")
    assert "delete_everything" in text


@pytest.mark.exercise(1)
def test_a_tool_that_raises_is_an_error_result_naming_the_exception(s00, workspace, monkeypatch):
    def broken(workspace, **arguments):
        raise RuntimeError("disk on fire")

    monkeypatch.setitem(s00.TOOL_FUNCTIONS, "list_files", broken)
    text, is_error = s00.run_tool(workspace, "list_files", {"path": "."})
    assert is_error is True
    assert "RuntimeError" in text and "disk on fire" in text


@pytest.mark.exercise(1)
@pytest.mark.parametrize("arguments", [{"filename": "hello.txt"}, {}, {"path": "hello.txt", "mode": "r"}])
def test_wrong_arguments_are_an_error_result_not_an_exception(s00, workspace, arguments):
    text, is_error = s00.run_tool(workspace, "read_file", arguments)
    assert is_error is True
    assert text.startswith("Error") and "TypeError" in text


@pytest.mark.exercise(1)
def test_a_missing_file_is_an_error_result(s00, workspace):
    text, is_error = s00.run_tool(workspace, "read_file", {"path": "missing.txt"})
    assert is_error is True and "missing.txt" in text


# ---------------------------------------------------------------- exercise 2: the tool_result block

@pytest.mark.exercise(2)
def test_tool_result_answers_the_call_by_its_id(s00, workspace):
    block = s00.tool_result(workspace, call("read_file", path="hello.txt"))
    assert block["type"] == "tool_result"
    assert block["tool_use_id"] == "toolu_test01"
    assert block["content"] == (workspace / "hello.txt").read_text(encoding="utf-8")
    assert not block.get("is_error", False)


@pytest.mark.exercise(2)
def test_tool_result_flags_a_failed_call_as_an_error(s00, workspace):
    block = s00.tool_result(workspace, call("no_such_tool"))
    assert block["type"] == "tool_result" and block["tool_use_id"] == "toolu_test01"
    assert block["is_error"] is True
    assert "no_such_tool" in block["content"]


@pytest.mark.exercise(2)
def test_tool_result_runs_the_tool_it_answers(s00, workspace):
    s00.tool_result(workspace, call("write_file", path="out.txt", content="written by the tool"))
    assert (workspace / "out.txt").read_text(encoding="utf-8") == "written by the tool"
