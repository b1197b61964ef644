"""Stage s04: error feedback that lets the model recover.

Exercise 1 is ``call_tool``'s checks (an unknown tool, arguments against the schema), exercise 2
is ``cut_to_fit``. Every tool call goes through ``call_tool`` and every success through
``cut_to_fit``, so a test that runs a tool pins exercise 1, and one that sees a success pins
exercise 2 as well. The rest pins the recovery of tool calls written as text, and the four runs
s03 cannot finish and s04 can.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest

import course
from helpers import DONE, REPORT_TASK, assert_valid_history, calls_of, results_in, scripted_client, tool_uses
from course.lab.scenarios import scenario_named

pytestmark = pytest.mark.stage("s04")  # every test here pins s04, unless it says otherwise



# ---------------------------------------------------------------- a model that says exactly what a test needs

def one_call(name: str, arguments) -> list[dict]:
    return [{"type": "text", "text": "Trying."}, {"type": "tool_use", "id": "toolu_scripted_1", "name": name, "input": arguments}]


# The SDK types a tool_use input as a dict; told a list, pydantic warns as it serialises the history.
LIST_INPUT_WARNING = pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")


def assert_structured_error(block: dict, kind: str) -> dict:
    """An error result: is_error set, and JSON with ok false, the error's kind, a message and a hint."""
    assert block["is_error"] is True
    error = json.loads(block["content"])
    assert set(error) == {"ok", "error", "message", "hint"} and error["ok"] is False
    assert error["error"] == kind and error["message"].strip() and error["hint"].strip()
    assert "Traceback" not in block["content"]
    return error


# ---------------------------------------------------------------- bad input: a structured error, and the loop goes on

BINARY = bytes(range(256)) * 4

BAD_INPUTS = {
    # name: (tool, arguments, error kind, words the message or hint must hold)
    "arguments not an object": ("read_file", ["memo.md"], "invalid_arguments", ["JSON object", "array"]),
    "a string for a number": ("read_file", {"path": "memo.md", "offset": "ten"}, "invalid_arguments",
                              ["offset", "expected integer", "string"]),
    "an unknown extra field": ("read_file", {"path": "memo.md", "mode": "r"}, "invalid_arguments", ["unknown field 'mode'"]),
    "a missing required field": ("read_file", {}, "invalid_arguments", ["missing required field 'path'", "path (string, required)"]),
    "an empty tool name": ("", {"path": "memo.md"}, "unknown_tool", ["list_files", "read_file", "calculate"]),
    "an unknown tool": ("read_text_file", {"filepath": "memo.md"}, "unknown_tool",
                        ["list_files, read_file, write_file, search_files, calculate", "closest is read_file"]),
}
FILE_INPUTS = {
    "a binary file": ("read_file", {"path": "blob.bin"}, "not_text", ["blob.bin", "UTF-8"]),
    "a missing path": ("read_file", {"path": "meom.md"}, "not_found", ["meom.md", "nearest existing names: memo.md"]),
    "a folder to read": ("read_file", {"path": "notes"}, "not_a_file", ["list_files"]),
    "a file to list": ("list_files", {"path": "memo.md"}, "not_a_folder", ["read_file"]),
}


def run_one_bad_call(s04, workspace, name, arguments):
    (workspace / "blob.bin").write_bytes(BINARY)
    (workspace / "notes").mkdir(exist_ok=True)
    client, requests = scripted_client(one_call(name, arguments), DONE)
    return s04.run("Do the task", client=client, model="scripted", workspace=workspace), requests


def check_bad_call(s04, workspace, case):
    name, arguments, kind, words = case
    result, requests = run_one_bad_call(s04, workspace, name, arguments)
    assert result.stop_reason == "end_turn" and result.turns == 2 and result.answer == "Done."  # the loop went on
    [block] = results_in(result.messages)
    error = assert_structured_error(block, kind)
    said = error["message"] + " " + error["hint"]
    assert all(word in said for word in words), said
    assert results_in(requests[1]["messages"]) == [block]  # the model was shown it


