"""The modes a confined process leaves on the files of its writable folder: set-id bits and others' write
taken off after it ran, since Landlock governs opening files, never their modes."""

from __future__ import annotations

import errno
import os
import stat
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from course.runtime.trees import entries_under
from course.sandbox.kernel.seccomp import SET_ID_BITS

LINUX = sys.platform.startswith("linux")

# A file's mode outlives the command and reaches every user of the machine. Two things a command could
# leave, neither of which Landlock governs: a set-user-id or set-group-id file (the filter refuses the
# calls that set those bits, but a file may get them some other way: a hard link, a copy made with
# its mode, the harness writing as root with CAP_FSETID), which any user then runs with the owner's
# rights outside the confinement; and an entry others may write (`chmod 1777 .`, `chmod 666 notes.txt`),
# where any local user can then plant what the next command or the user runs. So commands run with
# umask 022 at least (what they create is not others' to write), and after each one, in one walk of
# the workspace (links not followed): the set-id bits are taken off every regular file that has them,
# unless the file has a name the walk did not find (a hard link, made before, to a file outside: the
# system's /usr/bin/passwd keeps its bit; this is said), the workspace folder gets back the mode it had
# before, and others' write bit comes off every entry that gained it while the command ran. Whether an
# entry gained it: its last change (ctime, which only the kernel sets, to its coarse clock, never
# earlier than when the command started) is not before the command started, and it was not open to
# others, by the same path and inode, at the last look (the previous sweep, or a walk before the first
# command in a workspace; an entry changed by anyone else in between is taken as gained: the sweep errs
# towards closing). Sources: man 7 inode (S_ISUID, S_ISGID, S_IWOTH; the kernel clears set-id bits on
# a write only without CAP_FSETID), man 2 umask, and systemd's RestrictSUIDSGID= (systemd.exec(5)).
SET_ID_BITS_NOTE = "set-user-id and set-group-id bits taken off (a file of the workspace never keeps them)"
OTHERS_WRITE = stat.S_IWOTH
CLOCK_REALTIME_COARSE = getattr(time, "CLOCK_REALTIME_COARSE", 5)  # the clock the kernel stamps ctime with (uapi/linux/time.h)
CLOCK_MARGIN_NS = 1_000_000_000  # a clock stepped back a little does not hide a change

# What others could write at the last look, per workspace: {(path, device, inode)}.
_open_to_others: dict[str, frozenset[tuple[str, int, int]]] = {}


@dataclass(frozen=True)
class _Modes:
    folder: tuple[int, int, int]  # the workspace folder's (device, inode, mode) before the command, or zeros
    started_ns: int  # a change stamped at or after this came from the command (or from someone meanwhile)
    open_before: frozenset[tuple[str, int, int]]


def modes_before(workspace: Path, unchanged: set[str]) -> _Modes:
    try:
        found = os.lstat(workspace)
    except OSError:  # a workspace that is gone: the command does not start, and says why
        return _Modes((0, 0, 0), 0, frozenset())
    open_before = _open_to_others.get(str(workspace))
    if open_before is None:
        open_before = frozenset((str(path), entry.st_dev, entry.st_ino) for path, entry in _walk_modes(workspace, unchanged)
                                if entry.st_mode & OTHERS_WRITE)
    started = time.clock_gettime_ns(CLOCK_REALTIME_COARSE) if LINUX else time.time_ns()
    return _Modes((found.st_dev, found.st_ino, stat.S_IMODE(found.st_mode)), started - CLOCK_MARGIN_NS, open_before)


def _walk_modes(workspace: Path, unchanged: set[str]):
    """(path, lstat) of every entry of the workspace that is not a link and that others can write or
    that is set-id (not going into a folder of ``unchanged``)."""
    for path, _ in entries_under(workspace, skip=lambda folder: str(folder) in unchanged):
        try:
            found = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISLNK(found.st_mode) and found.st_mode & (OTHERS_WRITE | SET_ID_BITS):
            yield path, found


def sweep_modes(workspace: Path, before: _Modes, unchanged: set[str]) -> list[str]:
    """After a command (none of its processes left): what the comment above says, in one walk; at
    most four lines for the command's result, none when there was nothing to do."""
    opened, cleared, kept_set_id, failed, folder = [], [], [], [], ""
    device, inode, mode = before.folder
    try:
        now = os.lstat(workspace)
        if (now.st_dev, now.st_ino) == (device, inode) and stat.S_IMODE(now.st_mode) != mode:
            _set_mode(workspace, (device, inode), mode)
            folder = f"the workspace folder's mode put back from {stat.S_IMODE(now.st_mode):o} to {mode:o}"
    except OSError as error:
        failed.append(f"the workspace folder ({error.strerror})")
    still_open, set_id = set(), {}
    for path, found in _walk_modes(workspace, unchanged):
        name = repr(str(path.relative_to(workspace)))  # repr: a name's control characters escaped
        key = (str(path), found.st_dev, found.st_ino)
        if found.st_mode & OTHERS_WRITE:
            if found.st_ctime_ns >= before.started_ns and key not in before.open_before:
                try:
                    _set_mode(path, key[1:], stat.S_IMODE(found.st_mode) & ~OTHERS_WRITE)
                    opened.append(name)
                except OSError as error:
                    failed.append(f"{name} ({error.strerror})")
                    still_open.add(key)
            else:
                still_open.add(key)
        if stat.S_ISREG(found.st_mode) and found.st_mode & SET_ID_BITS:
            set_id.setdefault(key[1:], []).append((path, name, found.st_nlink))
    # Every name of a set-id file is set-id too, so the walk found each one inside the workspace.
    for identity, names in set_id.items():
        shown = ", ".join(name for _, name, _ in names)
        if len(names) < names[0][2]:
            kept_set_id.append(shown)
            continue
        try:
            _set_mode(names[0][0], identity, stat.S_IMODE(os.lstat(names[0][0]).st_mode) & ~SET_ID_BITS)
            cleared.append(shown)
        except OSError as error:
            failed.append(f"{shown} ({error.strerror})")
    _open_to_others[str(workspace)] = frozenset(still_open)
    said = []
    if cleared:
        said.append(f"{SET_ID_BITS_NOTE}: {_few(cleared)}")
    if kept_set_id:
        said.append(f"set-id bits left on {_few(kept_set_id)}: the same file has a name outside the workspace "
                    "(a hard link), and changing its mode would change that file too")
    if folder or opened:
        taken = f"others' write permission taken off what the command opened to every user: {_few(opened)}"
        said.append("; ".join(part for part in (folder, taken if opened else "") if part))
    if failed:
        said.append(f"could not take set-id or others' write bits off {_few(failed)}")
    return said


def _set_mode(path: Path, identity: tuple[int, int], mode: int) -> None:
    """chmod the entry the walk saw, and no other: no process of the command is left to swap it, and a
    link is never followed (the look just before says it is not one)."""
    found = os.lstat(path)
    if (found.st_dev, found.st_ino) != tuple(identity) or stat.S_ISLNK(found.st_mode):
        raise OSError(errno.ESTALE, "it changed while it was looked at")
    os.chmod(path, mode)


def _few(names: list[str], most: int = 10) -> str:
    return ", ".join(names[:most]) + (f" and {len(names) - most:,} more" if len(names) > most else "")

