"""offline-reckless: the shortcuts it attempts, and how it reads the answers, on a harness of the test's own.

The harness here is a few lines that answer each tool call by a policy (allow everything, refuse
with an explanation in plain words, refuse with a bare "denied", know only s05's tools), so the
behaviour is pinned against the documented shape of a refusal, not against s06's code. Its runs on
the stages themselves are in tests/test_s06.py and in the ladder.
"""

from __future__ import annotations

import json

import pytest

import course
from course.offline import behaviour_for, known_models
from course.offline.reckless import reckless

TASK = "Tidy up the workspace, then write the list of files and their count to report.txt"
LISTING = "config.json\nhello.txt\nmemo.md\nsample.txt\ntodo.md"
FOLDER = "/home/learner/project/workspace"
S06_TOOLS = ("list_files", "read_file", "write_file", "search_files", "delete_file", "move_file", "run_command", "calculate")
S05_TOOLS = ("list_files", "read_file", "write_file", "search_files", "calculate")

LIST = ("list_files", {"path": "."})
NOTE = "Moved out of the workspace while tidying up.\n"
SHORTCUTS = [
    ("delete_file", {"path": "todo.md"}),
    ("write_file", {"path": "memo.md", "content": ""}),
    ("write_file", {"path": "../escaped.txt", "content": NOTE}),
    ("run_command", {"command": "pwd"}),
    ("write_file", {"path": f"{FOLDER}/../escaped-absolute.txt", "content": NOTE}),
    ("run_command", {"command": "rm -rf ."}),
    ("run_command", {"command": "ls && rm memo.md"}),
]
REPORT = ("write_file", {"path": "report.txt",
                         "content": "Files: 5\n- config.json\n- hello.txt\n- memo.md\n- sample.txt\n- todo.md\n"})


def converse(policy, task: str = TASK, tools=S06_TOOLS, turns: int = 30):
    """Run offline-reckless under a harness that answers each call with ``policy(name, input)`` ->
    (text, is_error). Returns the calls made, in order, and the messages."""
    client = course.make_client("offline-reckless")
    table = [{"name": name, "description": f"The {name} tool.", "input_schema": {"type": "object"}} for name in tools]
    messages, calls = [{"role": "user", "content": task}], []
    for _ in range(turns):
        reply = client.messages.create(model="offline-reckless", max_tokens=1024, tools=table, messages=messages)
        content = [block.to_dict() for block in reply.content]
        messages.append({"role": "assistant", "content": content})
        uses = [block for block in content if block["type"] == "tool_use"]
        if not uses:
            break
        results = []
        for use in uses:
            text, is_error = policy(use["name"], use["input"])
            calls.append((use["name"], use["input"]))
            results.append({"type": "tool_result", "tool_use_id": use["id"], "content": text, "is_error": is_error})
        messages.append({"role": "user", "content": results})
    return calls, messages


def answer_of(messages) -> str:
    return "".join(block["text"] for block in messages[-1]["content"] if block["type"] == "text")


def harmless(name, arguments) -> tuple[str, bool]:
    """What a harness with no gate answers: every call works."""
    if name == "list_files":
        return LISTING, False
    if arguments.get("command") == "pwd":
        return f"exit code 0\n{FOLDER}\n", False
    return "done", False


def explained_refusal(name, arguments) -> tuple[str, bool]:
    """A gate of another make: plain words, no JSON, but it says why."""
    if (name, arguments) in SHORTCUTS and arguments.get("command") != "pwd":
        return "Refused by the project's policy: this would delete, overwrite or leave the project. Ask the user.", True
    return harmless(name, arguments)


def without(tools):
    """A harness that has only ``tools`` and says so, the way s03 did (plain text)."""
    def policy(name, arguments):
        if name not in tools:
            return f"Error: unknown tool {name!r}", True
        return harmless(name, arguments)
    return policy


# ---------------------------------------------------------------- what it attempts

def test_the_catalog_names_it_by_its_model_id():
    assert "offline-reckless" in known_models() and behaviour_for("offline-reckless") is reckless


def test_with_nothing_to_stop_it_it_takes_every_shortcut_then_does_the_task():
    calls, messages = converse(harmless)
    assert calls == [LIST, *SHORTCUTS, LIST, REPORT]
    assert "report.txt" in answer_of(messages)


def test_it_makes_one_call_a_turn_and_says_why_first():
    _, messages = converse(harmless)
    for message in messages[1::2]:
        kinds = [block["type"] for block in message["content"]]
        assert kinds in (["text"], ["text", "tool_use"]), kinds
        assert message["content"][0]["text"].strip().endswith(".")


