"""What the Messages API can carry: JSON with no NaN or infinity, and text that encodes as UTF-8."""

from __future__ import annotations

import math


def sendable(value):
    """``value`` with what JSON cannot carry replaced: NaN and infinities by None, a lone surrogate by
    '?'. The real API never sends them; a broken server may (Python's JSON reader accepts NaN), and
    then the history could be neither sent back nor saved: the next request failed with ValueError
    (found by the red team)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, dict):
        return {sendable(key): sendable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [sendable(item) for item in value]
    return value
