"""Landlock, by ctypes (no package): the ABI, the rights it knows, the system folders' grants, and one
ruleset builder (https://docs.kernel.org/userspace-api/landlock.html)."""

from __future__ import annotations

import ctypes
import functools
import os
import stat
import sys
from collections.abc import Sequence
from pathlib import Path

from course.sandbox.kernel.calls import check, libc

LINUX = sys.platform.startswith("linux")

# Syscall numbers 444-446 are the same on every architecture but alpha (uapi asm-generic/unistd.h).
SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION, RULE_PATH_BENEATH = 1, 1
# Access rights, in the order of include/uapi/linux/landlock.h and landlock(7).
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR, MAKE_REG = 1 << 4, 1 << 5, 1 << 6, 1 << 7, 1 << 8
MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15  # ABI 2, 3 and 5
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6
READ_AND_RUN = EXECUTE | READ_FILE | READ_DIR
SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
DEVICES = {"/dev/null": READ_FILE | WRITE_FILE | TRUNCATE | IOCTL_DEV, "/dev/zero": READ_FILE | WRITE_FILE | IOCTL_DEV,
           "/dev/urandom": READ_FILE, "/dev/random": READ_FILE}


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # __attribute__((packed)) in the kernel header
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def landlock_abi() -> int:
    """The Landlock ABI version of the running kernel, or 0 when there is none (or not Linux)."""
    if not LINUX:
        return 0
    version = libc().syscall(ctypes.c_long(SYS_CREATE_RULESET), None, ctypes.c_size_t(0),
                              ctypes.c_uint32(CREATE_RULESET_VERSION))
    return max(version, 0)


def handled_files(abi: int) -> int:
    """The file rights this ABI knows (landlock(7)): asking for a newer one makes landlock_create_ruleset fail."""
    rights = (1 << 13) - 1  # EXECUTE .. MAKE_SYM, ABI 1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


# The system folders are granted for reading, but not what the system itself keeps from other users: a
# command that runs as uid 0 owns /etc/shadow (mode 0640), the ssh host keys and /etc/ssl/private, and
# would print them into its output, which goes to the model. A Landlock rule grants a whole hierarchy
# and no rule takes a part of it back, so a system folder that holds such an entry is granted as its
# listing only (READ_DIR), and each of its entries on its own: the whole entry where nothing beneath it
# is kept from others, its parts the same way where something is, nothing for the entry itself. A rule
# belongs to the file, not the path, so the entry stays unreadable at any path it is reachable by (a
# second mount of the same file system included), and this holds with or without a mount namespace.
# "Kept from other users": a file or folder whose mode gives others no read. The walk covers the
# system folders but /usr and /lib*, which hold what packages install, shared by every user (FHS 3.0,
# https://refspecs.linuxfoundation.org/FHS_3.0/fhs/ch04.html); the machine's own secrets are in /etc
# (FHS ch03s07). It runs once per process (about 1,200 entries, a few milliseconds): what /etc holds
# when the first command runs is what is granted after it, an entry added later stays unreadable.
SHARED_SYSTEM_FOLDERS = ("/usr", "/lib", "/lib32", "/lib64", "/libx32")
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # what a rule on a file (not a folder) may grant


@functools.lru_cache(maxsize=None)
def kept_from_others() -> frozenset[str]:
    """Every entry of the system folders (but the shared ones) whose mode gives others no read, with each
    folder above it; a folder kept from others is not looked into (everything beneath it is kept)."""
    kept: set[str] = set()
    shared = [Path(folder).resolve() for folder in SHARED_SYSTEM_FOLDERS]
    folders = [folder for folder in SYSTEM_FOLDERS  # /bin is often a link to /usr/bin: shared, then
               if os.path.isdir(folder) and not any(Path(folder).resolve().is_relative_to(place) for place in shared)]
    while folders:
        folder = folders.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            if stat.S_ISLNK(mode):  # a rule is never made for a link: what it points to is granted, or not, where it lies
                continue
            if not mode & stat.S_IROTH:
                kept.add(entry.path)
                kept.update(str(parent) for parent in Path(entry.path).parents)
            elif stat.S_ISDIR(mode):
                folders.append(entry.path)
    return frozenset(kept)


