"""Thinking blocks in the offline model: signed on the way out, checked on the way back.

Source: Anthropic's extended thinking guide, https://platform.claude.com/docs/en/build-with-claude/extended-thinking
("Thinking with tool use", "Preserving thinking blocks"), and its walkthrough
https://platform.claude.com/docs/build-with-claude/thinking-tool-workflows. What they say, and what
this module does with it:

* ``thinking`` is ``{"type": "enabled", "budget_tokens": N}`` (N at least 1,024 and less than
  ``max_tokens``), ``{"type": "adaptive"}`` or ``{"type": "disabled"}``. A reply then carries
  ``thinking`` blocks (the reasoning and a ``signature``) and sometimes ``redacted_thinking``
  blocks (encrypted ``data``), before or between its text and tool_use blocks.
* With tool use, the thinking blocks of the assistant message must come back complete and
  unmodified with the tool results: the final assistant message must start with a thinking block
  while thinking is on, and a block edited, dropped from among the others or moved is refused. The
  blocks of earlier assistant turns may be dropped (the API strips them from the context anyway).
* One thinking configuration per assistant turn: a tool-use loop is one assistant turn.

How the offline model signs: a signature is a hash of the thinking text, its place among the
message's thinking blocks and the ids of the message's tool calls, so an edited, reordered or moved
block no longer matches. A redacted block's data holds the same kind of hash. A scripted reply may
bring its own signatures: the transport remembers each one it sent (``Signatures``) with the block
it came on, and checks a block that comes back against it. A signature it neither minted nor sent
(a real API's, in a history written elsewhere) cannot be checked offline and is taken.

Simplifications, said plainly: the hash is not secret (a learner could forge it; the real one is
cryptographic); the wording of the errors follows the API's where it is known (the "must start
with a thinking block" error, as reported in anthropics/claude-code issues) and is an approximation
elsewhere.
"""

from __future__ import annotations

import hashlib
import json

from course.offline.validation import invalid

THINKING_TYPES = ("thinking", "redacted_thinking")
MINTED = "offline."  # how a signature or data the offline model made begins
MINIMUM_BUDGET = 1024


def thinking_on(body: dict) -> bool:
    thinking = body.get("thinking")
    return isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")


def check_config(body: dict) -> None:
    """The API's 400s for a ``thinking`` parameter it cannot use."""
    thinking = body.get("thinking")
    if thinking is None:
        return
    if not isinstance(thinking, dict) or thinking.get("type") not in ("enabled", "adaptive", "disabled"):
        raise invalid("thinking: Input tag found using 'type' does not match any of the expected tags: "
                      "'enabled', 'adaptive', 'disabled'")
    if thinking["type"] != "enabled":
        return
    budget = thinking.get("budget_tokens")
    if not isinstance(budget, int) or isinstance(budget, bool):
        raise invalid("thinking.enabled.budget_tokens: Field required")
    if budget < MINIMUM_BUDGET:
        raise invalid(f"thinking.enabled.budget_tokens: Input should be greater than or equal to {MINIMUM_BUDGET}")
    if isinstance(body.get("max_tokens"), int) and body["max_tokens"] <= budget:
        raise invalid("`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation "
                      "at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size")


def _place(content: list, block_index: int) -> tuple[int, list]:
    """Where a thinking block sits: its rank among the message's thinking blocks, and what else the
    message holds (how many thinking blocks, the tool_use ids): a block dropped or moved changes both."""
    kinds = [block.get("type") if isinstance(block, dict) else None for block in content]
    rank = sum(1 for kind in kinds[:block_index] if kind in THINKING_TYPES)
    ids = [block.get("id") for block in content if isinstance(block, dict) and block.get("type") == "tool_use"]
    return rank, [sum(1 for kind in kinds if kind in THINKING_TYPES), ids]


