"""A reply that copies its prompt: what a small base model, or a server without the model's chat
template, does until max_tokens (62 of 103 calls, measured with Gemma 3 270M behind llama.cpp).
s04's cut-reply recovery asks for no more room for such a reply, and ``course doctor`` reports it.

One measure for both: the share of the reply's runs of ``WIDTH`` words that appear, in that order, in
the request's own words (the system prompt, the tool table, and the text of the user side of the
history: the task, notes). Left out: the assistant side (a model that says again what it said before is
wordy, not echoing its prompt) and tool results (repeating a listing back can be the answer).
"""

from __future__ import annotations

import json

WIDTH = 6          # words in a row that count as copied when the request holds them too
COPIED = 0.5       # the share of copied runs from which a reply is an echo


def copied_share(text: str, source: str, width: int = WIDTH) -> float:
    """How much of ``text`` is copied from ``source``: the share of its runs of ``width`` words (fewer
    for a shorter text) found in ``source``. Spacing is ignored."""
    words = text.split()
    if not words:
        return 0.0
    width = min(width, len(words))
    plain = " " + " ".join(source.split()) + " "
    runs = [" " + " ".join(words[i:i + width]) + " " for i in range(len(words) - width + 1)]
    return sum(run in plain for run in runs) / len(runs)


def request_words(system, tools: list, messages: list) -> str:
    """The request's own words: the system prompt, the tool table, and the user side's text."""
    if isinstance(system, list):  # system as blocks, as s05 sends it
        system = " ".join(block.get("text", "") for block in system if isinstance(block, dict))
    parts = [system or "", json.dumps(tools, ensure_ascii=False)]
    for message in messages:
        if message.get("role") != "user":
            continue
        content = message["content"]
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content:
            if block.get("type") == "text":
                parts.append(str(block.get("text", "")))
    return "\n".join(parts)


def repeats_the_prompt(text: str, *, system, tools: list, messages: list) -> bool:
    """Whether most of ``text`` (a reply) is copied from the request it answers."""
    return copied_share(text, request_words(system, tools, messages)) >= COPIED