@LIST_INPUT_WARNING
@pytest.mark.exercise(1)
@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_a_call_the_tools_cannot_take_gets_a_structured_error_and_the_loop_goes_on(s04, workspace, case):
    check_bad_call(s04, workspace, BAD_INPUTS[case])


@pytest.mark.exercise(1)
@pytest.mark.parametrize("case", sorted(FILE_INPUTS))
def test_a_path_the_tool_cannot_use_gets_a_structured_error_and_the_loop_goes_on(s04, workspace, case):
    check_bad_call(s04, workspace, FILE_INPUTS[case])


@pytest.mark.exercise(1)
def test_the_unknown_tool_error_names_every_tool_and_the_closest(s04, workspace):
    text, is_error = s04.run_tool(workspace, "open_file", {"path": "memo.md"})
    error = json.loads(text)
    assert is_error and error["error"] == "unknown_tool" and "'open_file'" in error["message"]
    assert all(name in error["hint"] for name in s04.TOOL_FUNCTIONS)
    assert error["hint"].endswith("the closest is read_file")


@pytest.mark.exercise(1)
def test_arguments_are_checked_before_the_tool_runs(s04, workspace):
    text, is_error = s04.run_tool(workspace, "write_file", {"path": "report.txt", "content": 42})
    assert is_error and "field 'content': expected string" in json.loads(text)["message"]
    assert not (workspace / "report.txt").exists()


@pytest.mark.exercise(1)
def test_a_tool_that_fails_unforeseen_says_so_in_one_line(s04, workspace):
    text, is_error = s04.run_tool(workspace, "calculate", {"expression": "1 / 0"})
    error = json.loads(text)
    assert is_error and error["error"] == "tool_failed" and "ZeroDivisionError" in error["message"]
    assert "\n" not in error["message"] and "Traceback" not in text


@pytest.mark.exercise(1, 2)
def test_a_success_is_structured_too(s04, workspace):
    text, is_error = s04.run_tool(workspace, "read_file", {"path": "hello.txt"})
    assert not is_error
    assert json.loads(text) == {"ok": True, "output": (workspace / "hello.txt").read_text(encoding="utf-8")}


@LIST_INPUT_WARNING
@pytest.mark.exercise(1)
def test_no_result_of_any_run_holds_a_traceback(s04, workspace):
    for case in list(BAD_INPUTS.values()) + list(FILE_INPUTS.values()):
        result, _ = run_one_bad_call(s04, workspace, case[0], case[1])
        assert all("Traceback" not in block["content"] for block in results_in(result.messages))


# ---------------------------------------------------------------- exercise 2: output too long for the history

def read_on(s04, workspace, path: str, offset: int) -> str:
    """What read_file at ``offset`` returns once cut to fit: the tool itself, then exercise 2."""
    arguments = {"path": path, **({"offset": offset} if offset else {})}
    return s04.cut_to_fit(s04.read_file(workspace, **arguments), "read_file", arguments)


