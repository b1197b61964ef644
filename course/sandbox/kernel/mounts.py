"""Mounts of a process's own mount namespace: paths bound read-only, stand-ins over hidden ones, every mount
read-only but the writable folders, a size-bounded tmpfs."""

from __future__ import annotations

import atexit
import ctypes
import functools
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from course.sandbox.kernel.calls import check, libc

LINUX = sys.platform.startswith("linux")
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND = 1, 2, 4, 8, 32, 4096
MS_NOATIME, MS_NODIRATIME, MS_REC, MS_PRIVATE, MS_RELATIME = 1024, 2048, 16384, 1 << 18, 1 << 21
# A read-only remount inside a user namespace must keep the locked flags of the mount it came from.
KEPT_FLAGS = {os.ST_NOSUID: MS_NOSUID, os.ST_NODEV: MS_NODEV, os.ST_NOEXEC: MS_NOEXEC,
              os.ST_NOATIME: MS_NOATIME, os.ST_NODIRATIME: MS_NODIRATIME,
              getattr(os, "ST_RELATIME", 4096): MS_RELATIME} if LINUX else {}


def bind_read_only(paths: Sequence[tuple[str, str]]) -> None:
    """Each path (a folder or a file inside the workspace) bound onto itself read-only, in the command's
    mount namespace only: nothing in it can be written, created, renamed or deleted, and the path itself
    cannot be renamed or removed (it is a mount point). Codex CLI keeps .git read-only inside its
    writable roots the same way (a read-only bind mount, codex-rs/linux-sandbox)."""
    for target, path in paths:  # (where, the path bound there): the path itself, or another place it is reachable
        check(libc().mount(path.encode(), target.encode(), None, MS_BIND | MS_REC, None), f"bind {target}")
        kept = sum(flag for bit, flag in KEPT_FLAGS.items() if os.statvfs(target).f_flag & bit)
        check(libc().mount(None, target.encode(), None, MS_REMOUNT | MS_BIND | MS_RDONLY | kept, None),
               f"read-only {target}")


# Landlock governs opening, creating, renaming and removing, not a file's mode or times: a command that
# runs as uid 0 owns the machine's files, and the owner may chmod or utime a file without opening it
# (no capability needed). A read-only mount refuses every change to what lies on it (EROFS), whoever
# asks, so in the command's mount namespace every mount is made read-only but the writable folder,
# which is first bound onto itself so that it is a mount of its own (a mount of the same file system
# elsewhere stays read-only). mount_setattr(2) (Linux 5.12; Landlock ABI 4 needs 6.7) sets the flag
# on a whole tree of mounts at once and leaves every other flag as it is, so the flags a user namespace
# locks (nosuid, nodev, noexec, the atime ones: mount_namespaces(7)) need not be read and repeated, as a
# remount(2) must (bubblewrap remounts each mount with MS_RDONLY and the flags it read from statvfs).
# A device node on a read-only mount can still be written (/dev/null), since that writes no inode.
# The namespace is a fresh copy: no file is open for writing on its mounts, so none refuses (EBUSY);
# what the process opened before the copy (its output file) is written through the original mount.
# Sources: https://man7.org/linux/man-pages/man2/mount_setattr.2.html,
# https://man7.org/linux/man-pages/man7/mount_namespaces.7.html.

SYS_MOUNT_SETATTR, AT_FDCWD, AT_RECURSIVE, MOUNT_ATTR_RDONLY = 442, -100, 0x8000, 0x1  # 442 on every architecture


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64), ("propagation", ctypes.c_uint64),
                ("userns_fd", ctypes.c_uint64)]


