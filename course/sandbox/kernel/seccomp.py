"""seccomp: the doors Landlock leaves open. One program builder, one installer; the command's program and
the grader's child's program differ only in which tables they refuse."""

from __future__ import annotations

import ctypes
import errno
import os
from collections.abc import Sequence

from course.sandbox.kernel.calls import check, libc

# Landlock (up to ABI 7) does not check connect() on a named unix socket, and the socket's path may be
# anywhere (/var/run/docker.sock, root's). A seccomp filter cannot read the address connect() is given
# (a pointer), but it can read socket()'s first argument, the family: only AF_INET and AF_INET6 are
# made (in the command's own network namespace their only interface is a loopback that is down, and
# a program that finds the network down says so more clearly than one refused a socket); every other
# family is refused: AF_UNIX (no unix socket, so none can be connected), AF_VSOCK (it reaches the host
# whatever the network namespace), AF_NETLINK, AF_PACKET, AF_ALG (the kernel's crypto API) and the
# rest, which no command of the safe list and no approved build needs. socketpair() stays allowed
# (an unnamed pair reaches nothing). io_uring's socket operation (IORING_OP_SOCKET, Linux 5.19) makes
# a socket with no socket() call, so io_uring_setup, io_uring_enter and io_uring_register are refused:
# no ring, no way round (Docker's default profile refuses them too). The kernel's key store is not
# namespaced: add_key, request_key and keyctl are refused, as Docker's default profile does
# (https://docs.docker.com/engine/security/seccomp/), after the command has joined a fresh session
# keyring, so that it holds none of the harness's keys. inotify watches any folder the command may look
# up, not only those it may read: Landlock governs opening a file, not the name of one made in /tmp or in
# the harness's runs/ folder while the command waits, which inotify_add_watch reports (man 7 inotify). A
# command has no need to wait on the files of others, so inotify's calls are refused. Sources: the kernel's seccomp_filter
# documentation (https://docs.kernel.org/userspace-api/seccomp_filter.html), man seccomp(2); struct
# seccomp_data is nr (offset 0), arch (4), instruction_pointer (8), args[6] (16).
# Landlock has no right for a file's metadata: a command that runs as root could make any file of the
# machine set-user-id, hand it to another owner, or give it capabilities (security.capability), which a
# later process then runs with. So the calls that change an owner or an extended attribute are refused,
# and a change of mode that sets the set-user-id or set-group-id bit (a plain chmod +x still works);
# a mode without those bits, and a file's times, cannot be changed outside the workspace either: every
# mount there is read-only (read_only_but). Numbers: the kernel's
# syscall_64.tbl and the generic table (include/uapi/asm-generic/unistd.h), fchmodat2 452,
# setxattrat 463, removexattrat 466 shared by both.
# A mode is given when a file is made too, and the kernel keeps its set-id bits: one approved
# `os.open("tool", O_CREAT | O_WRONLY, 0o4755)` made a set-user-id file, which the harness (root, with
# CAP_FSETID, which keeps the bits on a write) then filled with what the model wrote. So the calls that
# make a file are read as chmod is: open and openat when their flags ask for a new file (O_CREAT or
# O_TMPFILE's __O_TMPFILE bit, 0o100 and 0o20000000 on both architectures: without them the kernel
# ignores the mode, and a program may leave anything there), creat, mknod and mknodat always. openat2
# passes its mode in a struct, which a seccomp filter cannot read: it fails as not implemented (ENOSYS),
# the answer of a kernel before 5.6, so that a program that tries it first falls back to openat, which
# is read (glibc's open() calls openat, never openat2); systemd's RestrictSUIDSGID= does the same
# (https://github.com/systemd/systemd/pull/18342, src/shared/seccomp-util.c).
# AUDIT_ARCH_*, __NR_socket, then the refused calls: io_uring_setup, _enter, _register (425-427 in the
# table both architectures share for new calls), inotify's (x86_64 inotify_init 253, inotify_add_watch 254,
# inotify_init1 294; aarch64 inotify_init1 26, inotify_add_watch 27), the owner and extended-attribute calls, add_key,
# request_key, keyctl (last: _join_fresh_session_keyring reads it there); then the calls that set a mode,
# each as (number, index of its mode argument), (number, index of its mode, index of the flags that say
# whether a file is made), or (number, None) for a mode the filter cannot read. x86_64: chmod 90, fchmod
# 91, fchmodat 268, fchmodat2 452, open 2, creat 85, openat 257, mknod 133, mknodat 259, openat2 437
# (https://github.com/torvalds/linux/blob/master/arch/x86/entry/syscalls/syscall_64.tbl); aarch64: fchmod
# 52, fchmodat 53, fchmodat2 452, openat 56, mknodat 33, openat2 437
# (https://github.com/torvalds/linux/blob/master/include/uapi/asm-generic/unistd.h), with their arguments
# as man 2 open, man 2 mknod and man 2 chmod give them.
SECCOMP_ARCHES = {"x86_64": (0xC000003E, 41, (425, 426, 427, 253, 254, 294, 92, 93, 94, 260, 188, 189, 190, 197, 198, 199, 463, 466,
                                              248, 249, 250),
                             ((90, 1), (91, 1), (268, 2), (452, 2),
                              (2, 2, 1), (85, 1), (257, 3, 2), (133, 1), (259, 2), (437, None))),
                  "aarch64": (0xC00000B7, 198, (425, 426, 427, 26, 27, 54, 55, 5, 6, 7, 14, 15, 16, 463, 466, 217, 218, 219),
                              ((52, 1), (53, 2), (452, 2), (56, 3, 2), (33, 2), (437, None)))}
