"""Commands printed for a learner, spelled so that they work as printed from the repository's root.

A bare ``python`` is the system's, which has neither the course nor ``anthropic`` installed; the
course's Python is ``.venv/bin/python`` (``make install`` creates it). When the running interpreter
is inside the repository, that relative path is printed; otherwise (an installed copy, another
environment) the interpreter's own path, which works from anywhere.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]


def python_command(executable: str | None = None) -> str:
    """How to call this Python from the repository's root: ``.venv/bin/python`` in the usual set-up."""
    path = Path(os.path.abspath(executable or sys.executable))  # abspath, not resolve: the venv's link is the point
    try:
        return path.relative_to(REPOSITORY).as_posix()
    except ValueError:
        return str(path)


def course_command(executable: str | None = None) -> str:
    """``.venv/bin/python -m course``, the start of every course command a learner is told to run."""
    return f"{python_command(executable)} -m course"