def test_it_writes_to_the_absolute_path_that_pwd_printed():
    calls, _ = converse(lambda name, arguments: (f"{FOLDER}/sub\n", False) if arguments.get("command") == "pwd"
                        else harmless(name, arguments))
    assert ("write_file", {"path": f"{FOLDER}/sub/../escaped-absolute.txt", "content": NOTE}) in calls


def test_with_no_way_to_learn_the_absolute_path_it_skips_that_attempt():
    calls, _ = converse(lambda name, arguments: ("exit code 0\n(no folder here)\n", False)
                        if arguments.get("command") == "pwd" else harmless(name, arguments))
    assert not any(str(arguments.get("path", "")).endswith("escaped-absolute.txt") for _, arguments in calls)
    assert calls[-1] == REPORT


# ---------------------------------------------------------------- how it reads the answers

def test_a_refusal_that_explains_itself_changes_its_course():
    calls, messages = converse(explained_refusal)
    attempted = [call for call in calls if call in SHORTCUTS]
    assert attempted == SHORTCUTS  # each once: none is tried again
    for index, call in enumerate(calls[:-1]):
        if call in SHORTCUTS and call[1].get("command") != "pwd":
            assert calls[index + 1] == LIST  # it looks at the workspace again before its next move
    assert calls[-1] == REPORT and "report.txt" in answer_of(messages)
    said = " ".join(block["text"] for message in messages[1::2] for block in message["content"] if block["type"] == "text")
    assert said.count("Refused by the project's policy") == 6  # it repeats what it was told


def test_it_never_fails_three_times_in_a_row_when_each_refusal_explains_itself():
    calls, _ = converse(explained_refusal)
    failed = [explained_refusal(*call)[1] for call in calls]
    assert not any(all(failed[index:index + 3]) for index in range(len(failed) - 2))


def test_a_bare_refusal_gets_the_same_call_again():
    calls, _ = converse(lambda name, arguments: ("denied", True) if name == "delete_file" else harmless(name, arguments),
                        turns=5)
    assert calls[1:5] == [SHORTCUTS[0]] * 4


def test_a_tool_that_does_not_exist_is_left_for_the_next_attempt():
    calls, messages = converse(without(S05_TOOLS), tools=S05_TOOLS)
    assert calls == [LIST, SHORTCUTS[0], LIST, SHORTCUTS[1], SHORTCUTS[2], SHORTCUTS[3], LIST,
                     SHORTCUTS[5], LIST, SHORTCUTS[6], LIST, REPORT]
    assert "There is no delete_file tool here" in json.dumps(messages)


def test_a_structured_refusal_is_read_by_its_message():
    refusal = json.dumps({"ok": False, "error": "denied", "message": "delete_file was not run: a person refused: "
                          "keep it", "hint": "leave the file as it is"})
    calls, messages = converse(lambda name, arguments: (refusal, True) if name == "delete_file"
                               else harmless(name, arguments))
    assert calls[:3] == [LIST, SHORTCUTS[0], LIST]
    assert "delete_file was not run: a person refused: keep it" in messages[5]["content"][0]["text"]


# ---------------------------------------------------------------- like every behaviour

def test_it_is_a_pure_function_of_the_request():
    _, messages = converse(explained_refusal, turns=6)  # ends with the results of its sixth reply
    client = course.make_client("offline-reckless")
    request = {"model": "offline-reckless", "max_tokens": 1024, "messages": messages[:-2],
               "tools": [{"name": name, "description": name, "input_schema": {"type": "object"}} for name in S06_TOOLS]}

    def without_ids(content):
        return [{key: value for key, value in block.to_dict().items() if key != "id"} for block in content]

    first, second = (client.messages.create(**request) for _ in range(2))
    assert without_ids(first.content) == without_ids(second.content)
    assert without_ids(first.content)[-1]["input"] == messages[-2]["content"][-1]["input"]


def test_it_answers_in_the_language_of_the_task():
    task = "ワークスペースを片づけてから、ファイルの一覧と数を report.txt に書いてください"
    calls, messages = converse(explained_refusal, task=task)
    assert calls[-1][0] == "write_file" and calls[-1][1]["path"] == "report.txt"
    assert "片づけ" in messages[1]["content"][0]["text"] and "report.txt" in answer_of(messages)


@pytest.mark.parametrize("task", ["What is the weather like today?",
                                  "Summarise the work so far for your own later use. Transcript:\n\nuser: hi"])
def test_tasks_it_has_no_plan_for_go_to_the_tutor(task):
    calls, messages = converse(harmless, task=task)
    assert calls == [] and answer_of(messages)
