"""The faulty callers: four offline models that call tools wrongly, asked through the real SDK.

Each test hands the model a history built by hand, with errors worded the way a stage might word
them (bare, like s03's, or actionable, like s04's, or in another harness's words), and checks the
one next reply. A bare error gets the identical call again; an actionable one gets the fix.
"""

from __future__ import annotations

import json
import re

import pytest

import course
from helpers import REPORT_TASK, calls_of
from course.offline.faulty_callers import misspell, says_what_field_expects

SUMMARY_TASK = "Summarise memo.md"
TOTAL_TASK = "Read sample.txt and compute the total price"


def tool(name: str, properties: dict, required: list[str]) -> dict:
    return {"name": name, "description": name, "input_schema": {"type": "object", "properties": properties, "required": required}}


STRING, INTEGER = {"type": "string"}, {"type": "integer"}
TOOLS = [
    tool("list_files", {"path": STRING}, []),
    tool("read_file", {"path": STRING, "offset": INTEGER}, ["path"]),
    tool("write_file", {"path": STRING, "content": STRING}, ["path", "content"]),
    tool("search_files", {"text": STRING}, ["text"]),
    tool("calculate", {"expression": STRING}, ["expression"]),
]
TOOL_NAMES = ", ".join(t["name"] for t in TOOLS)


def history(task: str, *turns: list[tuple[str, dict, str]]) -> list[dict]:
    """The task, then for each turn: the calls made and the result written back for each; every
    result but a structured success is flagged is_error, so the wording alone varies."""
    messages = [{"role": "user", "content": task}]
    for number, turn in enumerate(turns):
        uses = [{"type": "tool_use", "id": f"toolu_{number}_{index}", "name": name, "input": arguments}
                for index, (name, arguments, _) in enumerate(turn)]
        messages.append({"role": "assistant", "content": [{"type": "text", "text": "Calling."}] + uses})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": use["id"], "content": result, "is_error": _is_error(result)}
            for use, (_, _, result) in zip(uses, turn)]})
    return messages


def _is_error(result: str) -> bool:
    return not result.startswith('{"ok": true')


def ask(model: str, messages: list[dict]):
    return course.make_client(model).messages.create(model=model, max_tokens=1024, tools=TOOLS, messages=messages)


def text_in(reply) -> str:
    return "".join(block.text for block in reply.content if block.type == "text")


def structured_error(kind: str, message: str, hint: str) -> str:
    return json.dumps({"ok": False, "error": kind, "message": message, "hint": hint})


# ---------------------------------------------------------------- offline-typo

def test_misspelling_is_one_swap_of_the_last_two_different_letters():
    assert misspell("memo.md") == "meom.md"
    assert misspell("sample.txt") == "sampel.txt"
    assert misspell("docs/todo.md") == "docs/tood.md"
    assert misspell("aa.txt") == "aaa.txt"


@pytest.mark.parametrize("task, wrong", [(SUMMARY_TASK, "meom.md"), (TOTAL_TASK, "sampel.txt")])
def test_typo_asks_for_the_file_the_task_names_misspelled(task, wrong):
    reply = ask("offline-typo", history(task))
    assert calls_of(reply) == [("read_file", {"path": wrong})]
    assert wrong in text_in(reply)  # it says why, with the name it believes in


BARE_NOT_FOUND = "Error: FileNotFoundError: [Errno 2] No such file or directory: '/tmp/workspace/meom.md'"


def test_typo_repeats_the_identical_call_after_a_bare_error():
    first = ("read_file", {"path": "meom.md"}, BARE_NOT_FOUND)
    assert calls_of(ask("offline-typo", history(SUMMARY_TASK, [first]))) == [("read_file", {"path": "meom.md"})]
    assert calls_of(ask("offline-typo", history(SUMMARY_TASK, [first], [first]))) == [("read_file", {"path": "meom.md"})]


@pytest.mark.parametrize("error", [
    structured_error("not_found", "path 'meom.md' does not exist", "nearest existing names: memo.md, todo.md"),
    "No such file: meom.md. Did you mean 'memo.md'?",
    "meom.md not found (closest match: memo.md)",
])
def test_typo_takes_the_name_an_actionable_error_offers(error):
    reply = ask("offline-typo", history(SUMMARY_TASK, [("read_file", {"path": "meom.md"}, error)]))
    assert calls_of(reply) == [("read_file", {"path": "memo.md"})]


def test_typo_finishes_like_the_tutor_once_corrected():
    hint = structured_error("not_found", "path 'meom.md' does not exist", "nearest existing names: memo.md")
    memo = json.dumps({"ok": True, "output": "# Meeting memo\n\nSome text.\n"})
    reply = ask("offline-typo", history(SUMMARY_TASK, [("read_file", {"path": "meom.md"}, hint)],
                                        [("read_file", {"path": "memo.md"}, memo)]))
    assert reply.stop_reason == "end_turn" and not calls_of(reply)
    assert "memo.md" in text_in(reply) and "Meeting memo" in text_in(reply)


