"""Pruning never breaks a history: s05's masking (in batches) and summarising, and the cache breakpoints
it sends, on many generated histories.

Each generated history is one the loop could hold before a call: the task, then assistant turns
with text and 0-3 tool_use blocks (unique ids), each answered by its tool_results (random sizes,
some is_error, sometimes followed by text), and a user message after a turn without tool calls.
After pruning, the offline model's validator (the real API's rules) must accept it as it is.
"""

from __future__ import annotations

import pytest

import copy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import course
from helpers import assert_valid_history, load_stage, tool_uses
from course.offline.cache import check_breakpoints

pytestmark = pytest.mark.stage("s05")  # s05's pruning, on generated histories

s05 = load_stage("s05")

TOOL_NAMES = ("list_files", "read_file", "search_files", "calculate")
words = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=30)
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@st.composite
def histories(draw) -> list[dict]:
    task = draw(words.filter(str.strip))
    messages = [{"role": "user", "content": task}]
    ids = 0
    for _ in range(draw(st.integers(1, 12))):
        uses = draw(st.integers(0, 3))
        content = [{"type": "text", "text": draw(words)}] if uses == 0 or draw(st.booleans()) else []
        for _ in range(uses):
            ids += 1
            content.append({"type": "tool_use", "id": f"toolu_{ids:04d}", "name": draw(st.sampled_from(TOOL_NAMES)),
                            "input": {"path": draw(words)}})
        messages.append({"role": "assistant", "content": content})
        if uses:
            results = [{"type": "tool_result", "tool_use_id": block["id"],
                        "content": "log line\n" * draw(st.integers(0, 700)), "is_error": draw(st.booleans())}
                       for block in tool_uses(content)]
            after = [{"type": "text", "text": draw(words)}] if draw(st.booleans()) else []
            messages.append({"role": "user", "content": results + after})
        else:
            messages.append({"role": "user", "content": draw(words)})
    return messages


def assert_valid(messages: list, task: str) -> None:
    assert_valid_history(messages)  # raises ApiError if not
    assert messages[0]["role"] == "user"
    assert s05.first_text(messages[0]).startswith(task.rstrip())
    uses = [block["id"] for block in tool_uses(messages)]
    answered = [block["tool_use_id"] for block in s05.tool_results_in(messages)]
    assert sorted(uses) == sorted(answered)


def results_of(messages: list) -> list[dict]:
    return s05.tool_results_in(messages)


@PROPERTY
@given(history=histories(), keep=st.integers(0, 6))
def test_masking_keeps_every_history_valid_and_the_latest_results_whole(history, keep):
    pruned = copy.deepcopy(history)
    masked = s05.mask_old_results(pruned, keep)
    assert_valid(pruned, history[0]["content"])
    before, after = results_of(history), results_of(pruned)
    kept = max(len(before) - keep, 0)
    assert after[kept:] == before[kept:]
    assert masked == sum(1 for old, new in zip(before[:kept], after[:kept]) if old != new) == kept
    for old, new in zip(before[:kept], after[:kept]):
        assert new["content"].startswith("[masked") and "Call it again" in new["content"]
        assert (new["tool_use_id"], new["is_error"]) == (old["tool_use_id"], old["is_error"])
    assert s05.mask_old_results(pruned, keep) == 0  # masking twice changes nothing


@PROPERTY
@given(history=histories(), keep_turns=st.integers(1, 5))
def test_summarising_keeps_every_history_valid_and_the_latest_turns_whole(history, keep_turns):
    state = s05.LoopState(messages=copy.deepcopy(history))
    original_keep = s05.KEEP_TURNS
    s05.KEEP_TURNS = keep_turns
    try:
        summarised = s05.summarise_old_turns(state, course.make_client("offline"), "offline")
    finally:
        s05.KEEP_TURNS = original_keep
    assert_valid(state.messages, history[0]["content"])
    turns = [i for i, message in enumerate(history) if message["role"] == "assistant"]
    assert summarised == (len(turns) >= 2 * keep_turns)  # at least as many turns to fold as to keep
    if summarised:
        assert state.messages[1:] == history[turns[-keep_turns]:]
        assert s05.SUMMARY_HEADING in state.messages[0]["content"]
        assert state.usage["input_tokens"] > 0  # the summary was billed
    else:
        assert state.messages == history


@PROPERTY
@given(history=histories(), threshold=st.sampled_from([0, 500, 2_000, 10**9]))
def test_pruning_twice_in_a_row_keeps_every_history_valid(history, threshold):
    state = s05.LoopState(messages=copy.deepcopy(history))
    original = s05.SUMMARY_THRESHOLD
    s05.SUMMARY_THRESHOLD = threshold
    try:
        client = course.make_client("offline")
        for _ in range(2):  # a second pruning meets a summary and placeholders already there
            s05.prune(state, client, "offline", lambda kind, payload: None)
            assert_valid(state.messages, history[0]["content"])
    finally:
        s05.SUMMARY_THRESHOLD = original
    # The latest results are whole, unless a summary folded their turn away (tool_use and all).
    after = {block["tool_use_id"]: block for block in results_of(state.messages)}
    for block in results_of(history)[-s05.KEEP_RESULTS:]:
        assert after.get(block["tool_use_id"], block) == block


@PROPERTY
@given(history=histories(), keep=st.integers(0, 6), at_least=st.sampled_from([0, 1, 500, 2_000, 10**9]))
def test_masking_in_a_batch_masks_every_old_result_or_none_and_keeps_the_history_valid(history, keep, at_least):
    pruned = copy.deepcopy(history)
    masked = s05.mask_old_results(pruned, keep, at_least)
    assert_valid(pruned, history[0]["content"])
    changed = [old for old, new in zip(results_of(history), results_of(pruned)) if old != new]
    if masked:
        old = results_of(history)[:max(len(results_of(history)) - keep, 0)]
        assert changed == old                                        # the whole batch at once...
        assert sum(s05.estimate_tokens(block["content"]) for block in old) >= at_least  # ...and only if worth it
    else:
        assert pruned == history                                     # or nothing: the prefix, and its cache, stay


@PROPERTY
@given(history=histories())
def test_the_breakpoints_sent_stay_within_the_api_limit_and_never_enter_the_history(history):
    before = copy.deepcopy(history)
    sent = s05.with_breakpoints(history)
    check_breakpoints({"messages": sent, "system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}]})
    assert sent[-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert history == before                                          # the history itself holds no mark
    without_marks = [{**message, "content": [{key: value for key, value in block.items() if key != "cache_control"}
                                             for block in s05.blocks_of(message)]} for message in sent]
    assert without_marks == [{**message, "content": s05.blocks_of(message)} for message in history]
