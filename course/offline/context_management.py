"""The API's own context management in the offline model: clearing old tool results, and compaction.

Sources: Anthropic's context editing guide, https://platform.claude.com/docs/en/build-with-claude/context-editing,
and compaction guide, https://platform.claude.com/docs/en/build-with-claude/compaction (the threshold
page, https://platform.claude.com/docs/en/build-with-claude/compaction-threshold), with the SDK's
types (``BetaClearToolUses20250919EditParam``, ``BetaCompact20260112EditParam``, ``BetaCompactionBlock``).
What they say, and what this module does with it:

* A request names its edits in ``context_management.edits``; each needs its beta header
  (``anthropic-beta``): ``context-management-2025-06-27`` for ``clear_tool_uses_20250919``,
  ``compact-2026-01-12`` for ``compact_20260112``. The edits apply on the server, before the prompt
  reaches the model: the client keeps its whole history and sends it every time.
* ``clear_tool_uses_20250919``: past ``trigger`` (default 100,000 input tokens) the oldest tool results
  are replaced by a placeholder, all but the latest ``keep`` tool uses (default 3), and only if at least
  ``clear_at_least`` tokens are freed; ``exclude_tools`` are never cleared; ``clear_tool_inputs`` clears
  the calls' inputs too. The reply's ``context_management.applied_edits`` says how many tool uses and
  input tokens were cleared. Clearing changes the prompt where the first cleared result was: the cache
  is written again from there (hence ``clear_at_least``).
* ``compact_20260112``: once the input reaches ``trigger`` (default 150,000 input tokens, at least
  50,000) the API writes a summary in an extra sampling step, returns it first in the reply as a
  ``compaction`` block (``content``), and answers from it; with ``pause_after_compaction`` it stops
  there (stop_reason ``compaction``). On later requests the API drops every block before the last
  compaction block. ``usage`` at the top covers the answer only; ``usage.iterations`` lists the
  summary's step (type ``compaction``) and the answer's (type ``message``): the bill is their sum. The
  summary's prompt is new past the cached prefix, so compaction writes the cache again.

Simplifications, said plainly: the offline summary is not written by a model: it is the first paragraph
of the first user message (the task) followed by the latest texts of the assistant (its notes), which is what a
summary must keep for the offline behaviours to go on; ``instructions`` are read but change nothing;
the ``input_tokens`` trigger type is the only one; the placeholder's wording is an approximation.
"""

from __future__ import annotations

import copy

from course.offline import tokens
from course.offline.validation import invalid

BETA_OF = {"clear_tool_uses_20250919": "context-management-2025-06-27", "compact_20260112": "compact-2026-01-12"}
CLEARED = "[cleared: this tool result was removed to save context]"
NOTES_KEPT = 3  # the latest assistant texts a summary keeps


def edits_of(body: dict, betas: set) -> list[dict]:
    """The request's edits, checked as the API checks them (a known type, its beta header, a trigger it takes)."""
    management = body.get("context_management")
    if management is None:
        return []
    if not isinstance(management, dict) or not isinstance(management.get("edits"), list):
        raise invalid("context_management.edits: Field required")
    for index, edit in enumerate(management["edits"]):
        kind = edit.get("type") if isinstance(edit, dict) else None
        if kind not in BETA_OF:
            raise invalid(f"context_management.edits.{index}: Input tag '{kind}' found using 'type' does not match any "
                          f"of the expected tags: {', '.join(repr(name) for name in BETA_OF)}")
        if BETA_OF[kind] not in betas:
            raise invalid(f"context_management.edits.{index}: {kind} requires the beta header "
                          f"'anthropic-beta: {BETA_OF[kind]}'")
        if kind == "compact_20260112" and _trigger(edit, 150_000) < 50_000:
            raise invalid(f"context_management.edits.{index}.trigger.value: Input should be greater than or equal to 50000")
    return management["edits"]


def _trigger(edit: dict, default: int) -> int:
    trigger = edit.get("trigger") or {}
    return int(trigger.get("value", default)) if isinstance(trigger, dict) else default


def _value(field, default: int) -> int:
    return int(field.get("value", default)) if isinstance(field, dict) else default


def after_last_compaction(body: dict) -> dict:
    """The request as the model sees it: every block before the last compaction block dropped, and the
    summary it holds standing in their place as the first user message."""
    messages = body.get("messages") or []
    for index in range(len(messages) - 1, -1, -1):
        content = messages[index].get("content")
        blocks = content if isinstance(content, list) else []
        where = [position for position, block in enumerate(blocks) if block.get("type") == "compaction"]
        if messages[index].get("role") == "assistant" and where:
            rest = blocks[where[-1] + 1:]
            summary = blocks[where[-1]].get("content") or ""
            kept = [{"role": "user", "content": summary}] + ([dict(messages[index], content=rest)] if rest else [])
            return dict(body, messages=kept + list(messages[index + 1:]))
    return body


def clear_tool_uses(body: dict, edit: dict) -> tuple[dict, dict | None]:
    """``body`` with its oldest tool results cleared as ``edit`` says, and the applied edit (None if none)."""
    if tokens.request_tokens(body) < _trigger(edit, 100_000):
        return body, None
    keep, at_least = _value(edit.get("keep"), 3), _value(edit.get("clear_at_least"), 0)
    excluded, inputs = set(edit.get("exclude_tools") or []), edit.get("clear_tool_inputs") or False
    edited = copy.deepcopy(body)
    names = {block["id"]: block for message in edited["messages"] if message["role"] == "assistant"
             and isinstance(message["content"], list) for block in message["content"] if block.get("type") == "tool_use"}
    results = [block for message in edited["messages"] if message["role"] == "user" and isinstance(message["content"], list)
               for block in message["content"] if block.get("type") == "tool_result" and block.get("tool_use_id") in names]
    old = [block for block in results[:max(len(results) - keep, 0)]
           if names[block["tool_use_id"]].get("name") not in excluded and block.get("content") != CLEARED]
    freed = sum(tokens.block_tokens(block) for block in old) - len(old) * tokens.text_tokens(CLEARED)
    if not old or freed < at_least:
        return body, None
    for block in old:
        block["content"] = CLEARED
        call = names[block["tool_use_id"]]
        if inputs is True or (isinstance(inputs, list) and call.get("name") in inputs):
            call["input"] = {}
    return edited, {"type": "clear_tool_uses_20250919", "cleared_tool_uses": len(old), "cleared_input_tokens": freed}


def summary_of(body: dict) -> str:
    """The offline summary: the task, then the assistant's latest notes (see the module docstring)."""
    messages = body.get("messages") or []
    first = messages[0]["content"] if messages else ""
    task = first if isinstance(first, str) else "\n".join(b.get("text", "") for b in first if b.get("type") == "text")
    task = task.split("\n\n")[0]  # the request itself, its first paragraph (an earlier summary follows it)
    notes = [block.get("text", "") for message in messages if message.get("role") == "assistant"
             and isinstance(message.get("content"), list) for block in message["content"] if block.get("type") == "text"]
    return task + "\n\n[Summary of the conversation so far]\n" + "\n".join(notes[-NOTES_KEPT:])


def compacts(body: dict, edit: dict) -> bool:
    return tokens.request_tokens(body) >= _trigger(edit, 150_000)


def compacted(body: dict, summary: str) -> dict:
    """What the model answers from once it has summarised: the summary in place of the history."""
    return dict(body, messages=[{"role": "user", "content": summary}])