# The calls that change a file's mode or times, refused outright where no mount namespace can make the
# files outside read-only (the grading child without namespaces): x86_64's chmod, fchmod, fchmodat, utime,
# utimes, futimesat, utimensat, fchmodat2; aarch64 has only fchmod, fchmodat, utimensat and fchmodat2.
METADATA_CALLS = {"x86_64": (90, 91, 268, 132, 235, 261, 280, 452), "aarch64": (52, 53, 88, 452)}
SET_ID_BITS = 0o6000  # S_ISUID | S_ISGID: a mode call that sets either is refused
MAKES_A_FILE = 0o100 | 0o20000000  # O_CREAT | __O_TMPFILE (include/uapi/asm-generic/fcntl.h; x86_64 and arm64 keep both)
PR_SET_SECCOMP, SECCOMP_MODE_FILTER, X32_SYSCALL_BIT = 22, 2, 0x40000000
AF_INET, AF_UNIX, AF_INET6, AF_VSOCK = 2, 1, 10, 40
SOCKET_FAMILIES = (AF_INET, AF_INET6)  # the only families socket() may make
RET_ALLOW, RET_EACCES = 0x7FFF0000, 0x00050000 | 13  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EACCES
RET_EOPNOTSUPP, RET_ENOSYS = 0x00050000 | errno.EOPNOTSUPP, 0x00050000 | errno.ENOSYS
# fallocate(2) reserves blocks in one call without writing them, and with FALLOC_FL_KEEP_SIZE without
# growing the file, so neither RLIMIT_FSIZE nor a watch of the disk a few times a second bounds it. It
# fails as unsupported, the answer of a file system without it: glibc's posix_fallocate then writes the
# blocks itself (https://man7.org/linux/man-pages/man3/posix_fallocate.3.html), which the bounds see.
PREALLOCATE_CALLS = {"x86_64": (285,), "aarch64": (47,)}
# prlimit64 sets the limits of any process of the same user: run as root, a command could give the harness,
# its own supervisor (which then cannot end what the command left) or any root process of the machine a
# file-size or open-files limit of 0. Only its own limits may change (pid 0: what setrlimit and getrlimit
# call, https://man7.org/linux/man-pages/man2/getrlimit.2.html). x86_64 302, aarch64 261 (the kernel's tables:
# arch/x86/entry/syscalls/syscall_64.tbl, include/uapi/asm-generic/unistd.h).
OWN_PROCESS_ONLY = {"x86_64": (302,), "aarch64": (261,)}
LOAD_WORD, JUMP_EQUAL, JUMP_AT_LEAST, RETURN = 0x20, 0x15, 0x35, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, |JGE|K, BPF_RET|K
AND = 0x54  # BPF_ALU|BPF_AND|BPF_K
KEYCTL_JOIN_SESSION_KEYRING = 1


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter))]


