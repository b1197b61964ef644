"""Every stop reason of the Messages API, and every block type, through the offline validation, from
the stage that is about it on (s03, the stop conditions): the history stays valid, the run ends for
a named reason, and every block comes back as it was sent.

Sources: https://platform.claude.com/docs/en/build-with-claude/handling-stop-reasons (pause_turn,
refusal with stop_details, model_context_window_exceeded), https://platform.claude.com/docs/en/build-with-claude/compaction
(stop_reason compaction), https://platform.claude.com/docs/en/api/migration-2026-10-21 (enum-like
fields may gain values).
"""

from __future__ import annotations

import pytest

import course
from course.offline import Reply
from course.helpers.replies import MAX_PAUSES
from helpers import DONE, assert_valid_history, each_stage, load_stage, results_in, scripted_client

FROM_S03 = ("s03", "s04", "s05", "s06")
SERVER_CALL = {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {"query": "agent loops"}}
SERVER_RESULT = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01",
                 "content": [{"type": "web_search_result", "url": "https://example.com", "title": "Loops",
                              "encrypted_content": "abc", "page_age": None}]}
FUTURE = {"type": "hologram_2027", "payload": {"frames": [1, 2]}, "id": "holo_1"}  # a type no stage knows
LIST = {"type": "tool_use", "id": "toolu_list", "name": "list_files", "input": {}}


def run(stage_name, client, workspace, **options):
    extra = {"approver": None, "audit_log": False} if stage_name == "s06" else {}
    return load_stage(stage_name).run("Look around", client=client, model="scripted", workspace=workspace,
                                      runs_log=False, transcript=False, **extra, **options)


def unmarked(content: list) -> list:
    """Blocks as recorded: s05 on adds cache breakpoints to the copy it sends, never to the history."""
    return [{key: value for key, value in block.items() if key != "cache_control"} for block in content]


def assistant_contents(messages):
    return [message["content"] for message in messages if message["role"] == "assistant"]


@pytest.mark.parametrize("stage_name", each_stage(*FROM_S03))
def test_a_paused_turn_is_sent_back_as_it_is_and_goes_on(stage_name, workspace):
    paused = [{"type": "text", "text": "Searching."}, SERVER_CALL, SERVER_RESULT]
    client, requests = scripted_client(Reply(blocks=paused, stop_reason="pause_turn"), DONE)
    result = run(stage_name, client, workspace)
    assert result.stop_reason == "end_turn" and len(requests) == 2
    assert requests[1]["messages"][-1]["role"] == "assistant"
    assert unmarked(requests[1]["messages"][-1]["content"]) == paused  # as it came, nothing added
    assert_valid_history(result.messages)


@pytest.mark.parametrize("stage_name", each_stage(*FROM_S03))
def test_a_turn_that_keeps_pausing_stops_for_a_named_reason(stage_name, workspace):
    client, requests = scripted_client(*[Reply(blocks=[SERVER_CALL], stop_reason="pause_turn")] * (MAX_PAUSES + 3))
    result = run(stage_name, client, workspace)
    assert result.stop_reason == "kept_pausing" and len(requests) == MAX_PAUSES + 1
    assert "paused" in result.explanation and "pause_turn" in result.explanation
    assert_valid_history(result.messages)


@pytest.mark.parametrize("stage_name", each_stage(*FROM_S03))
def test_a_compaction_stop_goes_on_with_the_compaction_block_sent_back(stage_name, workspace):
    compaction = {"type": "compaction", "content": "Summary: the workspace was listed."}
    client, requests = scripted_client(Reply(blocks=[compaction], stop_reason="compaction"), DONE)
    result = run(stage_name, client, workspace)
    assert result.stop_reason == "end_turn" and unmarked(requests[1]["messages"][-1]["content"]) == [compaction]
    assert_valid_history(result.messages)


@pytest.mark.parametrize("stage_name", each_stage(*FROM_S03))
def test_a_refusal_says_what_stop_details_says_and_is_never_sent_again(stage_name, workspace, tmp_path):
    details = {"type": "refusal", "category": "cyber", "explanation": "This looks like\nmalware \x1b[31mwork."}
    client, requests = scripted_client(Reply(blocks=[{"type": "text", "text": "I can't."}, LIST],
                                             stop_reason="refusal", stop_details=details))
    transcript = tmp_path / "run.jsonl"
    extra = {"approver": None, "audit_log": False} if stage_name == "s06" else {}
    stage = load_stage(stage_name)
    result = stage.run("Look around", client=client, model="scripted", workspace=workspace, runs_log=False,
                       transcript=transcript, **extra)
    assert result.stop_reason == "refusal" and len(requests) == 1
    assert "cyber" in result.explanation and "malware" in result.explanation
    assert "\n" not in result.explanation and "\x1b" not in result.explanation  # one line, shown as data
    assert [block["tool_use_id"] for block in results_in(result.messages)] == ["toolu_list"]  # answered, not run
    assert_valid_history(result.messages)
    with pytest.raises(course.CourseError, match="start a new run"):  # resuming would send the refused turn again
        stage.run(client=client, model="scripted", workspace=workspace, runs_log=False, resume=transcript, **extra)
    assert len(requests) == 1