@pytest.mark.exercise(2)
def test_a_long_file_is_cut_with_a_marker_naming_the_offset_to_read_on(s04, workspace):
    limit = s04.MAX_RESULT_CHARS
    text = "".join(f"line {number:05d}\n" for number in range(limit // 5))  # a little over two limits
    (workspace / "long.txt").write_text(text, encoding="utf-8")
    pieces, offset = [], 0
    for _ in range(10):
        output = read_on(s04, workspace, "long.txt", offset)
        marker = re.search(r"\n\[cut: (\d+) of (\d+) characters not shown; call read_file with offset=(\d+) to read on\]$", output)
        if marker is None:
            pieces.append(output)
            break
        assert int(marker.group(1)) == len(text) - offset - limit and int(marker.group(2)) == len(text) - offset
        pieces.append(output[:marker.start()])
        assert len(pieces[-1]) == limit
        offset = int(marker.group(3))
    assert "".join(pieces) == text  # read on to the end, nothing lost, nothing twice
    assert len(pieces) == 3


@pytest.mark.exercise(2)
def test_an_output_that_fits_is_not_cut(s04):
    fits = "x" * s04.MAX_RESULT_CHARS
    assert s04.cut_to_fit(fits, "read_file", {"path": "a.txt"}) == fits


@pytest.mark.exercise(2)
def test_a_long_listing_is_cut_with_a_marker_saying_to_ask_for_less(s04, workspace):
    folder = workspace / "many"
    folder.mkdir()
    for number in range(s04.MAX_RESULT_CHARS // 10):
        (folder / f"file-{number:05d}.txt").write_text("x", encoding="utf-8")
    output = s04.cut_to_fit(s04.list_files(workspace, "many"), "list_files", {"path": "many"})
    assert output.startswith("file-00000.txt\n") and len(output) < s04.MAX_RESULT_CHARS + 200
    assert re.search(r"\[cut: \d+ of \d+ characters not shown; ask for less[^\]]*\]$", output)


@pytest.mark.exercise(1, 2)
def test_a_long_result_reaches_the_model_cut(s04, workspace):
    (workspace / "long.txt").write_text("y" * (s04.MAX_RESULT_CHARS * 2), encoding="utf-8")
    text, is_error = s04.run_tool(workspace, "read_file", {"path": "long.txt"})
    assert not is_error and json.loads(text)["output"].endswith(f"offset={s04.MAX_RESULT_CHARS} to read on]")


# ---------------------------------------------------------------- tool calls written as text

TEXT_CALLS = {
    "raw JSON alone on a line": (
        '{"name": "list_files", "arguments": {"path": "."}}\n'
        '{"name": "write_file", "arguments": {"path": "report.txt", "content": "Files:\\n" + "\\n".join(listing["files"])}}',
        [("list_files", {"path": "."})]),  # the second line is Python, not JSON: it must not run
    "JSON after a sentence of prose": (
        'There are 5 files, so I will write them down.\n\n'
        '{"name": "write_file", "arguments": {"path": "report.txt", "content": "Files: 5"}}',
        [("write_file", {"path": "report.txt", "content": "Files: 5"})]),
    "JSON over several lines in a fence": (
        '```json\n{\n  "name": "read_file",\n  "arguments": {\n    "path": "memo.md"\n  }\n}\n```',
        [("read_file", {"path": "memo.md"})]),
    "JSON in tool_call tags": (
        '<tool_call>\n{"name": "calculate", "arguments": {"expression": "1250 * 16"}}\n</tool_call>',
        [("calculate", {"expression": "1250 * 16"})]),
}


@pytest.mark.parametrize("shape", sorted(TEXT_CALLS))
def test_each_shape_of_a_call_written_as_text_is_recognised(s04, shape):
    text, calls = TEXT_CALLS[shape]
    assert s04.calls_written_as_text(text) == calls


JSON_EXAMPLES = [
    'A person record looks like {"name": "Alice", "age": 3}.',
    'Call it like this: {"name": "read_file", "arguments": {"path": 3}}',
    '{"name": "read_file", "arguments": {"file": "memo.md"}}',
    '{"name": "delete_everything", "arguments": {}}',
    "In Python: {'name': 'read_file', 'arguments': {'path': 'memo.md'}}",
    '{"name": "read_file"}',
]


@pytest.mark.parametrize("answer", JSON_EXAMPLES)
def test_an_answer_that_merely_contains_json_runs_nothing(s04, workspace, answer):
    assert s04.calls_written_as_text(answer) == []
    client, requests = scripted_client([{"type": "text", "text": answer}])
    result = s04.run("Explain the tools", client=client, model="scripted", workspace=workspace)
    assert result.stop_reason == "end_turn" and result.turns == 1 and len(result.messages) == 2
    assert result.answer == answer


@pytest.mark.exercise(1, 2)
def test_calls_written_as_text_are_run_and_the_model_is_told(s04, workspace):
    text, _ = TEXT_CALLS["JSON after a sentence of prose"]
    client, requests = scripted_client([{"type": "text", "text": text}], DONE)
    result = s04.run("Write the report", client=client, model="scripted", workspace=workspace)
    assert (workspace / "report.txt").read_text(encoding="utf-8") == "Files: 5"
    assert result.transitions == ["text_calls_recovered"] and result.turns == 2
    told = [block["text"] for block in requests[1]["messages"][-1]["content"]]
    assert told[0].startswith('Result of write_file {"path": "report.txt", "content": "Files: 5"}')
    assert json.loads(told[0].split("\n", 1)[1]) == {"ok": True, "output": "wrote 8 characters to report.txt"}
    assert "tool interface" in told[-1]


@pytest.mark.exercise(1, 2)
def test_the_history_after_a_text_calls_run_is_valid_for_the_api(s04, workspace):
    result = s04.run(REPORT_TASK, model="offline-text-calls", workspace=workspace)
    assert "text_calls_recovered" in result.transitions
    assert_valid_history(result.messages)
    assert not tool_uses(result.messages)


# ---------------------------------------------------------------- the four scenarios: s03 cannot finish them, s04 can

WRONG_CALLS = ["typo", "unknown-tool", "bad-args"]  # the ladder's scenarios (course/lab/scenarios.py)


def play(stage, name: str, workspace):
    """Run ``stage`` on the ladder scenario ``name``: (result, whether it completed, by the scenario's check)."""
    scenario = scenario_named(name)
    before = course.snapshot(workspace)
    result = stage.run(scenario.task, model=scenario.model, workspace=workspace)
    return result, scenario.passes(course.as_dict(result), workspace, before)


@pytest.mark.exercise(1, 2)
@pytest.mark.parametrize("name", WRONG_CALLS + ["text-calls"])
def test_s04_completes_the_scenario(s04, workspace, name):
    result, completed = play(s04, name, workspace)
    assert result.stop_reason == "end_turn"
    assert completed, result.answer


@pytest.mark.stage("s03")  # what s03 does, the failure this stage fixes
@pytest.mark.parametrize("name", WRONG_CALLS)
def test_s03_stops_on_no_progress_where_its_bare_errors_teach_nothing(s03, workspace, name):
    result, completed = play(s03, name, workspace)
    assert result.stop_reason == "no_progress" and not completed
    calls = calls_of(result.messages)
    assert len(calls) == 3 and len({json.dumps(call, sort_keys=True) for call in calls}) == 1  # the same call, thrice


@pytest.mark.stage("s03")  # what s03 does, the failure this stage fixes
def test_s03_takes_the_first_text_call_for_a_final_answer(s03, workspace):
    result, completed = play(s03, "text-calls", workspace)
    assert result.stop_reason == "end_turn" and result.turns == 1  # "finished in 1 turns" ("An AI agent is a while loop inside")
    assert '"list_files"' in result.answer
    assert not (workspace / "report.txt").exists() and not completed


@pytest.mark.exercise(1, 2)
def test_the_actionable_error_finishes_in_no_more_turns_than_the_bare_one_spends_failing(s03, s04, workspace, tmp_path):
    """The chapter's side-by-side: offline-typo on the same task and the same files. With s03's
    default limits the bare error costs three turns before no-progress stops it (the same call
    three times); the actionable one costs three turns too (wrong name, right name, answer), and
    they buy the answer."""
    bare, bare_completed = play(s03, "typo", workspace)
    actionable, completed = play(s04, "typo", shutil.copytree(course.SAMPLE, tmp_path / "workspace"))
    assert bare.stop_reason == "no_progress" and not bare_completed
    assert actionable.stop_reason == "end_turn" and completed
    assert actionable.turns <= bare.turns
    assert actionable.tool_errors == {"read_file": 1} and bare.tool_errors == {"read_file": 3}


def test_a_call_written_as_text_again_and_again_is_no_progress(s04, workspace):
    same = [{"type": "text", "text": 'Listing.\n{"name": "list_files", "arguments": {"path": "."}}'}]
    client, requests = scripted_client(*[same] * 6)
    result = s04.run("List the files", client=client, model="scripted", workspace=workspace, runs_log=False)
    assert result.stop_reason == "no_progress" and len(requests) == 3
    assert result.transitions == ["text_calls_recovered"] * 2
