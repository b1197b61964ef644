"""The kernel's confinement of a Python process, in primitives: a Landlock layer, a seccomp filter,
capabilities dropped, rlimits. The grader's jail (course.grading.jail) applies them to the child that runs a
student's copy, and the copy's probes (course.grading.probes) add a layer of their own; s06's confinement
of a shell command (course.sandbox.confinement) holds the access rights and the filter program both build on.
It imports only course.sandbox.confinement's constants and programs, never a module that grades.
"""

from __future__ import annotations

import ctypes
import os
import resource
import sys
from pathlib import Path

import course

from course.sandbox import confinement

SUPPORT_PACKAGE = Path(course.__file__).resolve().parent  # the course's package, whichever folder holds this module
PR_SET_SECCOMP = 22

# System V IPC and POSIX message queues are not files: Landlock does not see them, and without an IPC
# namespace of its own (man ipc_namespaces(7)) a child shares every queue, segment and semaphore set
# of the machine (root's 0600 ones too, the child running as root) and of the children beside it. Where
# no namespace can be made, the filter refuses them: msgget, msgsnd, msgrcv, msgctl, shmget, shmat,
# shmdt, shmctl, semget, semop, semtimedop, semctl, then mq_open, mq_unlink, mq_timedsend,
# mq_timedreceive, mq_notify, mq_getsetattr. Numbers: x86_64's table
# (https://github.com/torvalds/linux/blob/master/arch/x86/entry/syscalls/syscall_64.tbl) and the generic
# one aarch64 uses (https://github.com/torvalds/linux/blob/master/include/uapi/asm-generic/unistd.h).
# Nothing the grading does needs them (multiprocessing's locks are POSIX semaphores, files in /dev/shm).
IPC_CALLS = {"x86_64": (68, 69, 70, 71, 29, 30, 67, 31, 64, 65, 220, 66, 240, 241, 242, 243, 244, 245),
             "aarch64": (186, 189, 188, 187, 194, 196, 197, 195, 190, 193, 192, 191, 180, 181, 182, 183, 184, 185)}

def _python_prefixes() -> list[str]:
    return sorted({str(Path(p).resolve()) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)
                   if p and p != "/"})


def _set_limits(seconds: float, memory_mb: int, namespaces: bool) -> None:
    limits = [(resource.RLIMIT_CPU, int(seconds) + 2), (resource.RLIMIT_FSIZE, 32 << 20), (resource.RLIMIT_CORE, 0),
              (resource.RLIMIT_NOFILE, 256), (resource.RLIMIT_AS, memory_mb << 20)]
    if namespaces:  # counted in our own user namespace only; the kernel exempts a real root
        limits.append((resource.RLIMIT_NPROC, 64))
    for which, value in limits:
        hard = resource.getrlimit(which)[1]
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        try:
            resource.setrlimit(which, (value, value))
        except (OSError, ValueError):
            pass


def add_landlock_layer(handled: int, grants, *, net: int = 0, scoped: int = 0) -> None:
    """One more Landlock layer on this process (layers stack, each only taking rights away:
    https://docs.kernel.org/userspace-api/landlock.html): the file rights in ``handled`` are refused beneath
    every path but those ``grants`` names, each (path, rights), a file with only the rights a file rule may
    hold; a path that cannot be opened is granted nothing. ``net``: the network rights handled (none
    granted); ``scoped``: the scopes (ABI 6). The struct is passed at the size of the oldest ABI that
    knows each field given, so that an older kernel accepts it."""
    class Ruleset(ctypes.Structure):
        _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                    ("scoped", ctypes.c_uint64)]

    class PathBeneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

    attr = Ruleset(handled, net, scoped)
    size = 24 if scoped else 16 if net else 8
    libc = _libc()
    ruleset = _check(libc.syscall(ctypes.c_long(444), ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)),
                     "landlock_create_ruleset")
    try:
        for path, rights in grants:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                rule = PathBeneath(rights & handled & (~0 if os.path.isdir(path) else _file_rights()), fd)
                _check(libc.syscall(ctypes.c_long(445), ctypes.c_int(ruleset), ctypes.c_int(1), ctypes.byref(rule),
                                    ctypes.c_uint32(0)), f"landlock_add_rule {path}")
            finally:
                os.close(fd)
        _check(libc.syscall(ctypes.c_long(446), ctypes.c_int(ruleset), ctypes.c_uint32(0)), "landlock_restrict_self")
    finally:
        os.close(ruleset)


