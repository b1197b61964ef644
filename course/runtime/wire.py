"""What the Messages API can carry: JSON with no NaN or infinity, text that encodes as UTF-8, and
arrays and objects nested no deeper than JSON's writers and readers can follow."""

from __future__ import annotations

import math

# Python's JSON writer and reader, and this module, go one call deeper per level, and Python stops
# near 1,000 calls: a tool input nested 600 deep would crash the run where the reply is recorded.
# No real tool input comes near this depth.
MAX_DEPTH = 100


def sendable(value, depth: int = 0):
    """``value`` with what JSON cannot carry replaced: NaN and infinities by None, a lone surrogate by
    '?', and whatever is nested deeper than MAX_DEPTH by a string that says so (a tool call holding it
    is then refused as invalid, like any other). The real API never sends these; a broken server may
    (Python's JSON reader accepts NaN), and then the history could be neither sent back nor saved:
    the next request would fail with ValueError."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, (dict, list)) and depth >= MAX_DEPTH:
        return f"[cut: nested more than {MAX_DEPTH} levels deep]"
    if isinstance(value, dict):
        return {sendable(key): sendable(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list):
        return [sendable(item, depth + 1) for item in value]
    return value
