"""What a confined process is, whatever it runs: its limits, its capabilities, its namespaces, and the end
of what it leaves behind. s06's command (course.sandbox.confinement) and the grader's child
(course.grading.jail) each call these with their own bounds."""

from __future__ import annotations

import ctypes
import os
import resource
import signal

from course.sandbox.kernel.calls import check, libc, prctl

PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 24, 36, 38
CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWNET = 0x00020000, 0x08000000, 0x10000000, 0x40000000
CLONE_NEWPID = 0x20000000

NAMESPACES = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC
MS_REC, MS_PRIVATE = 16384, 1 << 18


def set_limits(limits, strict: bool = True) -> None:
    """Lower each (resource, value) of this process (and so of what it starts) to at most its hard limit.
    Not strict: skip a limit this OS refuses."""
    for which, value in limits:
        hard = resource.getrlimit(which)[1]
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        try:
            resource.setrlimit(which, (value, value))
        except (OSError, ValueError):
            if strict:
                raise


def enter_namespaces(flags: int = NAMESPACES) -> None:
    """This process into new namespaces (a user namespace first among them), our own uid and gid mapped to
    themselves, so that files keep their owner; its mounts made private, so that none propagates back to
    the machine's namespace. A network namespace of its own holds only a loopback, down, so UDP to
    127.0.0.1 fails like TCP (man network_namespaces(7)); an IPC namespace of its own shares no System V
    segment, semaphore or queue and no POSIX message queue of the machine's (man ipc_namespaces(7));
    with CLONE_NEWPID, the next child forked is PID 1 of a namespace whose processes all end with it."""
    uid, gid = os.getuid(), os.getgid()
    check(libc().unshare(flags), "unshare")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as mapping:
            mapping.write(text)
    check(libc().mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate /")


def drop_bounding_set() -> None:
    """Empty the bounding set, so that a program started by exec gets no capability even as uid 0."""
    with open("/proc/sys/kernel/cap_last_cap") as last:
        for capability in range(int(last.read()) + 1):
            prctl(PR_CAPBSET_DROP, capability)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_capabilities() -> None:
    """No capability left in this process itself. An empty bounding set binds what a program started by
    exec gets, not a process that runs Python code without exec: made in its own user namespace, it held
    every capability there (CAP_SYS_ADMIN over its mounts, CAP_FOWNER and CAP_DAC_OVERRIDE over root's
    files), and without one, as the real root, every capability of the machine. capset(2) with
    _LINUX_CAPABILITY_VERSION_3 (two words per set): https://man7.org/linux/man-pages/man2/capset.2.html."""
    header, data = _CapHeader(0x20080522, 0), (_CapData * 2)()
    check(libc().capset(ctypes.byref(header), data), "capset")


def end_descendants(spare_from_count=()) -> int:
    """SIGKILL every descendant until none is left; return how many were alive, not counting
    ``spare_from_count`` (a pid, or the pids of the shell and of our own processes around it).

    A subreaper only learns of its descendants through /proc: this kernel has no
    /proc/PID/task/TID/children, so we read every process's parent from /proc/PID/stat. A process
    that forks while we kill is found on the next round; the loop ends when we have no child at all.
    """
    ended: set[int] = set()
    me = os.getpid()
    spared = {spare_from_count} if isinstance(spare_from_count, int) else set(spare_from_count)
    while True:
        found = _descendants(me)
        family = set(found) | {me}
        for pid, state in found.items():
            if state != "Z" and pid not in spared:
                ended.add(pid)
            _kill(pid, family)
        try:
            if found:
                os.waitpid(-1, 0)  # one of them is dying: wait for it,
            while os.waitpid(-1, os.WNOHANG)[0]:  # then reap every other that already died
                pass
        except ChildProcessError:  # no child left at all
            return len(ended)


def _descendants(root: int) -> dict[int, str]:
    """pid -> state letter of every process below root."""
    children: dict[int, list[tuple[int, str]]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            parent, state = _parent_and_state(int(name))
            if parent:
                children.setdefault(parent, []).append((int(name), state))
    found, frontier = {}, [root]
    while frontier:
        for pid, state in children.get(frontier.pop(), ()):
            found[pid] = state
            frontier.append(pid)
    return found


def _parent_and_state(pid: int) -> tuple[int, str]:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()  # the name, in parentheses, may hold spaces
    except OSError:
        return 0, ""
    return int(fields[1]), fields[0].decode()


def _kill(pid: int, family: set[int]) -> None:
    """SIGKILL pid through a pidfd, after checking it is still in the family: a pid that died and was
    reused by an unrelated process between our reading of /proc and now is left alone."""
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    except (AttributeError, OSError):
        handle = None
    try:
        if _parent_and_state(pid)[0] in family:
            if handle is None:
                os.kill(pid, signal.SIGKILL)
            else:
                signal.pidfd_send_signal(handle, signal.SIGKILL)
    except ProcessLookupError:
        pass
    finally:
        if handle is not None:
            os.close(handle)
