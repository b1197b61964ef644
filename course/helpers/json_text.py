"""JSON objects written inside free text: how s04 finds tool calls a model wrote as text (alone on a
line, after a sentence, in a ``` fence, in <tool_call> tags), and how ``course doctor`` counts them."""

from __future__ import annotations

import json
from collections.abc import Iterator

from course.runtime.wire import sendable


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


def calls_in_text(text: str, schemas: dict) -> list[tuple[str, dict]]:
    """The tool calls written as JSON objects in ``text``: {"name": TOOL, "arguments"|"input"|"parameters":
    {...}} naming a tool of ``schemas`` ({name: input schema}) with arguments that validate against it."""
    from course.runtime.schema import argument_errors  # jsonschema: loaded only when a stage looks for calls

    calls = []
    for value in objects_in(text):
        name = value.get("name")
        arguments = value.get("arguments", value.get("input", value.get("parameters")))
        if isinstance(name, str) and name in schemas and not argument_errors(schemas[name], arguments):
            calls.append((name, arguments))
    return calls
