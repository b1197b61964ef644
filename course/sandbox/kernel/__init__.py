"""The kernel's confinement, each primitive written once: Landlock (landlock), seccomp (seccomp), namespaces,
rlimits, capabilities and the reaping of descendants (processes), mounts and stand-ins (mounts), cgroups
(cgroups), what a folder holds (quota), the modes left behind (modes). s06's command
(course.sandbox.confinement) and the grader's child (course.grading.jail) both build on it, each with its own
bounds. It imports only itself and course.runtime (a walk of a tree): no rule, no stage, no grading.

Why not bubblewrap or the `landlock` package: bwrap makes the namespaces and mounts of a program it execs, but
it needs unprivileged user namespaces (absent on some distributions and CI), cannot apply Landlock, and cannot
confine the grader's child, which runs Python code forked from a server, never exec'd; the `landlock` package
(1.0.0.dev5) handles file rights only (no TCP, no scopes) and asks the kernel its ABI again for each rule.
"""

from __future__ import annotations

import sys
from pathlib import Path

SUPPORT_PACKAGE = Path(__file__).resolve().parents[2]  # the course's package, whichever folder holds it


def _python_prefixes() -> list[str]:
    """The folders of the Python that runs the course (the venv and the interpreter it was made from)."""
    return sorted({str(Path(p).resolve()) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)
                   if p and p != "/"})
