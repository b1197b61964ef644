"""A malformed reply or an odd file name never crashes a run, in any stage.

A tool_use whose name is a list or a dict would raise TypeError (unhashable) where names are counted
(tool_metrics, no_progress: s03 on); a file name that is not UTF-8 (kept by Python as surrogate
escapes), returned by list_files, search_files or a not-found hint, would raise UnicodeEncodeError
when the history is encoded (the SDK, prune's estimate). Each stage must go on, say what went wrong
in one result, and keep a history that encodes.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import shutil
import time

import pytest

import course
from helpers import DONE, assert_valid_history, load_stage, scripted_client, each_stage, tool_uses
from local_server import serving_bytes, serving_slowly

STAGES = ["s00", "s01", "s02", "s03", "s04", "s05", "s06"]


def run_stage(stage, workspace, *replies):
    client, requests = scripted_client(*replies, [{"type": "text", "text": "Done."}])
    options = dict(client=client, model="scripted", workspace=workspace)
    parameters = inspect.signature(stage.run).parameters
    options.update({key: value for key, value in (("audit_log", False), ("runs_log", False), ("approver", None))
                    if key in parameters})
    return stage.run("Look around", **options), requests


@pytest.fixture
def workspace(tmp_path):
    workspace = tmp_path / "workspace"
    shutil.copytree(course.SAMPLE, workspace)
    os.mkdir(os.fsencode(workspace) + b"/bad\xffname")  # a name that is not UTF-8
    return workspace


@pytest.mark.parametrize("stage_name", each_stage(*STAGES))
@pytest.mark.parametrize("name", [["read_file"], {"tool": "read_file"}, 7])
def test_a_tool_name_that_is_not_text_fails_as_one_call(stage_name, name, workspace):
    stage = load_stage(stage_name)
    _, requests = run_stage(stage, workspace,
                            [{"type": "tool_use", "id": "toolu_1", "name": name, "input": {"path": "memo.md"}}])
    sent = json.loads(requests[-1]) if isinstance(requests[-1], str) else requests[-1]
    history = json.dumps(sent, ensure_ascii=False)
    assert "toolu_1" in history and "read_file" in history  # answered; the name kept as text, for the model to see
    assert all(isinstance(block["name"], str) for block in tool_uses(sent["messages"]))


@pytest.mark.parametrize("stage_name", each_stage(*STAGES))
def test_a_file_name_that_is_not_utf8_is_shown_and_the_history_still_encodes(stage_name, workspace):
    stage = load_stage(stage_name)
    calls = [[{"type": "tool_use", "id": "toolu_1", "name": "list_files", "input": {"path": "."}}],
             [{"type": "tool_use", "id": "toolu_2", "name": "search_files", "input": {"text": "no-such-text-anywhere"}}],
             [{"type": "tool_use", "id": "toolu_3", "name": "read_file", "input": {"path": "bad-name"}}]]
    _, requests = run_stage(stage, workspace, *calls[:1 if stage_name == "s00" else 3])
    last = requests[-1] if isinstance(requests[-1], str) else json.dumps(requests[-1])
    last.encode("utf-8")  # what the SDK does; an unescaped name would raise UnicodeEncodeError
    assert re.search(r"bad\\+xffname", last)  # the name, its odd byte shown as \xff (JSON-escaped once or twice)


def test_shown_keeps_utf8_names_and_escapes_only_the_odd_bytes():
    assert course.shown("mémo.md") == "mémo.md"
    assert course.shown(os.fsdecode(b"a\xffb")) == "a\\xffb"


# A local server (ANTHROPIC_BASE_URL) whose JSON holds what JSON cannot carry on the way back (NaN, a
# lone surrogate), or what Python's JSON reader refuses (a list nested 950 deep, an integer of 5,000
# digits). The first two reach the stage and would make the next request or the transcript fail; the
# last two make the SDK raise ValueError or RecursionError, no API error, and would crash the run.
# Real HTTP on loopback, through course.make_client, as a
# learner's llama.cpp is reached; the bytes are raw because the offline model's encoder refuses them.
def raw_reply(content: bytes, stop_reason: bytes = b"tool_use") -> bytes:
    return (b'{"id":"m1","type":"message","role":"assistant","model":"x","content":[' + content +
            b'],"stop_reason":"' + stop_reason + b'","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}')


def read_call(tool_input: bytes) -> bytes:
    return raw_reply(b'{"type":"tool_use","id":"toolu_1","name":"read_file","input":' + tool_input + b"}")


DONE_REPLY = raw_reply(b'{"type":"text","text":"Done."}', b"end_turn")
CARRIED_BACK = read_call(b'{"path":"memo\\ud800.md","offset":NaN,"\\ud800":1}')
UNREADABLE = {"a list nested 950 deep": read_call(b'{"path":"memo.md","offset":' + b"[" * 950 + b"1" + b"]" * 950 + b"}"),
              "an integer of 5,000 digits": read_call(b'{"path":"memo.md","offset":' + b"9" * 5000 + b"}"),
              "no JSON at all": b"<html>502 Bad Gateway</html>"}
USAGE = b'"usage":{"input_tokens":1,"output_tokens":1}'
# Replies whose JSON reads but is no Messages API reply a stage can take: each would crash
# s06 deep inside (AttributeError, TypeError, KeyError), where it expects an API error. And three bodies
# that are not labelled JSON, which the SDK hands over as a string.
NOT_A_REPLY = {
    "null": (b"null", "application/json"),
    "a list": (b"[1,2]", "application/json"),
    "content null": (b'{"content":null,' + USAGE + b"}", "application/json"),
    "content a string": (b'{"content":"hi",' + USAGE + b"}", "application/json"),
    "no usage": (b'{"content":[{"type":"text","text":"Done."}]}', "application/json"),
    "tokens as strings": (b'{"content":[],"usage":{"input_tokens":"1","output_tokens":"1"}}', "application/json"),
    "a block with no type": (b'{"content":[{"text":"Done."}],' + USAGE + b"}", "application/json"),
    "a call with no input": (b'{"content":[{"type":"tool_use","id":"t1","name":"list_files"}],' + USAGE + b"}",
                             "application/json"),
    "text that is null": (b'{"content":[{"type":"text","text":null}],' + USAGE + b"}", "application/json"),
    "a call id that is an object": (b'{"content":[{"type":"tool_use","id":{"a":1},"name":"list_files","input":{}}],'
                                    + USAGE + b"}", "application/json"),
    "an HTML page labelled text/plain": (b"<html>oops</html>", "text/plain"),
    "deep JSON labelled text/html": (UNREADABLE["a list nested 950 deep"], "text/html"),
    "a huge integer with no label": (UNREADABLE["an integer of 5,000 digits"], None),
    "400-digit token counts": (b'{"content":[{"type":"text","text":"Done."}],"usage":{"input_tokens":1' + b"0" * 400
                               + b',"output_tokens":1}}', "application/json"),
    "one tool_use id twice": (b'{"content":[{"type":"tool_use","id":"a","name":"list_files","input":{}},'
                              b'{"type":"tool_use","id":"a","name":"list_files","input":{}}],' + USAGE + b"}",
                              "application/json"),
}


def run_against(stage_name: str, replies: list[bytes], workspace, monkeypatch, content_type="application/json"):
    """Run the stage against a loopback server sending ``replies`` in turn (the last one again after)."""
    stage = load_stage(stage_name)
    options = dict(workspace=workspace)
    parameters = inspect.signature(stage.run).parameters
    options.update({key: value for key, value in (("audit_log", False), ("runs_log", False), ("approver", None))
                    if key in parameters})
    with serving_bytes(lambda number: replies[min(number, len(replies)) - 1], content_type) as url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        return stage.run("Look around", client=course.make_client("local-model", max_retries=0), model="local-model",
                         **options)


@pytest.mark.parametrize("stage_name", each_stage(*STAGES))
def test_a_reply_json_cannot_carry_back_is_recorded_so_that_the_history_still_encodes(stage_name, workspace, monkeypatch):
    result = run_against(stage_name, [CARRIED_BACK, DONE_REPLY], workspace, monkeypatch)
    messages = result["messages"] if isinstance(result, dict) else result.messages
    json.dumps(messages, allow_nan=False).encode("utf-8")  # what the API and the transcript need
    if stage_name != "s00":
        assert messages[-1]["content"][0]["text"] == "Done."  # the history went back to the server
    if getattr(result, "transcript", None):
        assert course.runtime.transcript.load(result.transcript).history()


def assert_stopped_in_one_line(stage_name: str, replies: list[bytes], workspace, monkeypatch, content_type="application/json"):
    import anthropic

    if stage_name in ("s00", "s01"):  # API errors are handled from s02 on: here the SDK's own error is raised
        with pytest.raises(anthropic.InternalServerError, match="not one the course can read"):
            run_against(stage_name, replies, workspace, monkeypatch, content_type)
        return
    result = run_against(stage_name, replies, workspace, monkeypatch, content_type)
    assert result.stop_reason == "api_error"
    explained = " ".join(filter(None, [getattr(result, "explanation", ""), result.answer]))
    assert "not one the course can read" in explained and "\n" not in explained
    assert [message["role"] for message in result.messages] == ["user"]  # nothing half-recorded


@pytest.mark.parametrize("unreadable", UNREADABLE)
@pytest.mark.parametrize("stage_name", each_stage(*STAGES))
def test_a_reply_json_cannot_read_is_an_api_error_that_says_so(stage_name, unreadable, workspace, monkeypatch):
    assert_stopped_in_one_line(stage_name, [UNREADABLE[unreadable]], workspace, monkeypatch)


@pytest.mark.parametrize("shape", NOT_A_REPLY)
@pytest.mark.parametrize("stage_name", each_stage("s02", "s06"))  # the first stage that ends on an API error, and the last
def test_a_reply_that_is_no_messages_reply_is_an_api_error_that_says_so(stage_name, shape, workspace, monkeypatch):
    body, content_type = NOT_A_REPLY[shape]
    assert_stopped_in_one_line(stage_name, [body], workspace, monkeypatch, content_type)


@pytest.mark.parametrize("stage_name", each_stage("s04", "s05", "s06"))
def test_a_call_written_as_text_with_an_escaped_lone_surrogate_is_answered_in_json_that_encodes(stage_name, workspace):
    written = 'Computing: {"name": "calculate", "arguments": {"expression": "1+\\ud800"}}'
    client, requests = scripted_client([{"type": "text", "text": written}], [{"type": "text", "text": "Done."}])
    result = load_stage(stage_name).run("Add", client=client, model="scripted", workspace=workspace,
                                        **({"approver": None, "audit_log": False} if stage_name == "s06" else {}))
    assert result.stop_reason == "end_turn" and len(requests) == 2  # the unescaped surrogate would crash the next request
    json.dumps(result.messages, ensure_ascii=False).encode("utf-8")


def test_sendable_cuts_what_is_nested_deeper_than_json_can_follow():
    deep = "leaf"
    for _ in range(950):
        deep = [deep]
    kept = course.sendable({"input": deep})
    json.dumps(kept)  # a RecursionError here before the cut
    assert kept["input"][0][0] and "[cut: nested more than 100 levels deep]" in json.dumps(kept)
    assert course.sendable({"a": [[1, {"b": 2.5}]]}) == {"a": [[1, {"b": 2.5}]]}


def test_a_server_that_reuses_a_tool_use_id_on_a_later_turn_ends_the_run_with_a_history_the_api_takes(workspace, monkeypatch):
    call = read_call(b'{"path":"memo.md"}')  # the same id, toolu_1, every time
    result = run_against("s06", [call, call, DONE_REPLY], workspace, monkeypatch)
    assert result.stop_reason == "api_error" and "'toolu_1' is used twice" in result.explanation
    assert_valid_history(result.messages)  # still valid


# A scripted model (course.make_client(behaviour=...)) may send what a broken local server would, and
# meets the same check: each of these would crash s02-s06, or leave a history no request could send
# again, so that every resume would fail too.
SCRIPTED_NOT_A_REPLY = {
    "text that is null": [{"type": "text", "text": None}],
    "text that is missing": [{"type": "text"}],
    "text that is null beside a call": [{"type": "text", "text": None},
                                        {"type": "tool_use", "id": "t1", "name": "list_files", "input": {}}],
    "a call with no input": [{"type": "tool_use", "id": "t1", "name": "list_files"}],
    "a call id that is an object": [{"type": "tool_use", "id": {"a": 1}, "name": "list_files", "input": {}}],
    "one tool_use id twice": [{"type": "tool_use", "id": "a", "name": "list_files", "input": {}},
                              {"type": "tool_use", "id": "a", "name": "list_files", "input": {}}],
}


@pytest.mark.parametrize("shape", SCRIPTED_NOT_A_REPLY)
@pytest.mark.parametrize("stage_name", each_stage("s02", "s03", "s04", "s05", "s06"))
def test_a_scripted_reply_no_stage_can_take_ends_the_run_in_one_line_and_a_resume_goes_on(stage_name, shape, workspace):
    stage = load_stage(stage_name)
    options = {"approver": None, "audit_log": False} if stage_name == "s06" else {}
    client, _ = scripted_client(SCRIPTED_NOT_A_REPLY[shape], max_retries=0)
    result = stage.run("Look around", client=client, model="scripted", workspace=workspace, runs_log=False, **options) \
        if stage_name != "s02" else stage.run("Look around", client=client, model="scripted", workspace=workspace)
    assert result.stop_reason == "api_error"
    explained = " ".join(filter(None, [getattr(result, "explanation", ""), result.answer]))
    assert "the scripted model's reply is not one the course can read" in explained and "\n" not in explained
    assert [message["role"] for message in result.messages] == ["user"]
    done, _ = scripted_client(DONE)
    resumed = stage.run(resume=result.transcript, client=done, model="scripted", **options)
    assert resumed.stop_reason == "end_turn"


# Error bodies as some local servers write them, a label that would hide a reply from the check, a
# redirect that would too, and blocks or fields a request may not carry back.
ERRORS = {
    "an error that is a bare string": (400, b'{"error":"model \\"x\\" not found"}', 'model "x" not found'),
    "an error that is a list": (400, b'{"error":["x"]}', '400: {"error":["x"]}'),
    "a message of several lines": (500, b'{"type":"error","error":{"type":"api_error","message":"line one\\nline two"}}',
                                   "line one line two"),
}


@pytest.mark.parametrize("case", ERRORS)
@pytest.mark.parametrize("stage_name", each_stage("s02", "s05"))
def test_an_error_body_of_any_shape_is_one_line(stage_name, case, workspace, monkeypatch):
    status, body, shown = ERRORS[case]
    result = run_against(stage_name, [(status, body)], workspace, monkeypatch)
    explained = " ".join(filter(None, [getattr(result, "explanation", ""), result.answer]))
    assert result.stop_reason == "api_error" and shown in explained and "\n" not in explained


@pytest.mark.parametrize("stage_name", each_stage("s02", "s06"))
def test_a_reply_labelled_as_a_stream_is_checked_all_the_same(stage_name, workspace, monkeypatch):
    body, _ = NOT_A_REPLY["content null"]
    assert_stopped_in_one_line(stage_name, [body], workspace, monkeypatch, "text/event-stream")


@pytest.mark.parametrize("stage_name", each_stage("s02", "s06"))
def test_a_redirect_is_not_followed_past_the_check(stage_name, workspace, monkeypatch):
    body, _ = NOT_A_REPLY["content null"]
    result = run_against(stage_name, [(307, b"", {"location": "/v1/messagesx"}), body], workspace, monkeypatch)
    assert result.stop_reason == "api_error" and "307" in (getattr(result, "explanation", "") or result.answer)
    assert [message["role"] for message in result.messages] == ["user"]


BLOCKS_SENT_BACK = {  # block: as the stage records it and sends it back
    "a thinking block": ({"type": "thinking", "thinking": "hm", "signature": "x", "extra": 1},
                         {"type": "thinking", "thinking": "hm", "signature": "x"}),
    "a redacted thinking block": ({"type": "redacted_thinking", "data": "x"}, {"type": "redacted_thinking", "data": "x"}),
    "a text block with cache_control": ({"type": "text", "text": "hi", "cache_control": {"type": "persistent"}},
                                        {"type": "text", "text": "hi"}),
}


@pytest.mark.parametrize("block", BLOCKS_SENT_BACK)
@pytest.mark.parametrize("stage_name", each_stage("s02", "s05", "s06"))
def test_blocks_are_sent_back_with_only_the_fields_a_request_may_carry_and_the_run_goes_on(stage_name, block, workspace):
    stage = load_stage(stage_name)
    options = {"approver": None, "audit_log": False} if stage_name == "s06" else {}
    call = {"type": "tool_use", "id": "t1", "name": "list_files", "input": {}, "cache_control": {"type": "ephemeral"}}
    sent, recorded = BLOCKS_SENT_BACK[block]
    client, requests = scripted_client([sent, call], DONE)
    result = stage.run("Look around", client=client, model="scripted", workspace=workspace, **options)
    assert result.stop_reason == "end_turn" and len(requests) == 2  # the history went back, and was taken
    kept = [recorded] if recorded else []
    assert result.messages[1]["content"] == kept + [{"type": "tool_use", "id": "t1", "name": "list_files", "input": {}}]


@pytest.mark.parametrize("name", [["x"], {"a": 1}, 5])
@pytest.mark.parametrize("stage_name", each_stage("s04", "s05", "s06"))
def test_a_call_written_as_text_whose_name_is_not_text_is_no_call(stage_name, name, workspace):
    written = json.dumps({"name": name, "arguments": {}})  # a TypeError (unhashable) would crash the run
    client, requests = scripted_client([{"type": "text", "text": written}])
    result = load_stage(stage_name).run("Add", client=client, model="scripted", workspace=workspace,
                                        **({"approver": None, "audit_log": False} if stage_name == "s06" else {}))
    assert result.stop_reason == "end_turn" and len(requests) == 1


@pytest.mark.parametrize("stage_name", each_stage("s02", "s06"))
def test_a_task_holding_a_byte_that_is_not_utf8_runs_and_is_saved(stage_name, tmp_path, monkeypatch, capsys):
    stage = load_stage(stage_name)
    task = os.fsdecode(b"List the files \xff")  # as Python hands over a command line it cannot decode
    assert course.stage_main(stage_name, stage.run, ["--model", "offline", "--workspace", str(tmp_path), task]) == 0
    saved = course.runtime.transcript.load(course.runtime.transcript.find("last", stage_name))
    assert saved.history()[0]["content"] == "List the files ?"


@pytest.mark.stage("s02")  # the first stage that ends on an API error
def test_a_reply_still_arriving_at_the_deadline_ends_the_run_in_one_line(workspace, monkeypatch):
    from course.running.client import CheckedReplies

    monkeypatch.setattr(CheckedReplies, "reply_deadline_s", 0.5)  # the SDK only bounds each read
    with serving_slowly(DONE_REPLY, seconds_per_byte=0.05) as url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        started = time.monotonic()
        result = load_stage("s02").run("Look around", client=course.make_client("local-model", max_retries=0),
                                       model="local-model", workspace=workspace)
    assert result.stop_reason == "api_error" and "took longer than 0.5 s to arrive" in result.answer
    assert time.monotonic() - started < 3
