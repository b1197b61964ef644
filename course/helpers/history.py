"""A history as plain text, for a model to read: what s05's summariser is given to fold old turns."""

from __future__ import annotations

import json

from course.runtime.trace import shorten

RESULT_CHARS = 300  # of each tool result: a summary needs what was found, not every byte of it


def turns_as_text(messages: list) -> str:
    """What the model said, called, and got back, one line a block (thinking and other blocks left out)."""
    lines = []
    for message in messages:
        content = message["content"]
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content:
            if block["type"] == "text":
                lines.append(f"{message['role']}: {block['text']}")
            elif block["type"] == "tool_use":
                lines.append(f"called {block['name']} {json.dumps(block['input'], ensure_ascii=False)}")
            elif block["type"] == "tool_result":
                lines.append(f"result: {shorten(str(block['content']), RESULT_CHARS)}")
    return "\n".join(lines)
