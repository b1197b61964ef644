"""offline-flood-N: a long log-counting task that keeps honest notes, read whole or pruned."""

from __future__ import annotations

import json
import re

import pytest

import course
from helpers import calls_of, load_stage, run_flood, tool_uses
from course.offline import behaviour_for
from course.offline.conversation import read_request
from course.offline.flood import COUNT_TASK, LOGS_FOLDER, error_total, log_text, logs

pytestmark = pytest.mark.stage()  # these tests drive a stage to test the offline model or a command; they pin none

NOTE = re.compile(r"(logs/app-\d{3}\.log) has (\d+) ERROR lines; running total (\d+); (\d+) of (\d+) files read")


def error_lines_of(number: int) -> int:
    return sum(1 for line in log_text(number).splitlines() if line.split()[2] == "ERROR")


def notes_of(messages: list) -> list[tuple[str, int, int, int, int]]:
    texts = [block["text"] for message in messages if message["role"] == "assistant"
             for block in message["content"] if block["type"] == "text"]
    return [(path, int(count), int(total), int(read), int(of))
            for text in texts for path, count, total, read, of in NOTE.findall(text)]


# ---------------------------------------------------------------- the logs

def test_logs_are_deterministic_and_each_fits_s04s_cut(workspace):
    logs(workspace, 12)
    files = sorted((workspace / LOGS_FOLDER).iterdir())
    assert [file.name for file in files] == [f"app-{number:03d}.log" for number in range(1, 13)]
    assert all(3_500 <= len(file.read_text(encoding="utf-8")) < 4_000 for file in files)
    assert files[4].read_text(encoding="utf-8") == log_text(5)
    levels = {line.split()[2] for file in files for line in file.read_text(encoding="utf-8").splitlines()}
    assert levels == {"INFO", "WARN", "ERROR"}


def test_error_total_counts_the_level_field_not_the_word():
    snapshot = {"logs/app-001.log": (b"2025-03-01 00:00:01 ERROR db: job 1 failed\n"
                                     b"2025-03-01 00:00:02 INFO  api: retried after a transient error\n"
                                     b"2025-03-01 00:00:03 WARN  api: error budget at 50%\n"),
                "memo.md": b"ERROR ERROR\n"}
    assert error_total(snapshot) == 1


# ---------------------------------------------------------------- unpruned: everything stays visible

def test_notes_record_each_files_count_the_running_total_and_the_progress(workspace):
    result, _ = run_flood("s04", workspace, 6)
    assert result.stop_reason == "end_turn" and result.turns == 8
    notes = notes_of(result.messages)
    expected, total = [], 0
    for number in range(1, 6):  # the note on the last file is its answer, not a note
        total += error_lines_of(number)
        expected.append((f"logs/app-{number:03d}.log", error_lines_of(number), total, number, 6))
    assert notes == expected
    assert str(error_total(course.snapshot(workspace))) in result.answer
    assert "all 6 log files" in result.answer


def test_lists_then_reads_one_log_per_turn_each_after_a_note(workspace):
    result, _ = run_flood("s04", workspace, 4)
    replies = [message["content"] for message in result.messages if message["role"] == "assistant"][:-1]
    calls = [tool_uses(content) for content in replies]
    assert [turn[0]["name"] for turn in calls] == ["list_files"] + ["read_file"] * 4
    assert [turn[0]["input"] for turn in calls[1:]] == [{"path": f"logs/app-{n:03d}.log"} for n in range(1, 5)]
    assert all(len(turn) == 1 for turn in calls)
    assert "0 of 4 files read; next logs/app-001.log" in replies[1][0]["text"]


def test_reads_at_most_n_files_and_says_the_count_is_partial(workspace):
    result, _ = run_flood("s04", workspace, 8, model_files=5)
    partial = sum(error_lines_of(number) for number in range(1, 6))
    assert result.turns == 7
    assert "after 5 of the 8 log files" in result.answer and str(partial) in result.answer
    assert "not the full count" in result.answer


def test_a_missing_folder_is_reported_not_guessed(workspace):
    model = "offline-flood-10"
    result = course.as_dict(load_stage("s04").run(COUNT_TASK, client=course.make_client(model), model=model,
                                                  workspace=workspace, runs_log=False))
    assert result["stop_reason"] == "end_turn"
    assert "could not count" in result["answer"] and "did not guess" in result["answer"]


def test_a_japanese_task_gets_japanese_notes_and_the_right_total(workspace):
    logs(workspace, 5)
    model = "offline-flood-5"
    task = "logs フォルダのすべてのログファイルの ERROR 行を数えてください"
    result = course.as_dict(load_stage("s05").run(task, client=course.make_client(model), model=model,
                                                  workspace=workspace, runs_log=False))
    assert result["stop_reason"] == "end_turn"
    assert f"ERROR 行は合計 {error_total(course.snapshot(workspace))} 件" in result["answer"]


