"""A documented, deterministic token estimate.

Real tokenizers are not public, so the offline model counts tokens with one rule that a
learner can redo by hand:

* a piece of text costs ceil(UTF-8 bytes / 4) tokens (English prose averages about four
  characters a token; a Japanese character is three bytes, so about 0.75 token each);
* every message costs 4 tokens of overhead (role and framing);
* a tool definition costs the estimate of its JSON (name, description, schema);
* a tool_use costs the estimate of its name and its JSON input;
* a tool_result costs the estimate of its text content;
* a ``cache_control`` mark costs nothing: it says where a cached prefix ends, it is not prompt.

The numbers are therefore estimates, like those of pydantic-ai's TestModel, but they grow the
way real usage grows: in proportion to what is sent. That is all the course's measurements
(token budgets, the quadratic growth of a loop's bill, pruning savings) rely on.
"""

from __future__ import annotations

import json
import math

MESSAGE_OVERHEAD = 4


def text_tokens(text: str) -> int:
    if not text:
        return 0
    return math.ceil(len(text.encode("utf-8")) / 4)


def json_tokens(value) -> int:
    if isinstance(value, dict) and "cache_control" in value:
        value = {key: item for key, item in value.items() if key != "cache_control"}
    return text_tokens(json.dumps(value, ensure_ascii=False, sort_keys=True))


def block_tokens(block) -> int:
    if isinstance(block, str):
        return text_tokens(block)
    kind = block.get("type")
    if kind == "text":
        return text_tokens(block.get("text", ""))
    if kind == "tool_use":
        name = block.get("name", "")  # a scripted reply may send a name that is not text, as a broken server might
        return (text_tokens(name) if isinstance(name, str) else json_tokens(name)) + json_tokens(block.get("input", {}))
    if kind == "tool_result":
        return content_tokens(block.get("content", ""))
    return json_tokens(block)


def content_tokens(content) -> int:
    if isinstance(content, str):
        return text_tokens(content)
    return sum(block_tokens(block) for block in content or [])


def request_tokens(body: dict) -> int:
    """The input tokens of a Messages request: system, tools and every message."""
    system = body.get("system") or ""
    total = content_tokens(system)
    total += sum(json_tokens(tool) for tool in body.get("tools") or [])
    for message in body.get("messages") or []:
        total += MESSAGE_OVERHEAD + content_tokens(message.get("content", ""))
    return total
