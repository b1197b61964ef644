"""Paths for s06's file tools and its gate: one resolver, so that the gate judges the very entry a tool opens.

A path comes from the model, and resolving it is where an escape happens. Compared as text,
'/work/ws-evil' starts with '/work/ws' (the prefix bug behind CVE-2025-54794 and CVE-2025-53110);
normalised as text, 'L/../x' is 'x', where the file system, with L a link to a folder, goes
elsewhere; followed to its end, a link that a tool deletes is its target. So the file tools and the
gate resolve every path with ``resolve()``, the same way:

* refused before anything is resolved: a NUL byte, an absolute path, more than MAX_PATH_CHARS
  characters or MAX_PATH_DEPTH names;
* resolved by the file system, links and '..' in order, and compared with the workspace by its
  path components, never as a string;
* its last name followed, or not (``follow_link=False``: deleting or moving a link acts on the link).

Around it: ``entry()`` (what delete_file and move_file act on), ``refuse_odd_file()`` (a file tool
acts on regular files with a single name), ``subjects()`` (what a file tool's call acts on, as the
gate judges it), ``covered_files()`` (the files a deny rule covers, and every other name for them),
and, for a command's words, ``paths_named_by()`` and ``operand_problem()``.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Sequence

MAX_PATH_CHARS = 1024  # a longer path is refused: resolving it costs time that grows with its square
MAX_PATH_DEPTH = 32    # a deeper path is refused: a folder chain 1,000 deep breaks every walk of the workspace
PATH_ARGUMENTS = ("path", "source", "destination")  # the arguments of the file tools that name a path
OUTSIDE = "use a path relative to the workspace, without '..', a leading '/' or links that lead out"


class Refused(Exception):
    """A path a file tool will not act on, said as a tool error is: what kind, what happened, what to do."""

    def __init__(self, kind: str, message: str, hint: str):
        super().__init__(message)
        self.kind, self.message, self.hint = kind, message, hint


# ---------------------------------------------------------------- the resolver

def resolve(workspace: Path, path: str, *, follow_link: bool = True) -> Path:
    """The entry ``path`` names, if it stays inside the workspace: links and '..' resolved by the file
    system. With ``follow_link=False``, the last name is the entry itself, a link not followed (its
    folder resolved); a path whose last name is no entry of its own ('.', 'x/..') is that folder."""
    if len(path) > MAX_PATH_CHARS or path.count("/") >= MAX_PATH_DEPTH:
        raise Refused("path_too_long", f"the path is {len(path)} characters and {path.count('/') + 1} names deep "
                                       f"(at most {MAX_PATH_CHARS} and {MAX_PATH_DEPTH})", "use a shorter path")
    if "\x00" in path:
        raise Refused("outside_workspace", "the path contains a NUL byte", OUTSIDE)
    if Path(path).is_absolute():
        raise Refused("outside_workspace", f"{path!r} is an absolute path", OUTSIDE)
    resolved = (workspace / path).resolve()
    if not resolved.is_relative_to(workspace.resolve()):
        raise Refused("outside_workspace", f"{path!r} leads outside the workspace", OUTSIDE)
    name = Path(path).name
    if follow_link or name in ("", ".."):
        return resolved
    return resolve(workspace, str(Path(path).parent)) / name  # its folder must stay inside too


def entry(workspace: Path, path: str) -> Path:
    """What delete_file and move_file act on: the entry itself, never where a link leads; a path
    that names a folder ('.', 'x/..') is refused. A link that leads out is refused like any escape."""
    found = resolve(workspace, path, follow_link=False)
    if Path(path).name in ("", ".."):
        raise Refused("not_a_file", f"{path!r} names a folder, not a file", "name one file")
    return found


def refuse_odd_file(file: Path, path: str) -> None:
    """An existing file a tool reads or overwrites must be a regular file with one name. A named pipe
    would block the loop, a device never end; a file with another name (a hard link) may be a file
    outside the workspace, or a secret, under a name the rules do not cover."""
    if not file.exists():
        return
    if not file.is_file():
        raise Refused("not_a_file", f"{path!r} is not a regular file (a folder, a pipe, a socket or a device)",
                      "act on regular files only")
    if file.stat().st_nlink > 1:
        raise Refused("hard_link", f"{path!r} is a hard link: the same file has another name, perhaps outside "
                                   "the workspace", "work on another file, or ask the user about this one")


# ---------------------------------------------------------------- what a call acts on, for the gate

@dataclass(frozen=True)
class Subjects:
    """What one file tool's call acts on, resolved exactly as the tool resolves it."""

    acted_on: list[str]   # each entry it acts on, relative to the workspace ("" when the call names no path)
    leads_to: list[str]   # where an entry it acts on without following leads, when that is elsewhere
    same_file: str        # why one of them is a hidden file under another name (a hard link), or ""
    overwrites: bool      # its "path" names an existing regular file, links followed