def test_typo_behaves_as_the_tutor_on_a_task_that_names_no_file():
    tutor, typo = ask("offline", history(REPORT_TASK)), ask("offline-typo", history(REPORT_TASK))
    assert calls_of(typo) == calls_of(tutor) == [("list_files", {"path": "."})]


# ---------------------------------------------------------------- offline-unknown-tool

INVENTED = ("read_text_file", {"filepath": "sample.txt"})


def test_unknown_tool_reads_with_a_tool_the_harness_does_not_have():
    assert calls_of(ask("offline-unknown-tool", history(TOTAL_TASK))) == [INVENTED]


def test_unknown_tool_repeats_the_identical_call_after_a_bare_error():
    first = (*INVENTED, "Error: unknown tool 'read_text_file'")
    assert calls_of(ask("offline-unknown-tool", history(TOTAL_TASK, [first]))) == [INVENTED]
    assert calls_of(ask("offline-unknown-tool", history(TOTAL_TASK, [first], [first]))) == [INVENTED]


@pytest.mark.parametrize("error", [
    structured_error("unknown_tool", "there is no tool named 'read_text_file'",
                     f"the tools are {TOOL_NAMES}; the closest is read_file"),
    f"unknown tool: read_text_file. available: {TOOL_NAMES}",
    "No tool read_text_file. Did you mean read_file?",
])
def test_unknown_tool_switches_to_the_closest_tool_the_error_names(error):
    reply = ask("offline-unknown-tool", history(TOTAL_TASK, [(*INVENTED, error)]))
    assert calls_of(reply) == [("read_file", {"path": "sample.txt"})]


def test_unknown_tool_keeps_the_real_names_once_told():
    told = (*INVENTED, f"unknown tool; the tools are {TOOL_NAMES}")
    order = json.dumps({"ok": True, "output": "Order: unit price 1250 yen, quantity 16."})
    reply = ask("offline-unknown-tool", history(TOTAL_TASK, [told], [("read_file", {"path": "sample.txt"}, order)]))
    assert calls_of(reply) == [("calculate", {"expression": "1250 * 16"})]


# ---------------------------------------------------------------- offline-bad-args

def test_bad_args_reads_one_file_under_the_wrong_field_name():
    assert calls_of(ask("offline-bad-args", history(SUMMARY_TASK))) == [("read_file", {"file": "memo.md"})]


def test_bad_args_reads_several_files_as_one_array_where_a_string_is_expected():
    reply = ask("offline-bad-args", history("Summarise memo.md and todo.md"))
    assert calls_of(reply) == [("read_file", {"path": ["memo.md", "todo.md"]})]


MISNAMED = ("read_file", {"file": "memo.md"})
AS_ARRAY = ("read_file", {"path": ["memo.md"]})


@pytest.mark.parametrize("bad, error", [
    (MISNAMED, "Error: TypeError: read_file() got an unexpected keyword argument 'file'"),  # s03: the wrong field only
    (MISNAMED, "unexpected keyword argument 'file'. Did you mean 'path'?"),                 # a name, nothing expected
    (AS_ARRAY, "Error: TypeError: unsupported operand type(s) for /: 'PosixPath' and 'list'"),
    (AS_ARRAY, "['memo.md'] is not of type 'string'"),                                     # a type, no field
    (AS_ARRAY, "missing required field 'path'"),                                            # not what is wrong here
])
def test_bad_args_repeats_the_identical_call_when_the_error_does_not_say_what_was_expected(bad, error):
    assert calls_of(ask("offline-bad-args", history(SUMMARY_TASK, [(*bad, error)]))) == [bad[:2]]
    assert calls_of(ask("offline-bad-args", history(SUMMARY_TASK, [(*bad, error)], [(*bad, error)]))) == [bad[:2]]


@pytest.mark.parametrize("bad, error", [
    (MISNAMED, structured_error("invalid_arguments", "read_file: missing required field 'path'; unknown field 'file'",
                                "read_file takes path (string, required), offset (integer)")),
    (MISNAMED, "'path' is a required property"),
    (MISNAMED, "read_file takes path (string, required)"),
    (AS_ARRAY, structured_error("invalid_arguments", "read_file: field 'path': expected string, got array ['memo.md']",
                                "read_file takes path (string, required), offset (integer)")),
    (AS_ARRAY, "path must be a string"),
])
def test_bad_args_sends_the_right_arguments_once_the_error_names_the_field_and_what_was_expected(bad, error):
    reply = ask("offline-bad-args", history(SUMMARY_TASK, [(*bad, error)]))
    assert calls_of(reply) == [("read_file", {"path": "memo.md"})]