def test_other_tasks_go_to_the_tutor(workspace):
    result = course.as_dict(load_stage("s04").run("List the files in the workspace", model="offline-flood-3",
                                                  client=course.make_client("offline-flood-3"),
                                                  workspace=workspace, runs_log=False))
    assert "memo.md" in result["answer"]


# ---------------------------------------------------------------- pruned: the notes carry the work

def test_on_a_pruned_run_it_counts_from_its_notes_and_gets_the_total_right(workspace):
    result, _ = run_flood("s05", workspace, 12)
    assert result.stop_reason == "end_turn"
    assert str(error_total(course.snapshot(workspace))) in result.answer
    results = [block["content"] for message in result.messages if message["role"] == "user"
               and isinstance(message["content"], list) for block in message["content"]]
    masked = [content for content in results if content.startswith("[masked")]
    assert len(masked) == len(results) - load_stage("s05").KEEP_RESULTS  # it never had to read a log twice
    assert [path for path, *_ in notes_of(result.messages)] == [f"logs/app-{n:03d}.log" for n in range(1, 12)]


def test_after_a_summary_it_continues_from_the_note_in_the_summary(workspace, monkeypatch):
    s05 = load_stage("s05")
    monkeypatch.setattr(s05, "SUMMARY_THRESHOLD", 4_000)
    result, _ = run_flood("s05", workspace, 20)
    assert result.stop_reason == "end_turn"
    assert str(error_total(course.snapshot(workspace))) in result.answer
    first = result.messages[0]["content"]
    assert first.startswith(COUNT_TASK) and s05.SUMMARY_HEADING in first
    reads = [arguments["path"] for _, arguments in calls_of(result.messages)]
    assert len(reads) == len(set(reads))  # no log read twice, none skipped (the last ones are still in view)


def flood_request(messages: list) -> dict:
    return {"model": "offline-flood-40", "max_tokens": 1024, "messages": messages,
            "tools": [{"name": name, "input_schema": {"type": "object"}} for name in ("list_files", "read_file")]}


def exchange(number: int, text: str, result: str, call: str = "read_file", path: str | None = None) -> list[dict]:
    use = {"type": "tool_use", "id": f"toolu_{number}", "name": call,
           "input": {"path": path or f"logs/app-{number:03d}.log"}}
    return [{"role": "assistant", "content": [{"type": "text", "text": text}, use]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{number}", "content": result}]}]


def test_a_masked_result_is_not_counted_the_latest_note_is_trusted():
    masked = "[masked to save context: the result of read_file {...}, 3600 characters. Call it again if you need it.]"
    messages = [{"role": "user", "content": COUNT_TASK}]
    messages += exchange(0, "I'll list logs/ first.", masked, call="list_files", path="logs")
    messages += exchange(7, "logs/app-006.log has 2 ERROR lines; running total 18; 6 of 40 files read; "
                            "next logs/app-007.log.", masked)
    visible = json.dumps({"ok": True, "output": log_text(8)})
    messages += exchange(8, "logs/app-007.log has 3 ERROR lines; running total 21; 7 of 40 files read; "
                            "next logs/app-008.log.", visible)
    reply = behaviour_for("offline-flood-40")(read_request(flood_request(messages)))
    text = reply.blocks[0]["text"]
    assert text == (f"logs/app-008.log has {error_lines_of(8)} ERROR lines; running total {21 + error_lines_of(8)}; "
                    "8 of 40 files read; next logs/app-009.log.")
    assert reply.blocks[1]["input"] == {"path": "logs/app-009.log"}


def test_with_no_listing_and_no_note_in_view_it_lists_again():
    masked = "[masked to save context: the result of list_files {...}. Call it again if you need it.]"
    messages = [{"role": "user", "content": COUNT_TASK}] + exchange(0, "Listing.", masked, call="list_files", path="logs")
    reply = behaviour_for("offline-flood-40")(read_request(flood_request(messages)))
    assert reply.blocks[-1]["name"] == "list_files"


def test_when_the_note_says_all_files_are_read_it_answers_from_the_note():
    summary = (f"{COUNT_TASK}\n\n[Summary]\nNotes:\n- logs/app-039.log has 1 ERROR lines; running total 400; "
               "39 of 40 files read; next logs/app-040.log.\n")
    messages = [{"role": "user", "content": summary}]
    messages += exchange(40, "logs/app-039.log has 1 ERROR lines; running total 400; 39 of 40 files read; "
                             "next logs/app-040.log.", json.dumps({"ok": True, "output": log_text(40)}))
    reply = behaviour_for("offline-flood-40")(read_request(flood_request(messages)))
    assert reply.blocks == [{"type": "text", "text": f"I read all 40 log files of logs/: they hold "
                                                     f"{400 + error_lines_of(40)} ERROR lines in total."}]
