"""The API's own context management, in the offline model, as documented: clearing old tool results
(https://platform.claude.com/docs/en/build-with-claude/context-editing) and compaction
(https://platform.claude.com/docs/en/build-with-claude/compaction): the edits, their defaults and beta
headers, what usage and context_management report, the compaction block and the drop of what came
before it, and what each does to the cache.
"""

from __future__ import annotations

import anthropic
import pytest

import course
from course.offline.context_management import CLEARED
from helpers import DONE, load_stage, scripted_client

CLEARING = "context-management-2025-06-27"
COMPACTION = "compact-2026-01-12"


def history(turns: int, size: int = 4000) -> list:
    """A task, then ``turns`` read_file calls, each answered with ``size`` characters."""
    messages = [{"role": "user", "content": "Count the ERROR lines in every log file of the logs folder"}]
    for number in range(turns):
        messages += [
            {"role": "assistant", "content": [{"type": "text", "text": f"note {number}"},
                                              {"type": "tool_use", "id": f"toolu_{number}", "name": "read_file",
                                               "input": {"path": f"logs/app-{number:03d}.log"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{number}",
                                          "content": f"{number} " + "x" * size}]}]
    return messages


# A request that carries tool_use or tool_result blocks must declare its tools, as the API requires.
TOOLS = [{"name": name, "description": f"{name} in the workspace",
          "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}
         for name in ("read_file", "list_files")]


def create(client, messages, edit, beta, **extra):
    """As the API's documentation calls it: the beta client, which knows the blocks an edit returns."""
    extra.setdefault("tools", TOOLS)
    return client.beta.messages.create(model="scripted", max_tokens=256, messages=messages, **extra,
                                       context_management={"edits": [edit]}, **({"betas": [beta]} if beta else {}))


def test_an_edit_needs_its_beta_header():
    client, _ = scripted_client(DONE)
    with pytest.raises(anthropic.BadRequestError, match=CLEARING):
        create(client, history(1), {"type": "clear_tool_uses_20250919"}, None)
    with pytest.raises(anthropic.BadRequestError, match="does not match"):
        create(client, history(1), {"type": "clear_everything"}, CLEARING)


def test_clearing_waits_for_its_trigger_of_100000_tokens_by_default():
    client, seen = scripted_client(DONE, DONE)
    reply = create(client, history(10), {"type": "clear_tool_uses_20250919"}, CLEARING)
    assert reply.to_dict()["context_management"] == {"applied_edits": []}
    assert not any(CLEARED in str(message) for message in seen[0]["messages"])
    create(client, history(120), {"type": "clear_tool_uses_20250919"}, CLEARING)
    results = [block["content"] for message in seen[1]["messages"] if message["role"] == "user"
               and isinstance(message["content"], list) for block in message["content"]]
    assert results[:-3] == [CLEARED] * 117 and CLEARED not in results[-3:]  # keep: the latest 3 tool uses


def test_clearing_reports_what_it_cleared_and_keeps_what_it_is_told_to():
    client, seen = scripted_client(DONE)
    edit = {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 3000},
            "keep": {"type": "tool_uses", "value": 1}, "exclude_tools": ["list_files"], "clear_tool_inputs": True}
    messages = history(4)
    reply = create(client, messages, edit, CLEARING)
    [applied] = reply.to_dict()["context_management"]["applied_edits"]
    assert applied["type"] == "clear_tool_uses_20250919" and applied["cleared_tool_uses"] == 3
    assert applied["cleared_input_tokens"] > 2500
    calls = [block for message in seen[0]["messages"] if message["role"] == "assistant" for block in message["content"]
             if block["type"] == "tool_use"]
    assert [call["input"] for call in calls] == [{}, {}, {}, {"path": "logs/app-003.log"}]
    assert "x" * 100 in str(messages)  # the client's history is its own: the edit applies on the server only


def test_clearing_frees_at_least_what_it_is_told_or_nothing():
    client, seen = scripted_client(DONE)
    edit = {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 1000},
            "clear_at_least": {"type": "input_tokens", "value": 50_000}}
    reply = create(client, history(6), edit, CLEARING)
    assert reply.to_dict()["context_management"]["applied_edits"] == []
    assert CLEARED not in str(seen[0]["messages"])


def test_clearing_writes_the_cache_again_from_the_first_cleared_result():
    client, _ = scripted_client(DONE, DONE, DONE)
    messages = history(12)
    messages[-1]["content"][-1]["cache_control"] = {"type": "ephemeral"}
    plain = {"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 10**9}}
    first = create(client, messages, plain, CLEARING)
    again = create(client, messages, plain, CLEARING)
    assert again.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens > 0
    clearing = dict(plain, trigger={"type": "input_tokens", "value": 1000})
    cleared = create(client, messages, clearing, CLEARING)
    assert cleared.usage.cache_read_input_tokens == 0 and cleared.usage.cache_creation_input_tokens > 0


def test_compaction_summarises_past_its_trigger_and_bills_the_summary_beside_the_answer():
    client, seen = scripted_client(DONE)
    edit = {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 50_000}}
    reply = create(client, history(60), edit, COMPACTION)
    block = reply.content[0].to_dict()
    assert block["type"] == "compaction" and block["content"].startswith("Count the ERROR lines")
    assert "note 59" in block["content"]
    assert seen[0]["messages"] == [{"role": "user", "content": block["content"]}]  # the model answers from the summary
    iterations = reply.to_dict()["usage"]["iterations"]
    assert [step["type"] for step in iterations] == ["compaction", "message"]
    assert iterations[0]["input_tokens"] > 50_000 > reply.usage.input_tokens  # top-level usage: the answer only


def test_compaction_has_a_trigger_of_at_least_50000_tokens():
    client, _ = scripted_client(DONE)
    with pytest.raises(anthropic.BadRequestError, match="50000"):
        create(client, history(1), {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 1000}},
               COMPACTION)


def test_what_came_before_a_compaction_block_is_dropped():
    client, seen = scripted_client(DONE)
    messages = history(3) + [
        {"role": "assistant", "content": [{"type": "compaction", "content": "Summary: three logs read."},
                                          {"type": "text", "text": "Going on."}]},
        {"role": "user", "content": "And the rest?"}]
    create(client, messages, {"type": "compact_20260112"}, COMPACTION)
    assert seen[0]["messages"] == [{"role": "user", "content": "Summary: three logs read."},
                                   {"role": "assistant", "content": [{"type": "text", "text": "Going on."}]},
                                   {"role": "user", "content": "And the rest?"}]


@pytest.mark.stage("s04")
def test_a_paused_compaction_goes_on_in_a_stage_with_the_block_sent_back(workspace):
    edit = {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 50_000}, "pause_after_compaction": True}
    client, seen = scripted_client(DONE)

    class WithCompaction:  # the benchmark's way of asking for it, on a stage that knows nothing of it
        def __init__(self, inner):
            self.inner = inner

        def create(self, **request):
            return self.inner.create(**request, extra_body={"context_management": {"edits": [edit]}},
                                     extra_headers={"anthropic-beta": COMPACTION})

    client.messages = WithCompaction(client.messages)
    result = load_stage("s04").run("Count the ERROR lines in every log file of the logs folder\n\n" + "x" * 250_000,
                                   client=client, model="scripted", workspace=workspace, runs_log=False, transcript=False)
    assert result.stop_reason == "end_turn" and result.transitions == ["turn_paused"]
    assert result.messages[1]["content"][0]["type"] == "compaction" and len(seen) == 1  # the pause asked no model
