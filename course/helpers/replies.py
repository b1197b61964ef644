"""What every stage relies on in a reply of the Messages API, checked where a reply does not come from
the real API: a local server's (course.running.client.CheckedReplies) and a scripted model's (course.offline).

The SDK builds a reply without checking it, so a reply without this shape would crash a stage deep
inside (AttributeError, TypeError, KeyError), and a tool_use id used twice makes a history the API
refuses, on every later request and every resume. The reference is the Messages API's
(content is a list of typed blocks; a text block has its text, a tool_use block its id, name and input;
usage counts tokens in whole numbers). Only what no stage can cope with is refused. What a stage can
answer is made safe to record instead (``cleaned``): a tool name that is not text becomes its text, so
the call fails as an unknown tool; a value JSON cannot carry back is replaced (course.sendable). An
input that is not an object is left to the stages, whose tools answer it as bad arguments.
"""

from __future__ import annotations

import json

from course.runtime.schema import first_problem
from course.runtime.trace import escape_terminal_controls
from course.runtime.wire import MAX_DEPTH, sendable

TOKENS = {"type": ["integer", "null"], "minimum": 0, "maximum": 10**9}  # 10**400 overflowed the price
REPLY_SHAPE = {
    "type": "object", "required": ["content", "usage"],
    "properties": {
        "content": {"type": "array", "items": {
            "type": "object", "required": ["type"],
            # Any type: the API adds block types (enum-like fields may gain values, says the 2026-10-21
            # migration guide), and a block a stage does not know is kept and sent back as it came.
            "properties": {"type": {"type": "string"}},
            "allOf": [
                {"if": {"required": ["type"], "properties": {"type": {"const": "text"}}},
                 "then": {"required": ["text"], "properties": {"text": {"type": "string"}}}},
                {"if": {"required": ["type"], "properties": {"type": {"const": "tool_use"}}},
                 "then": {"required": ["id", "name", "input"], "properties": {"id": {"type": "string"}}}},
                {"if": {"required": ["type"], "properties": {"type": {"const": "thinking"}}},
                 "then": {"required": ["thinking"], "properties": {"thinking": {"type": "string"}}}},
                {"if": {"required": ["type"], "properties": {"type": {"const": "redacted_thinking"}}},
                 "then": {"required": ["data"], "properties": {"data": {"type": "string"}}}},
            ]}},
        "stop_reason": {"type": ["string", "null"]},
        "usage": {"type": "object", "required": ["input_tokens", "output_tokens"],
                  "properties": {"input_tokens": {**TOKENS, "type": "integer"},
                                 "output_tokens": {**TOKENS, "type": "integer"},
                                 "cache_creation_input_tokens": TOKENS, "cache_read_input_tokens": TOKENS}},
    },
}


def reply_problem(reply, sent_messages: list) -> str:
    """Why no stage could take ``reply`` to a request whose history was ``sent_messages``, in one line
    naming where; empty when a stage can."""
    if nesting(reply) > MAX_DEPTH:
        return f"arrays or objects nested more than {MAX_DEPTH} deep"
    problem = first_problem(REPLY_SHAPE, reply)
    if problem:
        return problem
    seen = {block.get("id") for message in sent_messages if isinstance(message, dict)
            and message.get("role") == "assistant" and isinstance(message.get("content"), list)
            for block in message["content"] if isinstance(block, dict) and block.get("type") == "tool_use"}
    for index, block in enumerate(reply["content"]):
        if block["type"] == "tool_use":
            if block["id"] in seen:
                return f"content/{index}/id: the tool_use id {block['id']!r} is used twice in the conversation"
            seen.add(block["id"])
    return ""


# What a block of a known type keeps on its way to the stage: the fields the API takes back. An extra
# field (cache_control, say) would make every later request fail, and every resume with it. A thinking
# block keeps its signature and a redacted one its data: the API wants both back unchanged with the
# tool results (https://platform.claude.com/docs/en/build-with-claude/extended-thinking, "Preserving
# thinking blocks"). A thinking block without a signature (a local reasoning model's) is dropped: no
# request may carry it back. A block of any other type is kept whole, to be sent back as it came.
KEPT = {"text": ("type", "text"), "tool_use": ("type", "id", "name", "input"),
        "thinking": ("type", "thinking", "signature"), "redacted_thinking": ("type", "data")}


def cleaned(reply: dict) -> dict:
    """``reply`` (one reply_problem found nothing wrong with) as a stage can record and send it back:
    the fields KEPT of a known block, any other block whole, a tool name that is not text (a list, a
    number) as its text, and nothing JSON cannot carry (NaN, a lone surrogate)."""
    content = [{field: block[field] for field in KEPT[block["type"]]} if block["type"] in KEPT else dict(block)
               for block in reply["content"]
               if not (block["type"] == "thinking" and not isinstance(block.get("signature"), str))]
    for block in content:
        if block["type"] == "tool_use" and not isinstance(block["name"], str):
            block["name"] = repr(block["name"])
    return sendable({**reply, "content": content})


def request_body(request) -> dict:
    """The JSON body an httpx request sent, or {} if it has none."""
    try:
        body = json.loads(request.content)
    except (ValueError, RecursionError):
        return {}
    return body if isinstance(body, dict) else {}


def nesting(value) -> int:
    """How deep arrays and objects are nested in ``value``, counted without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is not None:
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in children)
    return deepest


# What a refusal says of itself: stop_details names a policy category and explains it, or is null
# (https://platform.claude.com/docs/en/build-with-claude/handling-stop-reasons, "refusal"; the SDK's
# RefusalStopDetails). The explanation "is not guaranteed to be stable": it is shown, never matched.
def why_refused(reply) -> str:
    """One line for a reply that ended with stop_reason refusal: the category and explanation of its
    stop_details when the API sent them, then what a learner can do."""
    details = getattr(reply, "stop_details", None)
    details = details.to_dict() if hasattr(details, "to_dict") else details if isinstance(details, dict) else {}
    said = "; ".join(str(part) for part in (details.get("category"), details.get("explanation")) if part)
    said = " ".join(said.split())[:300]  # one line, of a readable length
    return (f"the model declined to go on ({escape_terminal_controls(said)})" if said else "the model declined to go on"
            ) + "; rephrase the task or try another model (the refused turn is not sent again)"


def unknown_stop_reason(reason) -> str:
    """One line for a stop_reason a stage does not know: the API may add values (the 2026-10-21
    migration guide, https://platform.claude.com/docs/en/api/migration-2026-10-21, warns that
    enum-like fields gain values), so it is quoted, and the run stops rather than guess."""
    shown = escape_terminal_controls(" ".join(str(reason).split())[:80])
    return (f"the reply ended with stop_reason {shown!r}, which this stage does not know; the history is kept "
            "as it came, so a stage that knows it can go on from it")


# A paused turn is sent back as it is to go on (pause_turn: a server-side loop hit its limit;
# compaction: the API paused after writing a summary). Both docs bound it in a loop of their own.
MAX_PAUSES = 5


def kept_pausing(transitions: list, reason: str) -> str:
    """Why to stop a turn the API paused MAX_PAUSES times in a row already (``transitions`` ending in
    "turn_paused"), or "" to go on with it."""
    if transitions[-MAX_PAUSES:] != ["turn_paused"] * MAX_PAUSES:
        return ""
    return (f"the API paused this turn {MAX_PAUSES + 1} times in a row ({escape_terminal_controls(str(reason))}); "
            "run it again later, or split the task")