def read_only_but(writable: Sequence[str]) -> None:
    """In this process's own mount namespace, every mount read-only but each folder of ``writable`` (a
    mount made beneath one, such as a protected path bound read-only, stays read-only). A process that
    had one of those folders as its working folder must enter it again: it was on the old mount."""
    calls = libc()
    for folder in writable:
        check(calls.mount(folder.encode(), folder.encode(), None, MS_BIND | MS_REC, None), f"bind {folder}")
    _set_mount_attributes("/", AT_RECURSIVE, MOUNT_ATTR_RDONLY, 0)
    for folder in writable:
        _set_mount_attributes(folder, 0, 0, MOUNT_ATTR_RDONLY)


def _set_mount_attributes(path: str, flags: int, attr_set: int, attr_clr: int) -> None:
    attr = _MountAttr(attr_set=attr_set, attr_clr=attr_clr)
    check(libc().syscall(ctypes.c_long(SYS_MOUNT_SETATTR), ctypes.c_int(AT_FDCWD), path.encode(),
                           ctypes.c_uint(flags), ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr))),
           f"mount_setattr {path}")


def mask(pairs: Sequence[tuple[str, str]]) -> None:
    for target, stand_in in pairs:
        check(libc().mount(stand_in.encode(), target.encode(), None, MS_BIND, None), f"bind over {target}")
        kept = sum(flag for bit, flag in KEPT_FLAGS.items() if os.statvfs(stand_in).f_flag & bit)
        check(libc().mount(None, target.encode(), None, MS_REMOUNT | MS_BIND | MS_RDONLY | kept, None),
               f"read-only {target}")


def mount_tmpfs(folder: str, size_mb: int, files: int) -> bool:
    """A tmpfs of its own on ``folder``, in this process's mount namespace (tmpfs may be mounted in a user
    namespace: https://man7.org/linux/man-pages/man7/user_namespaces.7.html), of ``size_mb`` megabytes
    and ``files`` entries at most; it goes when the namespace does, with whatever was left in it."""
    options = f"size={size_mb}m,nr_inodes={files},mode=0700".encode()
    return libc().mount(b"tmpfs", folder.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options) == 0



# Landlock can only grant: a rule on the workspace covers everything beneath it, and no rule can take
# `.env` back out. Per-entry rules (one per name at the workspace root, none for .env) would hide it,
# but a file created at the root during the call would have no rule and be unreachable, and a new
# folder would need rules we cannot add after the fact. So, as Claude Code's sandbox does with
# bubblewrap for denied reads (a read-only /dev/null over a file, an empty tmpfs over a folder), the
# command gets a private mount namespace in which each hidden path is covered by a stand-in. Ours is
# an empty file or folder of mode 000, mounted read-only: with no capability left to override the
# mode, reading fails ("Permission denied", clearer to a model than an empty file) and so does
# writing; read-only, it cannot be chmod-ed back. The real file is untouched and only the command's
# namespace sees the stand-in. A user namespace makes this possible without root (we map our own uid
# to itself, so files keep their owner); Landlock then forbids umount, so it cannot be undone.
# Checked here both as root and as an unprivileged user (tests/test_confine.py runs both).


def stand_ins(hidden: Sequence[Path], workspace: Path) -> tuple[tuple[str, str], ...]:
    """(existing hidden path, stand-in): a path that does not exist has nothing to hide, and neither does one
    inside a hidden folder (a runs/ folder and its transcripts): covered with it, it is not there to bind over."""
    empty_file, empty_folder = _empty_stand_ins()
    pairs, folders = [], []
    for path in sorted({(workspace / path).resolve() for path in hidden}, key=lambda path: len(path.parts)):
        # relative to the workspace; a symbolic link: hide its target; outermost first
        if any(path.is_relative_to(folder) for folder in folders):
            continue
        if path.is_dir():
            folders.append(path)
            pairs.append((str(path), empty_folder))
        elif path.exists():
            pairs.append((str(path), empty_file))
    return tuple(pairs)