def seccomp_program(arch: int, socket_number: int, refused: Sequence[int],
                    mode_calls: Sequence[tuple] = (),
                    unsupported: Sequence[int] = (),
                    own_process_only: Sequence[int] = ()) -> list[tuple[int, int, int, int]]:
    """The filter, as (code, jump if true, jump if false, value): a system call of another
    architecture (or x32) is refused; each call in ``refused`` is refused; each call of ``unsupported``
    fails as one the file system does not support (EOPNOTSUPP); each call of ``mode_calls`` (number,
    index of its mode argument[, index of its flags]) is refused when the mode sets a bit of SET_ID_BITS
    (with flags: only when they make a file, MAKES_A_FILE), and one given as (number, None) fails as not
    implemented (ENOSYS); each call of ``own_process_only`` is allowed only on the caller itself (its first
    argument, a process id, 0); socket() is allowed for the families of SOCKET_FAMILIES only. Everything else
    is allowed. A jump counts the instructions it skips, so jumps name their targets and the offsets are
    worked out at the end."""
    ALLOW, REFUSE, UNSUPPORTED, NOT_IMPLEMENTED = "allow", "refuse", "unsupported", "not implemented"
    program = [(LOAD_WORD, 0, 0, 4),                     # the architecture
               (JUMP_EQUAL, 1, 0, arch),                 # ours: skip the next
               (RETURN, 0, 0, RET_EACCES),               # another one (a 32-bit program): refused
               (LOAD_WORD, 0, 0, 0),                     # the system call's number
               (JUMP_AT_LEAST, REFUSE, 0, X32_SYSCALL_BIT),  # an x32 call
               *((JUMP_EQUAL, REFUSE, 0, number) for number in refused),
               *((JUMP_EQUAL, UNSUPPORTED, 0, number) for number in unsupported),
               *((JUMP_EQUAL, NOT_IMPLEMENTED if call[1] is None else ("mode", index), 0, call[0])
                 for index, call in enumerate(mode_calls)),
               *((JUMP_EQUAL, "own process", 0, number) for number in own_process_only),
               (JUMP_EQUAL, 0, ALLOW, socket_number),    # not socket(): allowed
               (LOAD_WORD, 0, 0, 16),                    # socket()'s first argument, the family
               *((JUMP_EQUAL, ALLOW, 0, family) for family in SOCKET_FAMILIES),
               (RETURN, 0, 0, RET_EACCES)]               # any other family
    target = {}
    for index, (_, argument, *flags) in enumerate(mode_calls):  # each argument's low word: args[i] at 16 + 8 i
        if argument is None:
            continue
        target["mode", index] = len(program)
        if flags:  # no new file asked for: the kernel ignores the mode
            program += [(LOAD_WORD, 0, 0, 16 + 8 * flags[0]), (AND, 0, 0, MAKES_A_FILE), (JUMP_EQUAL, ALLOW, 0, 0)]
        program += [(LOAD_WORD, 0, 0, 16 + 8 * argument), (AND, 0, 0, SET_ID_BITS), (JUMP_EQUAL, ALLOW, REFUSE, 0)]
    target["own process"] = len(program)  # the process id's two words (args[0] at 16 and 20) both 0
    program += [(LOAD_WORD, 0, 0, 16), (JUMP_EQUAL, 0, REFUSE, 0), (LOAD_WORD, 0, 0, 20), (JUMP_EQUAL, ALLOW, REFUSE, 0)]
    ends = {ALLOW: RET_ALLOW, REFUSE: RET_EACCES, UNSUPPORTED: RET_EOPNOTSUPP, NOT_IMPLEMENTED: RET_ENOSYS}
    for name, value in ends.items():
        target[name] = len(program)
        program.append((RETURN, 0, 0, value))
    return [(code, *(target[jump] - index - 1 if isinstance(jump, (str, tuple)) else jump for jump in (true, false)), value)
            for index, (code, true, false, value) in enumerate(program)]