def subjects(workspace: Path, arguments: dict, *, follow_link: bool, hidden: Sequence[Path] = ()) -> Subjects:
    """The entries a call acts on (each path argument through ``resolve()``: an escape is refused here,
    before any rule or person sees it), where a link it acts on leads, and whether one of them is the
    same file as one of ``hidden`` (same device and inode: `ln .env notes.txt`)."""
    root, acted, leads = workspace.resolve(), [], []
    for key in PATH_ARGUMENTS:
        if key in arguments:
            found = resolve(workspace, str(arguments[key]), follow_link=follow_link)
            target = found.resolve()
            acted += [] if str(found.relative_to(root)) in acted else [str(found.relative_to(root))]
            if target != found and target.is_relative_to(root) and str(target.relative_to(root)) not in leads:
                leads.append(str(target.relative_to(root)))
    secrets = {inode_of(path) for path in hidden} - {None}
    same = next((f"{name!r} is the same file as one a deny rule covers (a hard link)" for name in acted + leads
                 if secrets and inode_of(root / name) in secrets), "")
    overwrites = "path" in arguments and (root / acted[0]).is_file()
    return Subjects(acted or [""], leads, same, overwrites)


def covered_files(workspace: Path, covered: Callable[[str], bool]) -> list[Path]:
    """The files inside the workspace that ``covered`` (a deny rule, given a path relative to the
    workspace) says no tool may read, such as .env at any depth; and every other name for them
    (`ln .env notes.txt`: the same device and inode); and any file with a second name, which may be
    a file outside the workspace. A command is confined so that it cannot read them, and the search
    tool skips them."""
    root = Path(os.path.realpath(workspace))
    found, others = [], []
    # A covered folder is hidden whole, so the walk does not go into it; ``covered`` is then asked of
    # each entry alone (its folders were judged on the way down): the work grows with the number of
    # entries, not with their depth squared (a chain of folders 1,000 deep).
    for path, is_file in entries_under(root, skip=lambda path: covered(str(path.relative_to(root)))):
        if covered(str(path.relative_to(root))):
            found.append(path)
        elif is_file:
            others.append(path)
    secrets = {inode_of(path) for path in found} - {None}
    return found + [path for path in others if inode_of(path) in secrets or links_of(path) > 1]


def entries_under(root: Path, skip: Callable[[Path], bool] | None = None) -> Iterator[tuple[Path, bool]]:
    """Every entry under ``root`` as (path, is a regular file), links not followed, not going into a
    folder ``skip`` says to leave. A loop, not recursion: os.walk recurses on Python 3.11, and a chain
    of folders 1,000 deep broke it."""
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            children = list(os.scandir(folder))
        except OSError:
            continue
        for child in children:
            yield Path(child.path), child.is_file(follow_symlinks=False)
            if child.is_dir(follow_symlinks=False) and not (skip and skip(Path(child.path))):
                stack.append(Path(child.path))


def links_of(path: Path) -> int:
    try:
        return os.lstat(path).st_nlink
    except OSError:
        return 1


def inode_of(path: Path) -> tuple[int, int] | None:
    """(device, inode) of a regular file, links followed; None for anything else or nothing."""
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return None
    return (found.st_dev, found.st_ino) if stat.S_ISREG(found.st_mode) else None


# ---------------------------------------------------------------- a command's words as paths

def paths_named_by(workspace: Path, word: str) -> list[str]:
    """A word of a command as a path: as written (normalised; an option's value after '='), and where
    it leads inside the workspace, links followed. For deny rules: `cat env-link` reads .env."""
    if not word or "\x00" in word:
        return []
    written = os.path.normpath(word.partition("=")[2] or word) if word.startswith("-") else os.path.normpath(word)
    paths = [written]
    try:
        resolved = Path(os.path.realpath(workspace / written))
        root = Path(os.path.realpath(workspace))
        if resolved.is_relative_to(root) and resolved != root:
            paths += [str(resolved.relative_to(root))] if str(resolved.relative_to(root)) != written else []
    except (OSError, ValueError):
        pass
    return paths


def operand_problem(workspace: Path, path: str, covered: Callable[[str], bool], secrets: frozenset = frozenset()) -> str:
    """Why a command's path operand may not be read without a person: it leads out (links followed),
    ``covered`` says a deny rule covers it, it is the same file as one of ``secrets`` (inodes), or it
    is there and is neither a regular file nor a folder (a fifo, a socket, a device: `head -c 40 disk`)."""
    if path == "-":
        return ""
    resolved = Path(os.path.realpath(workspace / path))
    root = Path(os.path.realpath(workspace))
    if not resolved.is_relative_to(root):
        return f"{path!r} leads outside the workspace"
    relative = str(resolved.relative_to(root))
    if covered(relative):
        return f"{path!r} is {relative!r}, which a deny rule covers"
    if secrets and inode_of(resolved) in secrets:
        return f"{path!r} is the same file as one a deny rule covers (a hard link)"
    try:
        mode = os.stat(resolved).st_mode
    except (OSError, ValueError):
        return ""  # nothing there (yet): the program says so
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):  # a fifo blocks the loop, a device may never end or be a disk
        return f"{path!r} is not a regular file or a folder (a named pipe, a socket or a device): a person decides"
    return ""
