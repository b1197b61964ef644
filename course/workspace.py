"""The workspace: the small sample project the agents work on, copied fresh for each run.

A fresh copy lives in a temporary folder of its own, ``agent-course-XXXX/workspace``, with a mark
beside it (outside the workspace, so not among the files the agent works on): that is how the command
line tells a copy the course made, which it may remove when the run is over, from a folder the
learner named or asked to keep, which it never removes.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

from .models import CourseError
from .paths import entries_under

SAMPLE = Path(__file__).parent / "sample_workspace"
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
    course.paths.entries_under, a loop: Path.rglob recurses on Python 3.11, and a chain of folders
    1,200 deep that a command made raised RecursionError here. A link to a file counts, with what it
    leads to (as rglob and is_file() did); a link to a folder is not gone into."""
    root = Path(workspace)
    return {str(path.relative_to(root)): path.read_bytes()
            for path in sorted(path for path, _ in entries_under(root)) if path.is_file()}


_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def remove_tree(path: str | Path) -> None:
    """Remove ``path`` and all it holds, as far as it can, without recursion and without following a link.

    shutil.rmtree recurses once per level on Python 3.11: a chain of folders 1,200 deep raises
    RecursionError, which its ignore_errors=True does not swallow. Here one folder is open at a time
    (a chain deeper than the open-file limit cannot exhaust it), every name is looked up relative to
    it (a path longer than PATH_MAX is no obstacle), a link is removed, never followed, and a folder
    its owner left unreadable is opened up first. The way back up goes through "..", checked to be
    the folder we came down from. Nothing raises: what could not be removed is still there, and the
    caller looks again (course.paths.remove_new_protected does)."""
    path = Path(path)
    try:
        parent = os.open(path.parent, _FOLDER)
    except OSError:
        return
    try:
        _remove_beneath(parent, path.name)
    except Exception:  # every exception: the caller's second look says what is left
        pass
    finally:
        os.close(parent)


def _remove_beneath(parent: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=parent)  # a file, a link, a socket...: done
        return
    except FileNotFoundError:
        return
    except OSError:
        pass  # a folder (EISDIR, or EPERM on Linux), or not removable: try it as a folder
    stuck: set[tuple[int, int]] = set()  # folders that cannot be opened or removed: left, not retried forever
    current = _open_folder(parent, name, stuck, os.fstat(parent).st_dev)
    if current is None:
        return
    top = os.fstat(parent)
    trail = [(name, (top.st_dev, top.st_ino))]  # the folders gone into, each with the identity of the one above
    try:
        while trail:
            here = os.fstat(current)
            deeper = None
            with os.scandir(current) as listing:
                for entry in listing:
                    if not entry.is_dir(follow_symlinks=False):
                        try:
                            os.unlink(entry.name, dir_fd=current)
                        except OSError:
                            pass
                    elif deeper is None and (identity := _identity(entry)) and identity not in stuck:
                        deeper = entry.name
            if deeper is not None:
                child = _open_folder(current, deeper, stuck, here.st_dev)
                if child is not None:
                    trail.append((deeper, (here.st_dev, here.st_ino)))
                    os.close(current)
                    current = child
                continue  # looked at again: what could not be opened is now stuck
            name, above = trail.pop()  # empty, but for what is stuck: back up and remove it from there
            up = os.open("..", _FOLDER, dir_fd=current)
            os.close(current)
            current = up
            found = os.fstat(current)
            if (found.st_dev, found.st_ino) != above:  # moved under us: stop; the caller looks again
                return
            try:
                os.rmdir(name, dir_fd=current)
            except OSError:
                stuck.add((here.st_dev, here.st_ino))
    finally:
        os.close(current)


def _identity(entry: os.DirEntry) -> tuple[int, int] | None:
    try:
        found = entry.stat(follow_symlinks=False)  # as _open_folder's: a mount point's is the mounted root's
    except OSError:
        return None
    return (found.st_dev, found.st_ino)


def _open_folder(current: int, name: str, stuck: set, device: int) -> int | None:
    """Open a folder beneath ``current``, a link never followed, making it readable for its owner if it
    is not; None (and the folder marked stuck) if it cannot be opened or lies on another file system
    (a mount inside: not ours to empty)."""
    try:
        found = os.stat(name, dir_fd=current, follow_symlinks=False)
    except OSError:
        return None
    try:
        if stat.S_ISDIR(found.st_mode) and found.st_mode & 0o700 != 0o700:
            os.chmod(name, 0o700, dir_fd=current)  # only a folder gets here: chmod follows no link
        opened = os.open(name, _FOLDER, dir_fd=current)
    except OSError:
        stuck.add((found.st_dev, found.st_ino))
        return None
    if os.fstat(opened).st_dev != device:
        os.close(opened)
        stuck.add((found.st_dev, found.st_ino))
        return None
    return opened