@pytest.mark.parametrize("stage_name", each_stage(*FROM_S03))
def test_a_refusal_without_stop_details_still_says_the_model_declined(stage_name, workspace):
    client, _ = scripted_client(Reply(stop_reason="refusal").text("No."))
    result = run(stage_name, client, workspace)
    assert result.stop_reason == "refusal" and "declined" in result.explanation


@pytest.mark.parametrize("stage_name", each_stage(*FROM_S03))
def test_an_unknown_stop_reason_stops_for_a_named_reason_that_quotes_it(stage_name, workspace):
    client, requests = scripted_client(Reply(blocks=[{"type": "text", "text": "Hm."}, LIST], stop_reason="daydreaming"))
    result = run(stage_name, client, workspace)
    assert result.stop_reason == "unknown_stop_reason" and "'daydreaming'" in result.explanation
    [answer] = results_in(result.messages)
    assert len(requests) == 1 and answer["is_error"] and "not run" in answer["content"]  # answered, not run
    assert_valid_history(result.messages)


@pytest.mark.parametrize("stage_name", each_stage("s03"))
def test_a_reply_cut_by_a_full_context_window_stops_s03_with_the_history_valid(stage_name, workspace):
    client, _ = scripted_client(Reply(blocks=[{"type": "text", "text": "Let me"}, LIST],
                                      stop_reason="model_context_window_exceeded"))
    result = run(stage_name, client, workspace)
    assert result.stop_reason == "model_context_window_exceeded" and "context window" in result.explanation
    assert_valid_history(result.messages)


@pytest.mark.parametrize("stage_name", each_stage("s04", "s05", "s06"))
def test_a_reply_cut_by_a_full_context_window_is_recovered_like_a_cut_reply(stage_name, workspace):
    read = {"type": "tool_use", "id": "toolu_cut", "name": "read_file", "input": {}}
    client, requests = scripted_client(Reply(blocks=[LIST, read], stop_reason="model_context_window_exceeded"), DONE)
    result = run(stage_name, client, workspace)
    listed, cut = results_in(result.messages)
    assert result.stop_reason == "end_turn" and len(requests) == 2
    assert listed["tool_use_id"] == "toolu_list" and not listed["is_error"]  # the whole call ran
    assert cut["tool_use_id"] == "toolu_cut" and cut["is_error"] and "cut" in cut["content"]  # answered, not run
    assert_valid_history(result.messages)


@pytest.mark.parametrize("stage_name", each_stage(*FROM_S03))
def test_blocks_of_types_no_stage_knows_are_kept_sent_back_and_never_run(stage_name, workspace):
    sent = [{"type": "text", "text": "Looking."}, SERVER_CALL, SERVER_RESULT, FUTURE, LIST]
    client, requests = scripted_client(sent, DONE)
    result = run(stage_name, client, workspace)
    assert result.stop_reason == "end_turn" and result.tool_calls == {"list_files": 1}
    assert unmarked(requests[1]["messages"][1]["content"]) == sent and assistant_contents(result.messages)[0] == sent
    assert_valid_history(result.messages)


@pytest.mark.parametrize("stage_name", each_stage("s01", "s02"))
def test_earlier_stages_keep_blocks_they_do_not_know_too(stage_name, workspace):
    sent = [SERVER_CALL, SERVER_RESULT, FUTURE, LIST]
    client, requests = scripted_client(sent, DONE)
    stage = load_stage(stage_name)
    options = {"transcript": False} if stage_name == "s02" else {}
    result = stage.run("Look around", client=client, model="scripted", workspace=workspace, **options)
    messages = result.messages if hasattr(result, "messages") else result["messages"]
    assert requests[1]["messages"][1]["content"] == sent and assistant_contents(messages)[0] == sent


@pytest.mark.parametrize("stage_name", each_stage("s05", "s06"))
def test_a_full_context_window_makes_s05_prune_whatever_its_triggers_and_ask_again(stage_name, workspace):
    reads = [[{"type": "tool_use", "id": f"toolu_{index}", "name": "read_file", "input": {"path": path}}]
             for index, path in enumerate(["memo.md", "todo.md", "hello.txt", "sample.txt"])]
    cut = Reply(blocks=[{"type": "text", "text": "The files say"}], stop_reason="model_context_window_exceeded")
    client, requests = scripted_client(*reads, cut, DONE)
    result = run(stage_name, client, workspace)
    assert result.stop_reason == "end_turn" and len(requests) == 6
    masked = [block for block in results_in(requests[5]["messages"]) if block["content"].startswith("[masked")]
    assert len(masked) == 2 and not any(r["content"].startswith("[masked") for r in results_in(requests[4]["messages"]))
    assert_valid_history(result.messages)