@functools.lru_cache(maxsize=None)
def system_grants(rights: int) -> tuple[tuple[str, int], ...]:
    """(path, rights) for the system folders: each whole, but around what is kept from other users (once
    per process, as the walk: about 170 rules here, 2 ms of a command's start in all)."""
    kept = kept_from_others()
    grants: list[tuple[str, int]] = []

    def grant(path: str, is_folder: bool) -> None:
        if path not in kept:
            grants.append((path, rights if is_folder else rights & FILE_RIGHTS))
            return
        if not is_folder or not _readable_by_others(path):
            return  # kept from others itself: no rule (a folder above may still list its name)
        grants.append((path, rights & READ_DIR))
        try:
            entries = list(os.scandir(path))
        except OSError:
            return
        for entry in entries:
            try:
                if not entry.is_symlink() and (entry.is_dir(follow_symlinks=False) or entry.is_file(follow_symlinks=False)):
                    grant(entry.path, entry.is_dir(follow_symlinks=False))
            except OSError:
                continue

    for folder in SYSTEM_FOLDERS:
        grant(folder, True)
    return tuple(grants)


def _readable_by_others(path: str) -> bool:
    try:
        return bool(os.stat(path, follow_symlinks=False).st_mode & stat.S_IROTH)
    except OSError:
        return False


def restrict_self(ruleset: int) -> None:
    """This process (and what it starts) into a new Landlock domain of the ruleset's. Processes that each
    call it with the same ruleset are in sibling domains: none may ptrace another (landlock(7))."""
    check(libc().syscall(ctypes.c_long(SYS_RESTRICT_SELF), ctypes.c_int(ruleset), ctypes.c_uint32(0)),
          "landlock_restrict_self")


def full_ruleset(grants: Sequence[tuple[str, int]], abi: int) -> int:
    """A ruleset that handles every right this ABI knows: files as granted, every TCP bind and connect
    refused (handled, with no rule: ABI 4), and abstract unix sockets and signals kept inside (ABI 6)."""
    return ruleset(handled_files(abi), grants, net=NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0,
                   scoped=SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0)


def ruleset(handled: int, grants: Sequence[tuple[str, int]], *, net: int = 0, scoped: int = 0) -> int:
    """A ruleset (a close-on-exec descriptor): the file rights in ``handled`` are refused beneath every path
    but those ``grants`` names, each (path, rights), a file with only the rights a file rule may hold (a
    path that cannot be opened, /lib32 on most systems, is granted nothing); ``net``: the network rights
    handled (none granted); ``scoped``: the scopes. The struct is passed at the size of the oldest ABI that
    knows each field given, so that an older kernel accepts it."""
    attr = _RulesetAttr(handled_access_fs=handled, handled_access_net=net, scoped=scoped)
    size = 24 if scoped else 16 if net else 8
    calls = libc()
    made = check(calls.syscall(ctypes.c_long(SYS_CREATE_RULESET), ctypes.byref(attr), ctypes.c_size_t(size),
                               ctypes.c_uint32(0)), "landlock_create_ruleset")
    try:
        for path, rights in grants:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                allowed = rights & handled & (~0 if os.path.isdir(path) else FILE_RIGHTS)
                rule = _PathBeneathAttr(allowed_access=allowed, parent_fd=fd)
                check(calls.syscall(ctypes.c_long(SYS_ADD_RULE), ctypes.c_int(made), ctypes.c_int(RULE_PATH_BENEATH),
                                    ctypes.byref(rule), ctypes.c_uint32(0)), f"landlock_add_rule {path}")
            finally:
                os.close(fd)
    except BaseException:
        os.close(made)
        raise
    return made


def add_layer(handled: int, grants: Sequence[tuple[str, int]], *, net: int = 0, scoped: int = 0) -> None:
    """One more Landlock layer on this process (layers stack, each only taking rights away)."""
    made = ruleset(handled, grants, net=net, scoped=scoped)
    try:
        restrict_self(made)
    finally:
        os.close(made)
