"""JSON objects written inside free text: how s04 finds tool calls a model wrote as text (alone on a
line, after a sentence, in a ``` fence, in <tool_call> tags), and how ``course doctor`` counts them."""

from __future__ import annotations

import json
from collections.abc import Iterator

from .wire import sendable


def objects_in(text: str) -> Iterator[dict]:
    """Every JSON object in ``text``, in order, each as JSON can carry it back (a "\\ud800" escape in
    JSON text is a lone surrogate). What is not JSON, or is nested past what Python's reader
    follows, is skipped."""
    decoder, position = json.JSONDecoder(), text.find("{")
    while position != -1:
        try:
            value, end = decoder.raw_decode(text, position)
        except (ValueError, RecursionError):
            position = text.find("{", position + 1)
            continue
        if isinstance(value, dict):
            yield sendable(value)
        position = text.find("{", end)
