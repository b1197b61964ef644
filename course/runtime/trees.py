"""Walking and removing a folder tree without recursion and without following a link.

The lowest layer of the support package, beside nothing but the standard library: the workspace (copying,
snapshotting and removing a run's folder) and s06's path rules (counting and removing what a command
made) both need it, and neither should import the other for it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Callable, Iterator

PATH_MAX = 4096  # Linux's limits.h, NUL included: a longer path cannot be named in one system call


def entries_under(root: Path, skip: Callable[[Path], bool] | None = None) -> Iterator[tuple[Path, bool]]:
    """Every entry under ``root`` as (path, is a regular file), links not followed, not going into a
    folder ``skip`` says to leave. A loop, not recursion: os.walk recurses on Python 3.11, and a chain
    of folders 1,000 deep broke it. Only entries whose path the system can name (shorter than
    PATH_MAX, 4,096 bytes on Linux) are yielded: Path.is_symlink() and the like raise on a longer one
    (ENAMETOOLONG), so a chain made deeper than that would crash every caller; what lies deeper no
    program reaches by its path (git and editors look from the workspace's top, a few levels down)."""
    stack = [(root, len(os.fsencode(str(root))))]
    while stack:
        folder, length = stack.pop()
        try:
            children = list(os.scandir(folder))
        except OSError:
            continue
        for child in children:
            longer = length + 1 + len(os.fsencode(child.name))
            if longer >= PATH_MAX:
                continue
            path = folder / child.name  # joined, not parsed again: a path 1,000 names deep costs its parse each time
            yield path, child.is_file(follow_symlinks=False)
            if child.is_dir(follow_symlinks=False) and not (skip and skip(path)):
                stack.append((path, longer))


_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def remove_tree(path: str | Path) -> None:
    """Remove ``path`` and all it holds, as far as it can, without recursion and without following a link.

    shutil.rmtree recurses once per level on Python 3.11: a chain of folders 1,200 deep raises
    RecursionError, which its ignore_errors=True does not swallow. Here one folder is open at a time
    (a chain deeper than the open-file limit cannot exhaust it), every name is looked up relative to
    it (a path longer than PATH_MAX is no obstacle), a link is removed, never followed, and a folder
    its owner left unreadable is opened up first. The way back up goes through "..", checked to be
    the folder we came down from. Nothing raises: what could not be removed is still there, and the
    caller looks again (course.sandbox.paths.remove_new_protected does)."""
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
