"""s04 (and the stages after it): a reply cut at max_tokens is recovered in one place.

Whole calls before the cut are run; a call cut short is answered, not run; a reply with nothing
whole is asked for again with twice the room, up to MAX_TOKENS_CEILING; only past it does the run
stop, and a reply that copies its prompt is explained as such, without asking again.
The model is scripted through the offline model, which cuts each reply at the request's max_tokens.
"""

from __future__ import annotations

import pytest

import course
from course.offline import Reply
from helpers import assert_valid_history, load_stage, results_in, scripted_client, each_stage

TASK = "List the files in the workspace"
RAMBLING = "and then I thought about it some more, " * 400  # about 4,000 tokens: past 1024, within 8192
ENDLESS = "on and on, " * 20_000  # past any ceiling
DONE = Reply().text("Done: config.json, hello.txt, memo.md, sample.txt, todo.md.")
STAGES = ["s04", "s05", "s06"]


def run(stage, client, workspace):
    options = {"approver": None, "audit_log": False} if stage == "s06" else {}
    return load_stage(stage).run(TASK, client=client, model="offline", workspace=workspace, runs_log=False, **options)


@pytest.mark.parametrize("stage", each_stage(*STAGES))
def test_a_whole_call_before_the_rambling_is_run_without_asking_again(stage, workspace):
    client, requests = scripted_client(Reply().text("I'll list the files.").call("list_files", path=".").text(RAMBLING), DONE)
    result = run(stage, client, workspace)
    assert result.stop_reason == "end_turn"
    assert [request["max_tokens"] for request in requests] == [1024, 1024]
    first = results_in(result.messages)[0]
    assert first["is_error"] is False and "memo.md" in first["content"]
    assert_valid_history(result.messages)


def test_a_whole_call_written_as_text_before_the_rambling_is_run(workspace):
    text = 'I will call {"name": "list_files", "arguments": {"path": "."}} now. ' + RAMBLING
    client, requests = scripted_client(Reply().text(text), DONE)
    result = run("s04", client, workspace)
    assert result.stop_reason == "end_turn" and result.transitions == ["text_calls_recovered"]
    assert "memo.md" in str(requests[1]["messages"][-1]["content"])


def test_a_call_cut_short_is_answered_and_the_whole_ones_before_it_run(workspace):
    cut = Reply().call("list_files", path=".").text(RAMBLING[:2000]).call("read_file", path="memo.md" + "x" * 5000)
    client, requests = scripted_client(cut, DONE)
    result = run("s04", client, workspace)
    listed, cut_short = results_in(result.messages)
    assert listed["is_error"] is False
    assert cut_short["is_error"] is True and "cut_off" in cut_short["content"]
    assert result.stop_reason == "end_turn" and len(requests) == 2
    assert_valid_history(result.messages)


@pytest.mark.parametrize("stage", each_stage(*STAGES))
def test_a_reply_cut_before_any_whole_call_is_asked_again_with_twice_the_room(stage, workspace):
    long_then_call = Reply().text(RAMBLING).call("list_files", path=".")
    client, requests = scripted_client(long_then_call, long_then_call, long_then_call, DONE)
    result = run(stage, client, workspace)
    assert [request["max_tokens"] for request in requests] == [1024, 2048, 4096, 1024]
    assert result.stop_reason == "end_turn" and result.turns == 2
    assert_valid_history(result.messages)


@pytest.mark.stage("s04")  # s04 recovers cut replies
def test_only_past_the_ceiling_does_the_run_stop_saying_why(workspace):
    s04 = load_stage("s04")
    endless = Reply().text(ENDLESS).call("list_files", path=".")
    client, requests = scripted_client(*[endless] * 4)
    result = run("s04", client, workspace)
    assert [request["max_tokens"] for request in requests] == [1024, 2048, 4096, s04.MAX_TOKENS_CEILING]
    assert result.stop_reason == "max_tokens"
    assert str(s04.MAX_TOKENS_CEILING) in result.explanation and "repeating" not in result.explanation
    # Every cut reply was billed, the dropped ones too.
    assert result.usage["output_tokens"] == 1024 + 2048 + 4096 + 8192


def text_of(content) -> str:
    """The text of a system prompt or a message's content, a string or blocks (s05 sends blocks, marked for the cache)."""
    return content if isinstance(content, str) else " ".join(block.get("text", "") for block in content)


@pytest.mark.parametrize("stage", each_stage(*STAGES))
def test_a_reply_that_echoes_its_prompt_is_explained_as_such_and_not_asked_again(stage, workspace):
    requests = []

    def echo(body):  # a base model behind a server without its chat template: the prompt, again and again
        requests.append(body)
        prompt = text_of(body["system"]) + " " + text_of(body["messages"][0]["content"]) + " "
        return Reply().text(prompt * 200)

    client = course.make_client(behaviour=echo, max_retries=0)
    result = run(stage, client, workspace)
    assert len(requests) == 1 and result.stop_reason == "max_tokens"
    assert result.explanation.startswith("the model is repeating its prompt: it may not support chat or tools; "
                                         "check the model and its chat template")


@pytest.mark.stage("s04")  # s04 recovers cut replies
def test_a_long_answer_of_its_own_is_not_taken_for_an_echo(workspace):
    s04 = load_stage("s04")
    messages = [{"role": "user", "content": TASK}]
    assert not s04.repeats_the_prompt(RAMBLING, messages)
    assert s04.repeats_the_prompt((s04.SYSTEM_PROMPT + " ") * 3, messages)
    # What the model said before is its own: saying it again is wordy, not an echo.
    said = [{"role": "user", "content": TASK}, {"role": "assistant", "content": [{"type": "text", "text": RAMBLING}]}]
    assert not s04.repeats_the_prompt(RAMBLING, said)


@pytest.mark.stage("s03")  # what s03 does, the failure s04 fixes
def test_s03_still_stops_at_the_first_cut(workspace):
    client, requests = scripted_client(Reply().text(RAMBLING).call("list_files", path="."))
    result = load_stage("s03").run(TASK, client=client, model="offline", workspace=workspace, runs_log=False)
    assert result.stop_reason == "max_tokens" and len(requests) == 1
