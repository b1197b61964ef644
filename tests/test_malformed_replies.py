"""A malformed reply or an odd file name never crashes a run, in any stage (red-team finding 6 on s06).

A tool_use whose name is a list or a dict used to raise TypeError (unhashable) where names are counted
(tool_metrics, no_progress: s03 on); a file name that is not UTF-8 (kept by Python as surrogate
escapes), returned by list_files, search_files or a not-found hint, used to raise UnicodeEncodeError
when the history was encoded (the SDK, prune's estimate). Each stage must go on, say what went wrong
in one result, and keep a history that encodes.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import shutil

import pytest

import course
from helpers import load_stage, scripted_client

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


@pytest.mark.parametrize("stage_name", STAGES)
@pytest.mark.parametrize("name", [["read_file"], {"tool": "read_file"}, 7])
def test_a_tool_name_that_is_not_text_fails_as_one_call(stage_name, name, workspace):
    stage = load_stage(stage_name)
    _, requests = run_stage(stage, workspace,
                            [{"type": "tool_use", "id": "toolu_1", "name": name, "input": {"path": "memo.md"}}])
    sent = json.loads(requests[-1]) if isinstance(requests[-1], str) else requests[-1]
    history = json.dumps(sent, ensure_ascii=False)
    assert "toolu_1" in history and "read_file" in history  # answered; the name kept as text, for the model to see
    uses = [block for message in sent["messages"] if isinstance(message["content"], list)
            for block in message["content"] if block.get("type") == "tool_use"]
    assert all(isinstance(block["name"], str) for block in uses)


@pytest.mark.parametrize("stage_name", STAGES)
def test_a_file_name_that_is_not_utf8_is_shown_and_the_history_still_encodes(stage_name, workspace):
    stage = load_stage(stage_name)
    calls = [[{"type": "tool_use", "id": "toolu_1", "name": "list_files", "input": {"path": "."}}],
             [{"type": "tool_use", "id": "toolu_2", "name": "search_files", "input": {"text": "no-such-text-anywhere"}}],
             [{"type": "tool_use", "id": "toolu_3", "name": "read_file", "input": {"path": "bad-name"}}]]
    _, requests = run_stage(stage, workspace, *calls[:1 if stage_name == "s00" else 3])
    last = requests[-1] if isinstance(requests[-1], str) else json.dumps(requests[-1])
    last.encode("utf-8")  # what the SDK does; it raised UnicodeEncodeError before
    assert re.search(r"bad\\+xffname", last)  # the name, its odd byte shown as \xff (JSON-escaped once or twice)


def test_shown_keeps_utf8_names_and_escapes_only_the_odd_bytes():
    assert course.shown("mémo.md") == "mémo.md"
    assert course.shown(os.fsdecode(b"a\xffb")) == "a\\xffb"


# A server whose JSON holds what JSON cannot carry on the way back (NaN, a lone surrogate). Python's
# reader accepts both, so the SDK hands them to the stage; the next request or the transcript used
# to fail with ValueError or UnicodeEncodeError (red team, round 2). Sent as raw bytes: the offline
# model's own encoder would refuse to write them.
RAW_REPLIES = [
    b'{"id":"m1","type":"message","role":"assistant","model":"x","content":[{"type":"tool_use",'
    b'"id":"toolu_1","name":"read_file","input":{"path":"memo\\ud800.md","offset":NaN}}],'
    b'"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}',
    b'{"id":"m2","type":"message","role":"assistant","model":"x","content":[{"type":"text","text":"Done."}],'
    b'"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}',
]


@pytest.mark.parametrize("stage_name", STAGES)
def test_a_reply_holding_nan_or_a_lone_surrogate_is_recorded_so_that_the_history_still_encodes(stage_name, workspace):
    import anthropic
    import httpx2

    sent = []

    def server(request):
        sent.append(request.content)
        return httpx2.Response(200, content=RAW_REPLIES[min(len(sent), 2) - 1],
                               headers={"content-type": "application/json"})

    client = anthropic.Anthropic(api_key="raw", base_url="http://raw.invalid", max_retries=0,
                                 http_client=httpx2.Client(transport=httpx2.MockTransport(server)))
    stage = load_stage(stage_name)
    options = dict(client=client, model="raw", workspace=workspace)
    parameters = inspect.signature(stage.run).parameters
    options.update({key: value for key, value in (("audit_log", False), ("runs_log", False), ("approver", None))
                    if key in parameters})
    result = stage.run("Look around", **options)
    messages = result["messages"] if isinstance(result, dict) else result.messages
    json.dumps(messages, allow_nan=False).encode("utf-8")  # what the API and the transcript need
    assert len(sent) == 2 or stage_name == "s00"  # the history went back to the server
    if getattr(result, "transcript", None):
        assert course.transcript.load(result.transcript).history()