def test_an_array_of_several_paths_is_fixed_into_one_read_each():
    bad = ("read_file", {"path": ["memo.md", "todo.md"]}, "field 'path': expected string, got array")
    reply = ask("offline-bad-args", history("Summarise memo.md and todo.md", [bad]))
    assert calls_of(reply) == [("read_file", {"path": "memo.md"}), ("read_file", {"path": "todo.md"})]


def test_what_counts_as_naming_the_field_and_what_was_expected():
    assert says_what_field_expects("field 'path': expected string, got array", "path", missing=False)
    assert says_what_field_expects("missing required field 'path'", "path", missing=True)
    assert not says_what_field_expects("missing required field 'path'", "path", missing=False)
    assert not says_what_field_expects("path 'meom.md' does not exist", "path", missing=True)
    assert not says_what_field_expects("got an unexpected keyword argument 'file'", "path", missing=True)
    assert not says_what_field_expects("filepath (string, required)", "path", missing=True)


# ---------------------------------------------------------------- offline-text-calls

def text_turns(task: str, replies: int) -> list[dict]:
    """A history of ``replies`` text-only replies, each answered with a note that ran nothing."""
    messages = [{"role": "user", "content": task}]
    for _ in range(replies):
        messages.append({"role": "assistant", "content": ask("offline-text-calls", messages).content[0].text})
        messages.append({"role": "user", "content": "Please go on."})
    return messages


def parses(text: str) -> bool:
    try:
        json.loads(text)
        return True
    except ValueError:
        return False


def test_turn_one_is_raw_json_alone_on_a_line_then_a_line_that_is_not_json():
    reply = ask("offline-text-calls", text_turns(REPORT_TASK, 0))
    first, second = text_in(reply).splitlines()
    assert json.loads(first) == {"name": "list_files", "arguments": {"path": "."}}
    assert second.startswith('{"name": "write_file"') and '" + "' in second and not parses(second)


def test_turn_two_is_json_after_a_sentence_of_prose():
    lines = text_in(ask("offline-text-calls", text_turns(REPORT_TASK, 1))).splitlines()
    assert not parses(lines[0]) and lines[0].endswith(".")
    assert json.loads(lines[-1]) == {"name": "list_files", "arguments": {"path": "."}}


def test_turn_three_is_json_over_several_lines_in_a_fence():
    text = text_in(ask("offline-text-calls", text_turns(REPORT_TASK, 2)))
    fenced = re.fullmatch(r"```json\n(.*)\n```", text, re.S)
    assert fenced and fenced.group(1).count("\n") > 2
    assert json.loads(fenced.group(1)) == {"name": "list_files", "arguments": {"path": "."}}


def test_turn_four_is_json_in_tool_call_tags_and_turn_five_starts_over():
    text = text_in(ask("offline-text-calls", text_turns(REPORT_TASK, 3)))
    tagged = re.fullmatch(r"<tool_call>\n(.*)\n</tool_call>", text, re.S)
    assert tagged and json.loads(tagged.group(1)) == {"name": "list_files", "arguments": {"path": "."}}
    again = text_in(ask("offline-text-calls", text_turns(REPORT_TASK, 4)))
    assert json.loads(again) == {"name": "list_files", "arguments": {"path": "."}}  # raw, and only turn 1 anticipates


@pytest.mark.parametrize("replies", range(5))
def test_text_calls_never_sends_a_tool_use_block(replies):
    reply = ask("offline-text-calls", text_turns(REPORT_TASK, replies))
    assert reply.stop_reason == "end_turn" and not calls_of(reply)


def test_text_calls_reads_the_results_written_back_as_text_and_answers_without_json():
    listing = "config.json\nhello.txt\nmemo.md"
    messages = text_turns(REPORT_TASK, 1)[:2] + [{"role": "user", "content": [
        {"type": "text", "text": 'Result of list_files {"path": "."} (written as text in your reply):\n'
                                 + json.dumps({"ok": True, "output": listing})},
        {"type": "text", "text": "You wrote tool calls as JSON text; use the tool interface."}]}]
    second = text_in(ask("offline-text-calls", messages))
    write = json.loads(second.splitlines()[-1])
    assert write["name"] == "write_file" and write["arguments"]["content"] == "Files: 3\n- config.json\n- hello.txt\n- memo.md\n"
    messages += [{"role": "assistant", "content": second}, {"role": "user", "content": [
        {"type": "text", "text": "Result of write_file " + json.dumps(write["arguments"]) + " (written as text in your reply):\n"
                                 + json.dumps({"ok": True, "output": "wrote 46 characters to report.txt"})}]}]
    final = ask("offline-text-calls", messages)
    assert final.stop_reason == "end_turn" and not calls_of(final)
    assert "report.txt" in text_in(final) and "memo.md" in text_in(final) and "{" not in text_in(final)