def _handled_files(abi: int) -> int:
    """The file rights this ABI knows (landlock(7)): asking for a newer one makes the ruleset fail."""
    rights = (1 << 13) - 1
    rights |= confinement.REFER if abi >= 2 else 0
    rights |= confinement.TRUNCATE if abi >= 3 else 0
    rights |= confinement.IOCTL_DEV if abi >= 5 else 0
    return rights


def _file_rights() -> int:
    """The rights Landlock accepts on a file (not a folder) rule."""
    return confinement.EXECUTE | confinement.WRITE_FILE | confinement.READ_FILE | confinement.TRUNCATE | confinement.IOCTL_DEV


def filter_program(machine: str, namespaces: bool) -> list[tuple[int, int, int, int]]:
    """course.sandbox.confinement's filter; without namespaces (so no read-only mounts and no IPC namespace),
    every call that changes a file's mode or times is refused as well (nothing the grading does needs
    one: the drivers write their files, never copy them with their metadata), and every System V IPC
    and POSIX message queue call (IPC_CALLS)."""
    arch, socket_number, refused, mode_calls = confinement.SECCOMP_ARCHES[machine]
    refused = (*refused, *WATCHING_CALLS[machine])
    if not namespaces:
        refused = (*refused, *confinement.METADATA_CALLS[machine], *IPC_CALLS[machine])
    return confinement.seccomp_program(arch, socket_number, refused, mode_calls, confinement.PREALLOCATE_CALLS[machine],
                                       confinement.OWN_PROCESS_ONLY[machine])


# ptrace, process_vm_readv and process_vm_writev read or change another process of the child's own: a case
# could attach to the worker that drives every case and forge what it reports. Nothing graded needs them
# (x86_64: https://github.com/torvalds/linux/blob/master/arch/x86/entry/syscalls/syscall_64.tbl; aarch64:
# https://github.com/torvalds/linux/blob/master/include/uapi/asm-generic/unistd.h).
WATCHING_CALLS = {"x86_64": (101, 310, 311), "aarch64": (117, 270, 271)}


def _seccomp(refuse_metadata: bool = False) -> None:
    """The filter on this process; ``refuse_metadata``: no namespaces could be made (filter_program)."""
    machine = os.uname().machine
    if machine not in confinement.SECCOMP_ARCHES:
        return
    program = filter_program(machine, namespaces=not refuse_metadata)

    class Filter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(Filter))]

    instructions = (Filter * len(program))(*(Filter(*instruction) for instruction in program))
    _check(_libc().prctl(ctypes.c_int(PR_SET_SECCOMP), ctypes.c_ulong(2), ctypes.byref(Program(len(program), instructions)),
                         ctypes.c_ulong(0), ctypes.c_ulong(0)), "seccomp")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _drop_capabilities() -> None:
    """No capability left in this process. An empty bounding set binds what a program started by exec
    gets, not the worker itself, which runs the copy without exec: made in its own user namespace, it
    held every capability there (CAP_SYS_ADMIN over its mounts, CAP_FOWNER and CAP_DAC_OVERRIDE over
    root's files), and without one, as the real root, every capability of the machine. capset(2) with
    _LINUX_CAPABILITY_VERSION_3 (two words per set): https://man7.org/linux/man-pages/man2/capset.2.html."""
    header, data = _CapHeader(0x20080522, 0), (_CapData * 2)()
    _check(_libc().capset(ctypes.byref(header), data), "capset")


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> int:
    if result < 0:
        number = ctypes.get_errno()
        raise OSError(number, f"{what}: {os.strerror(number)}")
    return result
