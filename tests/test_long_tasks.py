"""The offline behaviours for long runs: offline-long-N needs about N turns, offline-verbose is cut."""

from __future__ import annotations

import anthropic
import pytest

import course
from helpers import calls_of, load_stage, tool_uses
from course.__main__ import main
from course.offline import tokens
from course.offline.long_tasks import VERBOSE_REASONING_TOKENS, reasoning_paragraph
from course.lab.scenarios import LEDGER_TASK, TOTAL_TASK, ledger, ledger_amount, ledger_total

pytestmark = pytest.mark.stage()  # these tests drive a stage to test the offline model or a command; they pin none

MAX_TOKENS = 1024  # the stages' reply limit


def run_long(s01, workspace, turns: int):
    return s01.run(LEDGER_TASK, model=f"offline-long-{turns}", workspace=workspace)


@pytest.mark.parametrize("turns", [3, 12, 40])
def test_long_task_takes_n_turns_on_a_folder_of_n_minus_2_files(s01, workspace, turns):
    ledger(workspace, turns - 2)
    result = run_long(s01, workspace, turns)
    assert result["stop_reason"] == "end_turn"
    assert result["turns"] == turns
    assert str(ledger_total(course.snapshot(workspace))) in result["answer"]


def test_long_task_lists_then_reads_one_file_per_turn_with_a_reason(s01, workspace):
    ledger(workspace, 5)
    messages = run_long(s01, workspace, 7)["messages"]
    tool_turns = [message["content"] for message in messages if message["role"] == "assistant"][:-1]
    calls = [tool_uses(content) for content in tool_turns]
    assert [call["name"] for turn in calls for call in turn] == ["list_files"] + ["read_file"] * 5
    assert calls[0][0]["input"] == {"path": "ledger"}
    assert all(len(turn) == 1 for turn in calls)
    assert all(content[0]["type"] == "text" and content[0]["text"].strip() for content in tool_turns)


def test_long_task_adds_the_amounts_the_files_state(s01, workspace):
    (workspace / "ledger").mkdir()
    for name, amount in {"a.txt": 5, "b.txt": 7, "c.txt": 1100}.items():
        (workspace / "ledger" / name).write_text(f"amount: {amount}\n", encoding="utf-8")
    result = run_long(s01, workspace, 10)
    assert "1112" in result["answer"]
    assert result["turns"] == 5


def test_long_task_reads_at_most_n_minus_2_files_and_says_the_total_is_partial(s01, workspace):
    ledger(workspace, 10)
    result = run_long(s01, workspace, 6)
    assert result["turns"] == 6
    partial_total = sum(ledger_amount(number) for number in range(1, 5))
    assert str(partial_total) in result["answer"]
    assert "4 of the 10 files" in result["answer"] and "not the full total" in result["answer"]


def test_long_task_says_so_when_the_folder_does_not_exist(s01, workspace):
    result = run_long(s01, workspace, 20)
    assert result["turns"] == 2
    assert "There is no folder ledger/" in result["answer"]
    assert "add up to" not in result["answer"]


def test_long_model_is_the_tutor_on_other_tasks(s01, workspace):
    result = s01.run("List the files in the workspace", model="offline-long-20", workspace=workspace)
    assert result["turns"] == 2
    assert all(name in result["answer"] for name in course.snapshot(workspace))


def ask_long_model(history: list) -> anthropic.types.Message:
    """One reply of offline-long-20 to a hand-written history (tool_use ids are numbered in order)."""
    messages, number = [{"role": "user", "content": LEDGER_TASK}], 0
    for text, (name, arguments), result in history:
        number += 1
        messages.append({"role": "assistant", "content": [
            {"type": "text", "text": text},
            {"type": "tool_use", "id": f"toolu_{number}", "name": name, "input": arguments}]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{number}", "content": result}]})
    return course.make_client("offline-long-20").messages.create(
        model="offline-long-20", max_tokens=MAX_TOKENS, messages=messages, tools=load_stage("s01").TOOLS)


def test_long_task_keeps_its_total_in_notes_when_old_results_are_pruned():
    pruned = "[removed to save context]"
    history = [
        ("I'll list ledger/ first.", ("list_files", {"path": "ledger"}), pruned),
        ("I'll read ledger/entry-001.txt next.", ("read_file", {"path": "ledger/entry-001.txt"}), pruned),
        ("[total 400 · 1 files · through ledger/entry-001.txt · 0 without amount] I'll read ledger/entry-002.txt next.",
         ("read_file", {"path": "ledger/entry-002.txt"}), "amount: 500\n"),
    ]
    relist = ask_long_model(history)
    assert relist.content[0].text.startswith("[total 900 · 2 files · through ledger/entry-002.txt")
    assert [(block.name, block.input) for block in relist.content[1:]] == [("list_files", {"path": "ledger"})]

    listing = "entry-001.txt\nentry-002.txt\nentry-003.txt\n"
    history.append((relist.content[0].text, ("list_files", {"path": "ledger"}), listing))
    read_next = ask_long_model(history)
    assert read_next.content[0].text.startswith("[total 900 · 2 files")
    assert [(block.name, block.input) for block in read_next.content[1:]] == [("read_file", {"path": "ledger/entry-003.txt"})]

    history.append((read_next.content[0].text, ("read_file", {"path": "ledger/entry-003.txt"}), "amount: 100\n"))
    assert "add up to 1000" in ask_long_model(history).content[0].text


def test_verbose_reasoning_is_longer_than_the_stages_max_tokens():
    paragraph = reasoning_paragraph(TOTAL_TASK)
    assert tokens.text_tokens(paragraph) > VERBOSE_REASONING_TOKENS > MAX_TOKENS
    assert paragraph == reasoning_paragraph(TOTAL_TASK)  # deterministic, like every behaviour


def test_verbose_reply_is_cut_by_max_tokens_and_its_tool_call_lost(s01, workspace):
    result = s01.run(TOTAL_TASK, model="offline-verbose", workspace=workspace)
    assert result["stop_reason"] == "max_tokens"
    assert result["turns"] == 1
    reply = result["messages"][-1]["content"]
    assert [block["type"] for block in reply] == ["text"]
    assert tokens.text_tokens(reply[0]["text"]) <= MAX_TOKENS < tokens.text_tokens(reasoning_paragraph(TOTAL_TASK))


def test_verbose_model_acts_when_max_tokens_leaves_room():
    client = course.make_client("offline-verbose")
    reply = client.messages.create(model="offline-verbose", max_tokens=4 * MAX_TOKENS,
                                   messages=[{"role": "user", "content": TOTAL_TASK}],
                                   tools=load_stage("s01").TOOLS)
    assert reply.stop_reason == "tool_use"
    assert calls_of(reply) == [("read_file", {"path": "sample.txt"})]


def test_models_command_lists_the_long_and_verbose_models(capsys):
    assert main(["models"]) == 0
    listed = capsys.readouterr().out.split()
    assert "offline-long-N" in listed and "offline-verbose" in listed
