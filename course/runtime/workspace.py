"""The workspace: the small sample project the agents work on, copied fresh for each run.

A fresh copy lives in a temporary folder of its own, ``agent-course-XXXX/workspace``, with a mark
beside it (outside the workspace, so not among the files the agent works on): that is how the command
line tells a copy the course made, which it may remove when the run is over, from a folder the
learner named or asked to keep, which it never removes.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from course.runtime.models import CourseError
from course.runtime.trees import entries_under, remove_tree

SAMPLE = Path(__file__).parents[1] / "sample_workspace"
FRESH_MARK = "fresh-copy-of-the-sample"  # in the copy's temporary folder, beside the workspace


def prepare_workspace(workspace: str | Path | None = None) -> Path:
    """The folder to work in: ``workspace`` if given (it must exist), else a fresh copy of the sample."""
    if workspace is not None:
        path = Path(workspace).expanduser()
        if not path.is_dir():
            raise CourseError(f"workspace {str(workspace)!r} is not an existing folder; create it or leave --workspace out")
        return path.resolve()
    folder = Path(tempfile.mkdtemp(prefix="agent-course-"))
    target = folder / "workspace"
    shutil.copytree(SAMPLE, target)
    (folder / FRESH_MARK).write_text("The workspace beside this file is a copy of the course's sample, made for one run; "
                                     "the command line removes it when the run is over.\n", encoding="utf-8")
    return target.resolve()


def is_fresh_copy(workspace: str | Path) -> bool:
    """Whether ``workspace`` is a copy ``prepare_workspace`` made that nobody has asked to keep."""
    path = Path(workspace)
    return path.name == "workspace" and (path.parent / FRESH_MARK).is_file()


def keep(workspace: str | Path) -> None:
    """Make a fresh copy the learner's: named with --workspace, or kept with --keep-workspace, it is never removed."""
    if is_fresh_copy(workspace):
        (Path(workspace).parent / FRESH_MARK).unlink(missing_ok=True)


def remove_fresh_copy(workspace: str | Path) -> bool:
    """Remove ``workspace`` and its temporary folder if it is a fresh copy; returns whether it is gone."""
    if not is_fresh_copy(workspace):
        return False
    folder = Path(workspace).parent
    remove_tree(folder)
    return not os.path.lexists(folder)


def shown(name: str) -> str:
    """A file name as text that can be sent to the model. A name that is not UTF-8 reaches Python as
    surrogate escapes, which no JSON encoder (nor the API) accepts: those bytes are shown as \\xNN."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def snapshot(workspace: Path) -> dict[str, bytes]:
    """Every file under ``workspace`` with its bytes: to compare before and after a run. Walked with
    course.runtime.trees.entries_under, a loop: Path.rglob recurses on Python 3.11, and a chain of folders
    1,200 deep that a command made raised RecursionError here. A link to a file counts, with what it
    leads to (as rglob and is_file() did); a link to a folder is not gone into."""
    root = Path(workspace)
    return {str(path.relative_to(root)): path.read_bytes()
            for path in sorted(path for path, _ in entries_under(root)) if path.is_file()}
