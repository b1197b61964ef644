"""Thinking kept whole: every stage from s01 on sends thinking and redacted_thinking blocks back
unchanged with the tool results, and the offline API refuses a history that drops, reorders or
edits them, as the real one does (https://platform.claude.com/docs/en/build-with-claude/extended-thinking,
"Preserving thinking blocks"). s05's pruning may drop thinking from earlier turns only: it masks
tool results and folds whole turns, and never touches the thinking of the turn in progress.
"""

from __future__ import annotations

import copy

import anthropic
import pytest

import course
from course.offline import Reply
from course.helpers.replies import cleaned
from helpers import DONE, assert_valid_history, each_stage, load_stage, scripted_client

TASK = "Compare memo.md and todo.md"


def run_stage(stage_name, client, workspace, task=TASK):
    stage = load_stage(stage_name)
    options = {"runs_log": False, "transcript": False} if stage_name >= "s03" else {"transcript": False} \
        if stage_name == "s02" else {}
    if stage_name == "s06":
        options.update(approver=None, audit_log=False)
    result = stage.run(task, client=client, model="offline-thinking", workspace=workspace, **options)
    return result if isinstance(result, dict) else vars(result)


def thinking_request(client):
    """The first reply of offline-thinking to TASK, and the request that got it."""
    request = dict(model="offline-thinking", max_tokens=1024, messages=[{"role": "user", "content": TASK}],
                   tools=load_stage("s01").TOOLS)
    return request, client.messages.create(**request)


def answered(request, reply, content=None):
    """The request after ``reply``: its content (or ``content`` instead), then a result for each call."""
    blocks = content if content is not None else [block.to_dict() for block in reply.content]
    results = [{"type": "tool_result", "tool_use_id": block["id"], "content": "text"}
               for block in blocks if block["type"] == "tool_use"]
    return dict(request, messages=request["messages"] + [{"role": "assistant", "content": blocks},
                                                         {"role": "user", "content": results}])


@pytest.mark.parametrize("stage_name", each_stage("s01", "s02", "s03", "s04", "s05", "s06"))
def test_every_stage_sends_thinking_back_whole_around_parallel_calls(stage_name, workspace):
    client = course.make_client("offline-thinking", thinking=2048)
    result = run_stage(stage_name, client, workspace)
    first = result["messages"][1]["content"]
    assert [block["type"] for block in first] == ["thinking", "text", "tool_use", "redacted_thinking", "tool_use"]
    assert result["messages"][-1]["content"][0]["type"] == "thinking"  # the answer came: the history was taken
    assert "memo.md" in result["answer"] and "todo.md" in result["answer"]
    assert_valid_history(result["messages"])


def test_without_thinking_in_the_request_the_model_does_not_think(workspace):
    result = run_stage("s03", course.make_client("offline-thinking"), workspace, task="List the files")
    assert not [block for message in result["messages"] if isinstance(message["content"], list)
                for block in message["content"] if block["type"] in ("thinking", "redacted_thinking")]


def test_the_offline_api_takes_the_blocks_back_unchanged():
    client = course.make_client("offline-thinking", thinking=2048)
    request, reply = thinking_request(client)
    assert client.messages.create(**answered(request, reply)).content[0].type == "thinking"


@pytest.mark.parametrize("change", ["drop all", "drop the redacted one", "reorder", "edit", "move a call"])
def test_a_history_that_drops_reorders_or_edits_thinking_gets_the_apis_400(change):
    client = course.make_client("offline-thinking", thinking=2048, max_retries=0)
    request, reply = thinking_request(client)
    blocks = [block.to_dict() for block in reply.content]
    if change == "drop all":
        blocks = [block for block in blocks if block["type"] not in ("thinking", "redacted_thinking")]
    elif change == "drop the redacted one":
        blocks = [block for block in blocks if block["type"] != "redacted_thinking"]
    elif change == "reorder":
        blocks[0], blocks[3] = blocks[3], blocks[0]
    elif change == "edit":
        blocks[0] = dict(blocks[0], thinking=blocks[0]["thinking"] + " (tidied)")
    else:
        blocks[2], blocks[4] = blocks[4], blocks[2]
    with pytest.raises(anthropic.BadRequestError) as raised:
        client.messages.create(**answered(request, reply, blocks))
    error = raised.value.body["error"]
    assert raised.value.status_code == 400 and error["type"] == "invalid_request_error"
    assert "thinking" in error["message"]


