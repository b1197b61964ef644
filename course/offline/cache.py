"""Prompt caching in the offline model, as the Messages API documents it.

Source: Anthropic's prompt caching guide,
https://platform.claude.com/docs/en/build-with-claude/prompt-caching (read 2026-11-30). What it
says, and what this module does with it:

* A request marks **cache breakpoints** with ``"cache_control": {"type": "ephemeral"}`` on a tool
  definition, a system block or a message content block. The cached prefix is the whole prompt in
  the order **tools → system → messages**, up to and including the marked block.
* At most **4 breakpoints** per request. A fifth gets HTTP 400, ``A maximum of 4 blocks with
  cache_control may be provided. Found 5.`` (the API's wording, quoted in continuedev/continue
  pull request #6937 and tghamm/Anthropic.SDK issue #50).
* A prefix shorter than the model's **minimum cacheable length** is not cached, marked or not:
  1,024 tokens for the Sonnet and Opus models. The offline ids stand in for the default Claude
  model (a Sonnet), so they use 1,024.
* For each breakpoint the API looks for a cache hit at that block and at the block boundaries
  before it, **about 20 blocks back** (the lookback): a breakpoint on the latest block still hits
  the prefix that the previous request cached a few blocks earlier.
* ``usage`` splits the prompt in three: ``cache_read_input_tokens`` (the longest prefix found in
  the cache), ``cache_creation_input_tokens`` (from there to the last breakpoint, now written to
  the cache) and ``input_tokens`` (only the tokens after the last breakpoint, or all of them when
  nothing is cached). The three add up to the whole prompt.
* The cache is keyed by the exact prefix, per model: change one early block (a tool result
  masked, a summary folded in) and every prefix that contains it misses, so everything after the
  change is written again.

* A breakpoint lasts **5 minutes** from its last use, or **1 hour** with ``"ttl": "1h"``; writing
  costs 1.25 times the input price for 5 minutes, 2 times for 1 hour, and a read 0.1 times either
  way. ``usage.cache_creation`` splits what was written by lifetime (``ephemeral_5m_input_tokens``,
  ``ephemeral_1h_input_tokens``): the tokens up to a breakpoint are written with its lifetime. When
  a request mixes lifetimes, the 1-hour breakpoints must come before the 5-minute ones.

Simplifications, said plainly: the cache lives in one transport, so one client's calls share it
(the real cache is shared by an organisation); it never expires (an offline run has no clock worth
modelling, so a ``ttl`` changes what a write costs, not how long it lasts); tokens are the offline
estimate (``tokens.py``), so the boundaries are estimates too. The wording of the two ``ttl`` errors
is an approximation.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from course.offline import tokens
from course.offline.validation import invalid

MAX_BREAKPOINTS = 4
MINIMUM_CACHEABLE_TOKENS = 1024   # Sonnet and Opus; the offline ids are priced and cached like Sonnet
LOOKBACK_BLOCKS = 20              # block boundaries checked for a hit, the breakpoint's own included


@dataclass
class Block:
    """One position of the prompt where a prefix can end: a tool, a system block or a content block."""

    tokens: int
    text: str          # the block as canonical JSON, without its cache_control: what the key is made of
    breakpoint: bool
    ttl: str = "5m"    # a breakpoint's lifetime: "5m" or "1h"


TTLS = ("1h", "5m")  # longest first: the order a request must put them in


def check_breakpoints(body: dict) -> None:
    """The API's 400s: more than four breakpoints, a cache_control that is not ephemeral, a lifetime
    that is neither 5 minutes nor 1 hour, or a 1-hour breakpoint after a 5-minute one."""
    marks = [block["cache_control"] for block in _markable(body) if "cache_control" in block]
    for mark in marks:
        if not isinstance(mark, dict) or mark.get("type") != "ephemeral":
            raise invalid("cache_control.type: Input should be 'ephemeral'")
        if mark.get("ttl", "5m") not in TTLS:
            raise invalid("cache_control.ttl: Input should be '5m' or '1h'")
    lifetimes = [TTLS.index(mark.get("ttl", "5m")) for mark in marks]
    if lifetimes != sorted(lifetimes):
        raise invalid("cache_control: a breakpoint with ttl '1h' must come before any with ttl '5m' "
                      "(tools, then system, then messages)")
    if len(marks) > MAX_BREAKPOINTS:
        raise invalid(f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {len(marks)}.")


def _markable(body: dict):
    """Every block that may carry cache_control: tools, system blocks, content blocks (nested ones too)."""
    yield from body.get("tools") or []
    if isinstance(body.get("system"), list):
        yield from body["system"]
    for message in body.get("messages") or []:
        if isinstance(message.get("content"), list):
            for block in message["content"]:
                yield block
                if isinstance(block.get("content"), list):
                    yield from block["content"]


def prompt_blocks(body: dict) -> list[Block]:
    """The prompt in cache order, tools → system → messages, one Block per position a prefix can end at.

    The token counts add up to ``tokens.request_tokens(body)``: a message's 4 tokens of overhead
    go with its first block.
    """
    blocks = [Block(tokens.json_tokens(_unmarked(tool)), _key("tool", tool), "cache_control" in tool, _ttl(tool))
              for tool in body.get("tools") or []]
    # A string is the same prompt as one text block holding it, so it makes the same key.
    system = body.get("system") or []
    system = [{"type": "text", "text": system}] if isinstance(system, str) else system
    blocks += [Block(tokens.block_tokens(block), _key("system", block), "cache_control" in block, _ttl(block))
               for block in system]
    for message in body.get("messages") or []:
        content = message.get("content")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        if not parts:  # an empty final assistant message still costs its overhead
            blocks.append(Block(tokens.MESSAGE_OVERHEAD, _key(message.get("role"), ""), False))
            continue
        for index, part in enumerate(parts):
            overhead = tokens.MESSAGE_OVERHEAD if index == 0 else 0
            marked = "cache_control" in part
            # The role and where a message starts are part of the prompt, so part of the key.
            kind = f"{message.get('role')}{':first' if index == 0 else ''}"
            blocks.append(Block(overhead + tokens.block_tokens(part), _key(kind, part), marked, _ttl(part)))
    return blocks


def _ttl(block) -> str:
    mark = block.get("cache_control") if isinstance(block, dict) else None
    return mark.get("ttl", "5m") if isinstance(mark, dict) else "5m"


def _unmarked(value):
    """A block without its cache_control: moving a breakpoint does not change the prompt."""
    if isinstance(value, dict) and "cache_control" in value:
        return {key: item for key, item in value.items() if key != "cache_control"}
    return value


def _key(kind: str, value) -> str:
    unmarked = _unmarked(value)
    if isinstance(unmarked, dict) and isinstance(unmarked.get("content"), list):
        unmarked = dict(unmarked, content=[_unmarked(part) for part in unmarked["content"]])
    return kind + "\0" + json.dumps(unmarked, ensure_ascii=False, sort_keys=True)


class PromptCache:
    """The cache of one client: the prefixes written so far, by model and exact content."""

    def __init__(self, minimum_tokens: int = MINIMUM_CACHEABLE_TOKENS):
        self.minimum_tokens = minimum_tokens
        self.entries: set[tuple[str, str]] = set()

    def usage(self, body: dict) -> dict:
        """Look the request's prefixes up, write the new one, and split its input tokens as ``usage`` does."""
        if not any("cache_control" in block for block in _markable(body)):  # nothing to look up or write
            total = tokens.request_tokens(body)
            return {"input_tokens": total, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
                    "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}}
        blocks = prompt_blocks(body)
        ends, digests, total, running = [], [], 0, hashlib.sha256()
        for block in blocks:
            total += block.tokens
            running.update(block.text.encode("utf-8") + b"\0")
            ends.append(total)
            digests.append(running.copy().hexdigest())
        model = body.get("model", "")
        marked = [index for index, block in enumerate(blocks) if block.breakpoint]
        read = max((self._longest_hit(model, digests, ends, index) for index in marked), default=0)
        written = 0
        if marked and ends[marked[-1]] >= self.minimum_tokens and (model, digests[marked[-1]]) not in self.entries:
            written = ends[marked[-1]] - read
        for index in marked:  # every breakpoint long enough leaves an entry for later requests
            if ends[index] >= self.minimum_tokens:
                self.entries.add((model, digests[index]))
        # The tokens up to each breakpoint are written with its lifetime (1-hour ones come first).
        one_hour = max((ends[index] for index in marked if blocks[index].ttl == "1h"), default=0)
        written_1h = max(0, min(one_hour, read + written) - read)
        return {"input_tokens": total - read - written,
                "cache_creation_input_tokens": written,
                "cache_read_input_tokens": read,
                "cache_creation": {"ephemeral_5m_input_tokens": written - written_1h,
                                   "ephemeral_1h_input_tokens": written_1h}}

    def _longest_hit(self, model: str, digests: list[str], ends: list[int], breakpoint: int) -> int:
        """Tokens of the longest cached prefix ending at the breakpoint or up to 19 blocks before it."""
        for index in range(breakpoint, max(breakpoint - LOOKBACK_BLOCKS, -1), -1):
            if (model, digests[index]) in self.entries:
                return ends[index]
        return 0