def join_fresh_session_keyring() -> None:
    """A new, empty session keyring for this process (man keyctl(2), KEYCTL_JOIN_SESSION_KEYRING with no
    name): the harness's keys are not in it. Where keyctl is refused already (a container), nothing is held."""
    machine = os.uname().machine
    if machine not in SECCOMP_ARCHES:
        return
    keyctl = SECCOMP_ARCHES[machine][2][-1]
    if libc().syscall(ctypes.c_long(keyctl), ctypes.c_long(KEYCTL_JOIN_SESSION_KEYRING), None) < 0:
        number = ctypes.get_errno()
        if number not in (errno.ENOSYS, errno.EPERM, errno.EACCES):
            raise OSError(number, f"keyctl join session keyring: {os.strerror(number)}")


# System V IPC and POSIX message queues are not files: Landlock does not see them, and without an IPC
# namespace of its own (man ipc_namespaces(7)) a child shares every queue, segment and semaphore set
# of the machine (root's 0600 ones too, the child running as root) and of the children beside it. Where
# no namespace can be made, the grader's child's filter refuses them: msgget, msgsnd, msgrcv, msgctl, shmget,
# shmat, shmdt, shmctl, semget, semop, semtimedop, semctl, then mq_open, mq_unlink, mq_timedsend,
# mq_timedreceive, mq_notify, mq_getsetattr (the same two tables as above). Nothing the grading does
# needs them (multiprocessing's locks are POSIX semaphores, files in /dev/shm).
IPC_CALLS = {"x86_64": (68, 69, 70, 71, 29, 30, 67, 31, 64, 65, 220, 66, 240, 241, 242, 243, 244, 245),
             "aarch64": (186, 189, 188, 187, 194, 196, 197, 195, 190, 193, 192, 191, 180, 181, 182, 183, 184, 185)}
# ptrace, process_vm_readv and process_vm_writev read or change another process of the child's own: a case
# could attach to the worker that drives every case and forge what it reports. Nothing graded needs them.
WATCHING_CALLS = {"x86_64": (101, 310, 311), "aarch64": (117, 270, 271)}


def command_program(machine: str) -> list[tuple[int, int, int, int]]:
    """The filter of s06's command."""
    return seccomp_program(*SECCOMP_ARCHES[machine], unsupported=PREALLOCATE_CALLS[machine],
                           own_process_only=OWN_PROCESS_ONLY[machine])


def filter_program(machine: str, namespaces: bool) -> list[tuple[int, int, int, int]]:
    """The grader's child's filter: the command's, and no watching another process (WATCHING_CALLS);
    without namespaces (so no read-only mounts and no IPC namespace), every call that changes a file's mode
    or times as well (nothing the grading does needs one: the drivers write their files, never copy them
    with their metadata), and every System V IPC and POSIX message queue call (IPC_CALLS)."""
    arch, socket_number, refused, mode_calls = SECCOMP_ARCHES[machine]
    refused = (*refused, *WATCHING_CALLS[machine])
    if not namespaces:
        refused = (*refused, *METADATA_CALLS[machine], *IPC_CALLS[machine])
    return seccomp_program(arch, socket_number, refused, mode_calls, PREALLOCATE_CALLS[machine],
                           OWN_PROCESS_ONLY[machine])


def install(program: list[tuple[int, int, int, int]]) -> None:
    """The filter on this process, inherited by everything it starts (no_new_privs must be set)."""
    instructions = (_SockFilter * len(program))(*(_SockFilter(*instruction) for instruction in program))
    fprog = _SockFprog(len(program), instructions)
    check(libc().prctl(ctypes.c_int(PR_SET_SECCOMP), ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.byref(fprog),
                       ctypes.c_ulong(0), ctypes.c_ulong(0)), "seccomp")
