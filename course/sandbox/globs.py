"""Globs matched as s06's deny rules match them: without regard to case, many at once, in one expression."""

from __future__ import annotations

import fnmatch
import functools
import re
from typing import Callable, Sequence


GLOB_CHARACTERS = re.compile(r"[*?\[]")


@functools.lru_cache(maxsize=64)
def _one_expression(patterns: tuple[str, ...]):
    """(names fitted whole, endings, one expression for the rest). Most deny globs are a name, or "*/" and
    a name: for those, fnmatch's match is the path itself, or the path's ending "/NAME", which a set and
    str.endswith find at once; one expression with hundreds of ".*" alternatives takes time that grows
    with the path's length times their number, asked of every entry of a walk."""
    lowered = [pattern.lower() for pattern in patterns]
    whole = frozenset(pattern for pattern in lowered if not GLOB_CHARACTERS.search(pattern))
    endings = tuple(pattern[1:] for pattern in lowered
                    if pattern.startswith("*/") and not GLOB_CHARACTERS.search(pattern[2:]))
    rest = [pattern for pattern in lowered if pattern not in whole and pattern[1:] not in endings]
    expression = re.compile("|".join(f"(?:{fnmatch.translate(pattern)})" for pattern in rest) or "(?!)")
    return whole, endings, expression


def any_glob(patterns: Sequence[str]) -> Callable[[str], bool]:
    """Whether a path fits any of the globs, without regard to case, as a deny rule fits it
    (Rule.covers with folders=False), as fnmatch would: a walk of the workspace asks it of every entry."""
    whole, endings, expression = _one_expression(tuple(patterns))

    def fits(path: str) -> bool:
        path = path.lower()
        return path in whole or path.endswith(endings) or expression.match(path) is not None
    return fits