def _kept(block: dict) -> str:
    """A thinking block as it is sent and must come back: the fields a stage keeps (course.helpers.replies.KEPT)."""
    return json.dumps({key: block[key] for key in ("type", "thinking", "signature", "data") if key in block}, sort_keys=True)


def _digest(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False, sort_keys=True).encode("utf-8")).hexdigest()[:40]


def _expected(block: dict, rank: int, ids: list) -> str:
    if block["type"] == "thinking":
        return MINTED + _digest("thinking", block.get("thinking"), rank, ids)
    nonce = str(block.get("data", "")).removeprefix(MINTED).split(".")[0]
    return f"{MINTED}{nonce}.{_digest('redacted', nonce, rank, ids)}"


class Signatures:
    """The thinking blocks one transport sent, by signature (or data): what a block that comes back must match."""

    def __init__(self):
        self.sent: dict[str, list[tuple[str, int, list]]] = {}  # a script may send one signature twice

    def sign(self, content: list, nonce: str) -> None:
        """Sign the reply's thinking blocks that have no signature yet, and remember every one it sends."""
        for index, block in enumerate(content):
            if block.get("type") not in THINKING_TYPES:
                continue
            rank, ids = _place(content, index)
            field = "signature" if block["type"] == "thinking" else "data"
            if not isinstance(block.get(field), str):
                block[field] = _expected(dict(block, data=f"{MINTED}{nonce}{rank}"), rank, ids)
            self.sent.setdefault(block[field], []).append((_kept(block), rank, ids))

    def check(self, body: dict) -> None:
        """The 400s for thinking blocks that come back missing, edited or out of place."""
        messages = body.get("messages") or []
        last_assistant = max((i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "assistant"),
                             default=None)
        for index, message in enumerate(messages):
            content = message.get("content") if isinstance(message, dict) else None
            if not isinstance(content, list):
                continue
            for position, block in enumerate(content):
                if isinstance(block, dict) and block.get("type") in THINKING_TYPES:
                    self._check_block(message, index, content, position, block, index == last_assistant)
        if thinking_on(body) and last_assistant is not None:
            _check_turn_starts_with_thinking(messages, last_assistant)

    def _check_block(self, message: dict, index: int, content: list, position: int, block: dict, latest: bool) -> None:
        where = f"messages.{index}.content.{position}"
        if message.get("role") != "assistant":
            raise invalid(f"{where}: {block['type']} blocks are only allowed in assistant messages")
        field = "signature" if block["type"] == "thinking" else "data"
        if block["type"] == "thinking" and not isinstance(block.get("thinking"), str):
            raise invalid(f"{where}.thinking.thinking: Field required")
        if not isinstance(block.get(field), str):
            raise invalid(f"{where}.{block['type']}.{field}: Field required")
        rank, ids = _place(content, position)
        value = block[field]
        if value in self.sent:
            matches = (_kept(block), rank, ids) in self.sent[value]
        elif value.startswith(MINTED):
            matches = value == _expected(block, rank, ids)
        else:
            return  # minted elsewhere: nothing offline can check it against
        if not matches:
            raise invalid(f"{where}: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be "
                          "modified. These blocks must remain as they were in the original response." if latest else
                          f"{where}: Invalid `signature` in `{block['type']}` block")


def _check_turn_starts_with_thinking(messages: list, last_assistant: int) -> None:
    """While thinking is on, the assistant message whose tool calls the request answers starts with its thinking."""
    content = messages[last_assistant].get("content")
    answered = last_assistant + 1 < len(messages)
    if not answered or not isinstance(content, list) or not content:
        return
    if not any(isinstance(block, dict) and block.get("type") == "tool_use" for block in content):
        return
    first = content[0].get("type") if isinstance(content[0], dict) else None
    if first not in THINKING_TYPES:
        raise invalid(
            f"messages.{last_assistant}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{first}`. "
            "When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the "
            "lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from "
            "previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at "
            "https://docs.claude.com/en/docs/build-with-claude/extended-thinking")
