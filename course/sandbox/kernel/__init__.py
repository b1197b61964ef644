"""The kernel's confinement, each primitive written once: Landlock (landlock), seccomp (seccomp), namespaces,
rlimits, capabilities and the reaping of descendants (processes), mounts (mounts), cgroups (cgroups). s06's
command (course.sandbox.confinement) and the grader's child (course.grading.jail) both build on it, each with
its own bounds. It imports nothing of the course beyond itself: no rule, no stage, no grading.
"""

from __future__ import annotations

import sys
from pathlib import Path

SUPPORT_PACKAGE = Path(__file__).resolve().parents[2]  # the course's package, whichever folder holds it


def _python_prefixes() -> list[str]:
    """The folders of the Python that runs the course (the venv and the interpreter it was made from)."""
    return sorted({str(Path(p).resolve()) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)
                   if p and p != "/"})