# A bind mount covers one path, and Landlock follows the file, not the path: where the workspace is also
# reachable at a second mount point of the same file system (a bind mount of a folder above it, a btrfs
# subvolume mounted twice, ostree's /var), `cat /second/place/workspace/.env` read the file the stand-in
# covers at its first path, and a protected folder there was writable. So each hidden or read-only path
# is covered at every path it is reachable by: for each mount of the same file system (the same
# major:minor in /proc/self/mountinfo, man proc_pid_mountinfo(5)) whose root is the path's folder or one
# above it within that file system, the same file beneath its mount point, checked to be the same file
# (device and inode). Worked out before the fork, in the harness's namespace, whose mounts the command's
# namespace starts as a copy of. Where this cannot be read, the command is not started (fail closed).

def everywhere(pairs: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """(path to cover, what covers it) for every path at which each path of ``pairs`` is reachable."""
    if not pairs:
        return ()
    mounts = _mounts()
    covered = []
    for target, cover in pairs:
        covered += [(path, cover) for path in (target, *_other_paths(target, mounts))]
    return tuple(dict.fromkeys(covered))


def _mounts() -> list[tuple[int, str, str, str]]:
    """(mount id, major:minor, root within its file system, mount point) of each mount, from mountinfo."""
    mounts = []
    with open("/proc/self/mountinfo", "rb") as listing:
        for line in listing:
            fields = line.split()
            mounts.append((int(fields[0]), fields[2].decode(), _unescape(fields[3]), _unescape(fields[4])))
    return mounts


def _unescape(field: bytes) -> str:
    """mountinfo writes a space, tab, newline and backslash in a path as \\040, \\011, \\012 and \\134."""
    return os.fsdecode(re.sub(rb"\\([0-7]{3})", lambda found: bytes([int(found[1], 8)]), field))


def _other_paths(path: str, mounts: list[tuple[int, str, str, str]]) -> list[str]:
    """The other paths at which the file at ``path`` (no link at its end: _stand_ins resolved it) is reachable."""
    handle = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        wanted = os.fstat(handle)
        with open(f"/proc/self/fdinfo/{handle}") as info:  # mnt_id: the mount the path lies on (Linux 3.15)
            mount_id = int(next(line.split()[1] for line in info if line.startswith("mnt_id:")))
    finally:
        os.close(handle)
    device, root, point = next((device, root, point) for number, device, root, point in mounts if number == mount_id)
    within = Path(root, os.path.relpath(path, point))  # the path within its file system
    found = []
    for _, other_device, other_root, other_point in mounts:
        if other_device != device or not within.is_relative_to(other_root):
            continue
        other = os.path.normpath(os.path.join(other_point, within.relative_to(other_root)))
        try:
            seen = os.stat(other, follow_symlinks=False)
        except OSError:  # covered there by another mount, or not reachable: nothing to cover
            continue
        if other != path and (seen.st_dev, seen.st_ino) == (wanted.st_dev, wanted.st_ino):
            found.append(other)
    return found


def _empty_stand_ins() -> tuple[str, str]:
    folder = _stand_in_folder()
    if not os.path.isdir(folder):  # someone cleaned the temporary folder under us
        _stand_in_folder.cache_clear()
        folder = _stand_in_folder()
    return os.path.join(folder, "empty-file"), os.path.join(folder, "empty-folder")


@functools.lru_cache(maxsize=None)
def _stand_in_folder() -> str:
    folder = tempfile.mkdtemp(prefix="confine-stand-ins-")
    Path(folder, "empty-file").touch(mode=0o000)
    os.mkdir(os.path.join(folder, "empty-folder"), mode=0o000)
    atexit.register(_remove_stand_ins, folder)
    return folder


def _remove_stand_ins(folder: str) -> None:
    try:  # a folder of mode 000 cannot be listed, so not emptied: its owner may open it first (root need not)
        os.chmod(os.path.join(folder, "empty-folder"), 0o700)
    except OSError:
        pass
    shutil.rmtree(folder, ignore_errors=True)