def test_a_scripted_models_own_signatures_are_checked_against_what_it_sent():
    thought = {"type": "thinking", "thinking": "Two files.", "signature": "sig-1"}
    call = {"type": "tool_use", "id": "toolu_a", "name": "list_files", "input": {}}
    client, _ = scripted_client(Reply(blocks=[thought, call]), DONE, DONE)
    # tool_use blocks go back only beside the tools they call, as the API requires
    request = dict(model="scripted", max_tokens=2048, messages=[{"role": "user", "content": "Look"}],
                   thinking={"type": "enabled", "budget_tokens": 1024},
                   tools=[{"name": "list_files", "input_schema": {"type": "object", "properties": {}}}])
    reply = client.messages.create(**request)
    assert client.messages.create(**answered(request, reply)).content[0].text == "Done."
    edited = [dict(thought, thinking="Three files."), call]
    with pytest.raises(anthropic.BadRequestError, match="cannot be modified"):
        client.messages.create(**answered(request, reply, edited))


def test_the_thinking_parameter_is_checked_as_the_api_does():
    client = course.make_client("offline", max_retries=0)
    base = dict(model="offline", messages=[{"role": "user", "content": "Hi"}])
    with pytest.raises(anthropic.BadRequestError, match="greater than or equal to 1024"):
        client.messages.create(**base, max_tokens=4096, thinking={"type": "enabled", "budget_tokens": 100})
    with pytest.raises(anthropic.BadRequestError, match="must be greater than `thinking.budget_tokens`"):
        client.messages.create(**base, max_tokens=1024, thinking={"type": "enabled", "budget_tokens": 2048})


def test_the_thinking_option_adds_its_budget_to_the_room_a_stage_asks_for():
    seen = []
    client = course.make_client(behaviour=lambda body: seen.append(body) or DONE, thinking=2048)
    client.messages.create(model="scripted", max_tokens=1024, messages=[{"role": "user", "content": "Hi"}])
    assert seen[0]["thinking"] == {"type": "enabled", "budget_tokens": 2048} and seen[0]["max_tokens"] == 3072
    with pytest.raises(course.CourseError, match="at least 1024"):
        course.make_client("offline", thinking=10)


def test_adaptive_thinking_asks_for_no_budget_and_a_stage_sends_its_thinking_back(workspace):
    seen = []
    client = course.make_client(behaviour=lambda body: seen.append(body) or DONE, thinking="adaptive")
    client.messages.create(model="scripted", max_tokens=1024, messages=[{"role": "user", "content": "Hi"}])
    assert seen[0]["thinking"] == {"type": "adaptive"} and seen[0]["max_tokens"] == 1024
    result = run_stage("s05", course.make_client("offline-thinking", thinking="adaptive"), workspace)
    assert result["messages"][-1]["content"][0]["type"] == "thinking"
    assert_valid_history(result["messages"])


@pytest.mark.parametrize("model", ["claude-sonnet-5-5", "claude-opus-5-5", "claude-haiku-5-5", "claude-fable-5-2"])
def test_a_thinking_budget_for_a_model_that_refuses_one_is_stopped_before_any_request(model, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "not-used")
    with pytest.raises(course.CourseError, match="adaptive") as refused:
        course.make_client(model, thinking=2048)
    assert "\n" not in str(refused.value)
    assert course.make_client(model, thinking="adaptive") is not None  # what the message says to use is taken
    assert course.make_client("claude-haiku-4-5", thinking=2048) is not None  # an older model still takes a budget


def test_a_local_models_thinking_without_a_signature_is_not_sent_back():
    reply = {"content": [{"type": "thinking", "thinking": "hm"}, {"type": "text", "text": "Hi"}],
             "usage": {"input_tokens": 1, "output_tokens": 1}}
    assert cleaned(reply)["content"] == [{"type": "text", "text": "Hi"}]


@pytest.mark.parametrize("stage_name", each_stage("s05"))
def test_s05s_pruning_keeps_the_thinking_of_the_turn_in_progress(stage_name, workspace):
    stage = load_stage(stage_name)
    history = [{"role": "user", "content": "Read everything"}]
    for number in range(12):
        history += [{"role": "assistant", "content": [
            {"type": "thinking", "thinking": f"step {number}", "signature": f"sig-{number}"},
            {"type": "tool_use", "id": f"toolu_{number}", "name": "read_file", "input": {"path": "memo.md"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{number}",
                                          "content": "x" * 8000}]}]
    before = copy.deepcopy(history)
    stage.mask_old_results(history, stage.KEEP_RESULTS, 0)
    assert [m["content"][0] for m in history if m["role"] == "assistant"] == \
           [m["content"][0] for m in before if m["role"] == "assistant"]  # every thinking block untouched
    client, _ = scripted_client([{"type": "text", "text": "Summary."}])
    state = stage.LoopState(messages=history)
    assert stage.summarise_old_turns(state, client, "scripted")
    kept = [message for message in state.messages if message["role"] == "assistant"]
    assert kept and all(message["content"][0]["type"] == "thinking" for message in kept)
    assert kept[-1] == before[-2]  # the last assistant turn, its thinking included, exactly as it was
