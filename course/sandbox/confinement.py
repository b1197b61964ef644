"""Kernel confinement for s06's command tool: a mistake of the gate is not a breach.

What a stage uses, not what it builds: ``run_confined()`` runs one command, ``probe()`` says whether
this machine can confine it, and ``command_environment()`` is the environment a command gets.

The gate decides whether a command may run. This module decides what a command that runs can
reach, and the Linux kernel enforces it, whatever the command turns out to do:

- Files (Landlock): the system folders (/usr, /bin, /sbin, /lib*, /etc) and the Python that runs
  the course can be read and executed, but not what the system keeps from other users (an entry of
  /etc that others may not read: /etc/shadow, /etc/ssl/private; system_grants), /dev/null, /dev/zero
  and /dev/urandom used; the workspace can be read and written; nothing else can be touched: not
  /tmp, not $HOME, /root or /home, not /sys, not /proc (where the harness's environment, API key
  included, can be read).
- Everything outside the workspace read-only (the mount namespace): every mount but the workspace is
  read-only there, so not even the changes Landlock does not govern (a file's mode, its times),
  which a command that runs as root may make to any file it owns, reach a file outside.
- Hidden files (a private mount namespace): each `hidden` path in the workspace, such as `.env`,
  is covered by an empty, read-only, mode-000 stand-in that only the command sees, at every path
  it is reachable by (a second mount of the same file system, such as a bind mount of a folder
  above the workspace, reaches the same file, and Landlock follows the file, not the path).
  Reading it and writing it both fail; the rest of the workspace, new files included, stays writable.
- Paths other programs run (course.sandbox.paths.RUN_LATER: .git, editor and shell startup files, Python's
  startup files; and, whatever their names, a folder git takes for a repository and a module that
  shadows Python's own: course.sandbox.paths.protected_entries) and the harness's own Python, where they lie
  inside the workspace, are bound read-only onto themselves in that namespace; one the command
  creates (a read-only mount needs an entry to cover) is removed when the command has ended, with
  every process of it; removed without recursion and without following a link, then looked for
  again: what is still there is said in one line (LeftBehind, an error the model reads) and no
  later command runs in that workspace until a person has removed it.
- Network (a network namespace, Landlock and seccomp): the command gets a network of its own with
  only a loopback that is down, so no TCP, UDP or other IP packet leaves it, not even to 127.0.0.1;
  Landlock (ABI 4 and later) refuses TCP connect and bind besides. A seccomp filter lets socket()
  make AF_INET and AF_INET6 sockets only: no unix socket, so no named one (/tmp/x.sock,
  /var/run/docker.sock) can be reached (Landlock does not check connect on a socket's path), no
  AF_VSOCK (it reaches the host whatever the network namespace), no netlink, packet or crypto
  socket; it refuses io_uring's three calls, whose ring can make a socket without the socket() call
  the filter reads. From ABI 6, the command can neither signal a process outside its sandbox (the
  harness, for one) nor reach an abstract unix socket made outside it.
- IPC and keys: an IPC namespace of its own (no System V shared memory, semaphore or queue of the
  machine's), a fresh session keyring, and keyctl, add_key and request_key refused; inotify refused
  too (a watch on /tmp or the harness's runs/ names every file made there while the command runs).
- Processes (a PID namespace of its own): the command's processes see each other only (the shell is
  pid 2), so no pid of the machine's, the harness's included, can be named: pidfd_open, kill(pid, 0),
  getpriority and sched_getaffinity of one answer "no such process". Its pid 1 is a holder (sh
  reading a pipe of the supervisor's, in a Landlock domain of its own) that outlives the shell so that
  what the shell left is still counted and ended; a proc of the namespace's own is mounted, read-only,
  over /proc (which Landlock denies anyway), where the kernel allows it (not under a container's
  partly covered /proc).
- Metadata: Landlock has no right for a file's owner, mode or attributes, so seccomp refuses the
  chown and extended-attribute calls (no file gains an owner or capabilities) and a chmod, or a call
  that makes a file (open, openat, creat, mknod), whose mode sets the set-user-id or set-group-id bit,
  in the workspace too; openat2 fails as not implemented; chmod +x in the workspace still works.
- Modes left behind: the command runs with umask 022 added to the user's; after it, one walk of the
  workspace takes the set-id bits off every file whose names all lie in it, puts the workspace
  folder's mode back and takes others' write bit off what gained it (said in the result).
- Resources (setrlimit): file size, address space, CPU seconds, open files, processes, no core;
  processes also in a pids cgroup of the command's own where one can be made (pids.max 64, which
  binds root too), and the memory of all its processes together in a memory cgroup of its own
  (COMMAND_MEMORY_LIMIT, swap included) where one can be made; all files together: the supervisor stops the command once the workspace's file
  system has filled by more than 256 MB or 50,000 entries since it started (statvfs, 20 times a
  second, so a fast writer may pass it by what it writes in 50 ms; what was written stays), and
  the commands of one harness process together by more than 1 GiB or 100,000 entries of the
  workspace, counted there, hard links included (RUN_DISK_GROWTH_LIMIT, RUN_ENTRY_GROWTH_LIMIT; what a
  command deletes is given back); and a command does not start where more than 2,000 files would need a
  mask of their own (MOST_HIDDEN: hidden files, hard links).
- Leftovers (a subreaper): when the shell ends, or at the timeout, every process it started is
  ended, `setsid` and double forks included, and counted in `stragglers`.

What it does not cover: a unix socket handed down already open (none is: every inherited file is
closed), 32-bit programs (the seccomp filter refuses their system calls, so they do not run), the
seccomp filter on a machine that is neither x86_64 nor aarch64 (there, named unix sockets stay
reachable), the metadata of a path outside that the command names (stat() says whether it exists, its
size, owner and times: Landlock governs opening and changing a file, not looking it up), reading the system folders (/etc/passwd, and the names in a folder whose files are kept
from others, such as those of /etc/ssl/private), an entry kept from others that /etc gained after
the harness's first command (it stays readable until the harness starts again) and such an entry
under /usr or /lib (not looked for: what packages install there is shared by every user), a
folder's set-group-id bit (it gives new files the folder's group and runs nothing: left as it is; no
command can chmod it on), others' write bit on an entry that someone else opened to others between
two commands and the command then changed (taken off: the sweep cannot tell it from the command's
own doing, so it errs towards closing), CPU
shared with the rest of the machine, memory where no memory cgroup can be made (each process is
bounded, not the command), and kernel bugs.
The process limit is not enforced for root where no pids cgroup can be made (cgroup v1's pids
hierarchy not mounted or not writable, and a cgroup v2 one whose pids controller is not delegated
to the harness's cgroup): the kernel exempts the real root user from RLIMIT_NPROC, and mapping root
to another uid inside the user namespace does not change the real user it counts against (dropping
to an unprivileged real uid would lose write access to a workspace that root owns). The sweep's
record of what it could not remove lives as long as the harness's process: a new process sees an
ordinary entry there (and says nothing). A walk of the workspace (protected paths, hidden files)
sees entries whose path is shorter than PATH_MAX (4,096 bytes) only: a chain made deeper is not
looked into, and no program reaches what is beneath it by its path. The command runs with no capabilities and
`no_new_privs`, so setuid programs such as sudo gain nothing. What it costs: a program that writes
to /tmp fails (point TMPDIR into the workspace), and one that reserves more than 1 GiB of address
space at start (java, with its default heap) does not start.

How others do it. Claude Code's sandbox runs each command under bubblewrap on Linux (mount and
network namespaces; denied files covered by bind mounts, as here) and Seatbelt on macOS, and sends
network traffic through a proxy that allows listed domains. Codex CLI used Landlock plus a seccomp
filter that blocks network sockets on Linux, and Seatbelt on macOS; its current releases use
bubblewrap for the files and keep seccomp. This module is smaller than either: no proxy, one seccomp rule,
standard library only, so that a learner can read all of it. Where the machine cannot confine
(macOS, Windows, a kernel before 6.7, no user namespaces), `probe()` says why and the gate asks a
person before every command: fail closed.

Sources: the kernel's Landlock documentation (https://docs.kernel.org/userspace-api/landlock.html,
man landlock(7)); Claude Code's sandboxing page (https://code.claude.com/docs/en/sandboxing) and
its sandbox-runtime (github.com/anthropic-experimental/sandbox-runtime); Codex's
codex-rs/linux-sandbox/README.md (github.com/openai/codex).
"""

from __future__ import annotations

import atexit
import ctypes
import dataclasses
import errno
import functools
import math
import os
import re
import resource
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from course.sandbox import paths

LINUX = sys.platform.startswith("linux")
GRACE_S = 5  # the harness waits this much longer than the timeout before it gives up on the supervisor
MEMORY_LIMIT = 1 << 30  # address space: /bin/sh, grep and python3 start well under it (checked in the tests)
OPEN_FILES_LIMIT = 512
PROCESS_LIMIT = 64  # counted inside the command's own user namespace: the learner's other processes do not count
COMMAND_MEMORY_LIMIT = 1 << 30  # all the command's processes together, where a memory cgroup of its own can be made
DISK_GROWTH_LIMIT = 256 << 20  # what one command may add to the workspace's file system, all files together
# What all the commands of one harness process may add to one workspace's file system (a run is one process,
# from the command line): a model that writes 256 MB a command, command after command, fills the disk in a few
# dozen turns. What a command deletes is given back, so that a command that cleans up can always run.
RUN_DISK_GROWTH_LIMIT = 1 << 30
DISK_GROWTH_LEFT_AT_LEAST = 1 << 20  # a run past its bound still runs commands that write almost nothing (rm)
ENTRY_GROWTH_LIMIT = 50_000  # the files and folders one command may make
# And the files and folders they may make together: the gate walks the workspace before every call, about 50 µs
# an entry, so 180,000 empty files made over four commands had a read_file take 15 s and an `ls` 75 s.
RUN_ENTRY_GROWTH_LIMIT = 100_000
ENTRY_GROWTH_LEFT_AT_LEAST = 100
DISK_CHECK_S = 0.05  # how often the supervisor looks
# Each hidden file is masked by a mount of its own, about 0.7 ms each: a hard link costs no disk and no inode,
# so 10,000 links to one file made every later command take 8 s. A command is refused past this many.
MOST_HIDDEN = 2_000
OPT_OUT = "AGENT_COURSE_NO_CONFINEMENT"
NOT_CONFINED = "commands are not confined, so none runs without a person"

# Variables that make a shell (or every dynamically linked program) read and run a file or code the
# command did not name: sh reads $ENV, bash reads $BASH_ENV and imports BASH_FUNC_* functions, and
# SHELLOPTS=xtrace with PS4='$(...)' runs code; LD_PRELOAD and LD_AUDIT load a library into every program.
STARTUP_VARIABLES = {"ENV", "BASH_ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND"}
STARTUP_PREFIXES = ("BASH_FUNC_", "LD_")


@dataclass(frozen=True)
class Confinement:
    available: bool
    reason: str  # one line for the trace: what confines commands here, or why nothing does


@dataclass(frozen=True)
class Finished:
    exit_code: int | None  # None when the command was killed at the timeout; -N when signal N ended the shell
    output: str  # stdout+stderr, first `output_cap` bytes, decoded utf-8 with errors="replace"
    timed_out: bool
    stragglers: int  # processes the command left behind that were ended after it (at the timeout: all but the shell)
    removed: tuple = ()  # protected paths the command created, removed after it (see run_confined)


class CommandNotStarted(RuntimeError):
    """The command did not run: a step before it failed (a workspace that is gone, a confinement
    that could not be set up). The message is one line that names the step."""


class LeftBehind(RuntimeError):
    """A command made an entry where another program runs it later (a .git, .vscode/tasks.json, a
    sitecustomize.py) and the sweep after it could not remove it. The message is one line, for the
    model and the trace; until a person removes what it names, no command runs in that workspace."""


# What the sweep after a command could not remove, per workspace, as {path: (device, inode)}. Kept
# apart from protected_entries(), which would otherwise count it as there before the next command,
# for good. It lives as long as the harness's process (a new process sees an ordinary entry).
_left_behind: dict[str, dict[str, tuple[int, int]]] = {}
# What this process's commands have added to each workspace's file system, as measured around each command:
# (bytes, entries).
_disk_added: dict[str, tuple[int, int]] = {}


# ---------------------------------------------------------------- the environment a command gets

def command_environment(workspace: Path) -> dict:
    """PATH, LANG, LC_ALL and HOME, and nothing else: no API key, no token, no credentials. PATH keeps
    only absolute folders outside the workspace, so a program the model wrote cannot stand in for `ls`.
    HOME is a folder that does not exist (as for Debian's `nobody`): a home in the workspace would let
    the model write the startup files that programs read from it (~/.local/.../usercustomize.py runs
    in every Python program, a .pdbrc in pdb); PYTHONNOUSERSITE says the same to Python."""
    environment = {name: os.environ[name] for name in ("LANG", "LC_ALL") if name in os.environ}
    folders = [folder for folder in os.environ.get("PATH", os.defpath).split(os.pathsep)
               if os.path.isabs(folder) and not Path(folder).resolve().is_relative_to(Path(workspace).resolve())]
    environment["PATH"] = os.pathsep.join(folders)
    environment["HOME"] = "/nonexistent"
    environment["PYTHONNOUSERSITE"] = "1"
    return environment


# ---------------------------------------------------------------- what this machine can do

def probe() -> Confinement:
    """What confines commands here. The opt-out is read on every call; the machine is probed once."""
    if os.environ.get(OPT_OUT) == "1":
        return Confinement(False, f"{OPT_OUT}=1: {NOT_CONFINED}")
    return _probe_machine()


@functools.lru_cache(maxsize=None)
def _probe_machine() -> Confinement:
    if not LINUX:
        return Confinement(False, f"no Landlock on {sys.platform} (Linux only): {NOT_CONFINED}")
    abi = landlock_abi()
    if abi < 1:
        return Confinement(False, f"no Landlock (a kernel before 5.13, or not enabled at boot): {NOT_CONFINED}")
    if abi < 4:
        return Confinement(False, f"Landlock ABI {abi} cannot refuse TCP (ABI 4, Linux 6.7): {NOT_CONFINED}")
    failure = _self_test()
    if failure:
        return Confinement(False, f"{failure}: {NOT_CONFINED}")
    scoped = ", signals and abstract sockets scoped" if abi >= 6 else ""
    return Confinement(True, f"Landlock ABI {abi} (files, TCP{scoped}), a network, an IPC and a PID namespace, "
                             f"IP sockets only, no io_uring or key store, hidden files masked and protected "
                             f"paths read-only in a private mount namespace, rlimits, leftovers ended")


def _self_test() -> str:
    """Run one real confined command; return what did not hold, or "" when everything did."""
    with tempfile.TemporaryDirectory(prefix="confine-probe-") as folder:
        workspace = Path(folder, "workspace")
        workspace.mkdir()
        (workspace / ".env").write_text("probe-secret\n")
        Path(folder, "outside").write_text("probe-outside\n")
        try:
            finished = _run_supervised("cat .env ../outside; echo made > made; sleep 30 &", workspace,
                                       hidden=[workspace / ".env"], timeout_s=5, output_cap=4096,
                                       environment=_clean_environment(None, workspace), confine=True)
        except (CommandNotStarted, OSError) as error:
            return str(error)
        if "probe-secret" in finished.output:
            return "a hidden file stayed readable"
        if "probe-outside" in finished.output:
            return "a file outside the workspace stayed readable"
        if not (workspace / "made").exists():
            return "the workspace was not writable"
        if finished.stragglers != 1:
            return "a background process was not ended after the command"
    return ""


# ---------------------------------------------------------------- running a command

def run_confined(command: str, workspace: Path, *, hidden: Sequence[Path] = (), timeout_s: float = 5,
                 output_cap: int = 20_000, environment: Mapping[str, str] | None = None) -> Finished:
    """Run `/bin/sh -c command` in the workspace, confined when probe() says it can be.

    When it cannot, the command still runs (a person approved it), with the limits and the cleanup
    that do work here. `environment=None` means a minimal one: PATH, LANG, LC_ALL and HOME=workspace.
    A `hidden` path (absolute, or relative to the workspace) that does not exist has nothing to hide.
    Raises CommandNotStarted, with one line naming the step, when the command could not be started.
    """
    workspace = Path(workspace).resolve()
    if len(hidden) > MOST_HIDDEN:
        raise CommandNotStarted(f"the workspace holds {len(hidden):,} files the rules hide or that have a second name "
                                f"(hard links), more than the {MOST_HIDDEN:,} a command can be confined around (each "
                                "is masked on its own): ask the user to replace the hard links by copies")
    clean = _clean_environment(environment, workspace)
    protected = paths.protected_entries(workspace)  # .git and the rest: read-only while it runs
    before = _before_without_what_was_left(workspace, protected)
    # A folder bound read-only could not change: the sweep of modes does not go into it.
    unchanged = {path for path in protected if os.path.isdir(path) and not os.path.islink(path)} if probe().available else set()
    modes = _modes_before(workspace, unchanged)
    # The harness's own files are hidden whatever the caller hides: a transcript read is a history leaked.
    hidden = [*hidden, *paths.inside(workspace, paths.harness_files())]
    free_before = _space_and_entries(workspace, unchanged)
    if not LINUX:
        finished = _run_plain(command, workspace, timeout_s, output_cap, clean)
    else:
        finished = _run_supervised(command, workspace, hidden=hidden, timeout_s=timeout_s, output_cap=output_cap,
                                   environment=clean, confine=probe().available,
                                   read_only=paths.read_only_mounts(workspace, protected),
                                   disk_limit=disk_growth_left(workspace))
    free_after, added = _space_and_entries(workspace, unchanged), _disk_added.get(str(workspace), (0, 0))
    _disk_added[str(workspace)] = tuple(max(0, sum_ + before - after) for sum_, before, after
                                        in zip(added, free_before, free_after))
    # First, so that it is done even when what follows fails closed (LeftBehind).
    said = _sweep_modes(workspace, modes, unchanged)
    if said:
        finished = dataclasses.replace(finished, output=finished.output + "".join(f"\n[{line}]" for line in said))
    # A protected path that did not exist had no entry to mount over: one the command made is removed,
    # now that none of its processes is left to use it, before anything else can run what it holds.
    removed = paths.remove_new_protected(workspace, before)
    if removed:  # tried: walk again (nothing new, nothing to look for)
        _fail_if_left(workspace, before, "the command made")
    if removed:
        note = (f"\n[removed what the command made where other programs would run it later: {', '.join(removed)}; "
                "commands may not write .git or another folder git takes for a repository, editor or shell "
                "startup files, Python's startup files, or a module named like one Python imports]")
        finished = dataclasses.replace(finished, output=finished.output + note, removed=tuple(removed))
    return finished


# ---------------------------------------------------------------- modes: what the command opens to others

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


def _modes_before(workspace: Path, unchanged: set[str]) -> _Modes:
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
    for path, _ in paths.entries_under(workspace, skip=lambda folder: str(folder) in unchanged):
        try:
            found = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISLNK(found.st_mode) and found.st_mode & (OTHERS_WRITE | SET_ID_BITS):
            yield path, found


def _sweep_modes(workspace: Path, before: _Modes, unchanged: set[str]) -> list[str]:
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


def _before_without_what_was_left(workspace: Path, protected: dict[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
    """What was there before this command, not counting what an earlier command left behind: that is
    tried again now, and while any of it stands, this command is not run (LeftBehind)."""
    left = _left_behind.get(str(workspace), {})
    if not left:
        return protected
    before = {path: found for path, found in protected.items() if found not in set(left.values())}
    paths.remove_new_protected(workspace, before)
    _fail_if_left(workspace, before, "an earlier command made")
    return before


def _fail_if_left(workspace: Path, before: dict[str, tuple[int, int]], who: str) -> None:
    """Walk again: anything new still there is said in one line, kept, and every later command refused."""
    entries = paths.protected_entries(workspace)
    still = {path: entries[str(workspace / path)] for path in paths.remove_new_protected(workspace, before)
             if str(workspace / path) in entries and os.path.lexists(workspace / path)}
    if not still:
        _left_behind.pop(str(workspace), None)
        return
    _left_behind[str(workspace)] = {str(workspace / path): found for path, found in still.items()}
    names = ", ".join(repr(path) for path in sorted(still))  # repr: a name's control characters escaped
    raise LeftBehind(f"{who} {names} where other programs run it later, and it could not be removed: "
                     f"no command runs in this workspace until a person removes it")


def _clean_environment(environment: Mapping[str, str] | None, workspace: Path) -> dict[str, str]:
    if environment is None:
        environment = {name: os.environ[name] for name in ("PATH", "LANG", "LC_ALL") if name in os.environ}
        environment["HOME"] = str(workspace)
    cleaned = {name: value for name, value in environment.items()
               if name not in STARTUP_VARIABLES and not name.startswith(STARTUP_PREFIXES)}
    # Bytecode runs in place of its source (course.sandbox.paths.RUN_LATER: __pycache__, *.pyc), so what a command
    # makes of it is removed after it and what exists is read-only: Python in a command does not try to write it
    # (https://docs.python.org/3/using/cmdline.html#envvar-PYTHONDONTWRITEBYTECODE).
    cleaned["PYTHONDONTWRITEBYTECODE"] = "1"
    return cleaned


@dataclass(frozen=True)
class _Plan:
    """Everything the two forked processes need, worked out before the fork (no imports after it)."""
    command: str
    workspace: Path
    environment: dict[str, str]
    timeout_s: float
    file_size_limit: int
    confine: bool
    hidden: tuple[tuple[str, str], ...] = ()  # (path to cover, empty stand-in to cover it with)
    read_only: tuple[tuple[str, str], ...] = ()  # (where, path inside the workspace bound there read-only)
    grants: tuple[tuple[str, int], ...] = ()  # (path, Landlock rights beneath it)
    abi: int = 0
    groups: tuple[str, ...] = ()  # the cgroups made for the command (_groups_of_its_own), none where none can be
    disk_limit: tuple[int, int] = (DISK_GROWTH_LIMIT, ENTRY_GROWTH_LIMIT)  # bytes, entries this command may add


def _space_and_entries(workspace: Path, unchanged: set[str] = frozenset()) -> tuple[int, int]:
    """The free space of the workspace's file system (statvfs: what others write meanwhile counts too, a few MB
    against a GiB) and, as a negative count, the entries the workspace holds: counted, since others make
    hundreds of files a second on a busy machine, and a hard link, which takes no inode, is an entry too.
    ``unchanged``: folders bound read-only for the command (.git, a virtual environment), not gone into."""
    return DiskGrowth(str(workspace)).start[0], -_entries_in(workspace, unchanged)


def _entries_in(workspace: Path, unchanged: set[str] = frozenset()) -> int:
    """How many entries the workspace holds, links not followed and the folders of ``unchanged`` not gone
    into (os.scandir: about 1-3 µs an entry)."""
    count, folders = 0, [str(workspace)]
    while folders:
        try:
            with os.scandir(folders.pop()) as entries:
                for entry in entries:
                    count += 1
                    if entry.is_dir(follow_symlinks=False) and entry.path not in unchanged:
                        folders.append(entry.path)
        except OSError:
            continue
    return count


def disk_growth_left(workspace: Path) -> tuple[int, int]:
    """The bytes and the entries the next command may add to the workspace's file system: a command's bound, or
    what is left of the run's after this process's commands (never under the AT_LEAST ones)."""
    space, entries = _disk_added.get(str(workspace), (0, 0))
    return (max(DISK_GROWTH_LEFT_AT_LEAST, min(DISK_GROWTH_LIMIT, RUN_DISK_GROWTH_LIMIT - space)),
            max(ENTRY_GROWTH_LEFT_AT_LEAST, min(ENTRY_GROWTH_LIMIT, RUN_ENTRY_GROWTH_LIMIT - entries)))


def _run_supervised(command, workspace, *, hidden, timeout_s, output_cap, environment, confine,
                    read_only=(), disk_limit=None) -> Finished:
    """Fork a supervisor; it runs the command in a child of its own and ends whatever is left after it.

       harness ── fork ──> supervisor (subreaper: orphans come back to it)
                               └── fork ──> namespaces, limits, Landlock ──> exec /bin/sh -c COMMAND
    """
    abi = landlock_abi() if confine else 0
    plan = _Plan(command, Path(workspace), dict(environment), timeout_s, output_cap * 50, confine,
                 hidden=_everywhere(_stand_ins(hidden, workspace)) if confine else (),
                 grants=_grants(Path(workspace), abi) if confine else (), abi=abi,
                 read_only=_everywhere(tuple((path, path) for path in read_only)) if confine else (),
                 groups=tuple(dict.fromkeys(_groups_of_its_own().values())) if confine else (),
                 disk_limit=disk_limit or (DISK_GROWTH_LIMIT, ENTRY_GROWTH_LIMIT))
    try:
        return _fork_supervisor(plan, output_cap)
    finally:
        for group in plan.groups:
            _end_what_is_left_in(group)
            try:
                os.rmdir(group)
            except OSError:
                pass


def _end_what_is_left_in(group: str) -> None:
    """End every process still in the command's cgroup. The supervisor ends what the command left by walking
    its descendants through /proc; a process it did not find, or a supervisor kept from looking, leaves one
    running after the call, with the workspace writable while the file tools work in it. The cgroup holds
    every process the command started, however it forked: cgroup v2's cgroup.kill ends them all at once
    (https://docs.kernel.org/admin-guide/cgroup-v2.html#core-interface-files); elsewhere each is killed."""
    try:
        with open(os.path.join(group, "cgroup.kill"), "w") as kill:
            kill.write("1")
    except OSError:
        pass
    for _ in range(100):
        try:
            with open(os.path.join(group, "cgroup.procs")) as procs:
                left = [int(pid) for pid in procs.read().split()]
        except (OSError, ValueError):
            return
        if not left:
            return
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.005)


def _fork_supervisor(plan: _Plan, output_cap: int) -> Finished:
    with tempfile.TemporaryFile() as output:  # a file, not a pipe: a leftover holding stdout cannot hang us
        report_read, report_write = os.pipe()
        with warnings.catch_warnings():
            # Python 3.12 warns on fork() in a threaded process (a notebook kernel): a lock held by
            # another thread stays held in the child. Ours takes none: every module is imported
            # already, and the children only make system calls until exec or os._exit.
            warnings.filterwarnings("ignore", ".*use of fork\\(\\) may lead to deadlocks", DeprecationWarning)
            supervisor = os.fork()
        if supervisor == 0:  # the supervisor never returns into the caller's code
            os.close(report_read)
            _supervise(plan, output.fileno(), report_write)
        os.close(report_write)
        try:
            report = _read_report(report_read, plan.timeout_s + GRACE_S)
        except BaseException:
            _stop_supervisor(supervisor)
            raise
        finally:
            os.close(report_read)
        os.waitpid(supervisor, 0)
        output.seek(0)
        text = output.read(output_cap).decode("utf-8", errors="replace")
    kind, code, timed_out, stragglers, message = report.split("\t", 4)
    if kind != "done":
        raise CommandNotStarted(f"the command did not start: {message}")
    text += f"\n[{message}]" if message else ""  # a bound passed: the command was stopped there
    return Finished(None if code == "-" else int(code), text, timed_out == "1", int(stragglers))


def _read_report(fd: int, limit_s: float) -> str:
    chunks, deadline = [], time.monotonic() + limit_s
    while True:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            raise CommandNotStarted(f"the supervisor did not report within {limit_s:.0f} s, so it was stopped")
        chunk = os.read(fd, 4096)
        if not chunk:
            return b"".join(chunks).decode("utf-8", errors="replace") or "error\t-\t0\t0\tthe supervisor died"
        chunks.append(chunk)


def _stop_supervisor(pid: int) -> None:
    """Ctrl-C or an error in the harness: the supervisor ends the command's processes, then itself."""
    os.kill(pid, signal.SIGTERM)
    for _ in range(100):
        if os.waitpid(pid, os.WNOHANG) != (0, 0):
            return
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def _run_plain(command, workspace, timeout_s, output_cap, environment) -> Finished:
    """Not Linux: no subreaper and no /proc, so the cleanup is the process group (setsid escapes it)."""
    with tempfile.TemporaryFile() as output:
        process = subprocess.Popen(["/bin/sh", "-c", command], cwd=workspace, env=environment,
                                   stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT,
                                   start_new_session=True,
                                   preexec_fn=lambda: (_narrow_umask(), _set_limits(output_cap * 50, timeout_s, False,
                                                                                    strict=False)))
        try:
            code, timed_out = process.wait(timeout=timeout_s), False
        except subprocess.TimeoutExpired:
            code, timed_out = None, True
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        process.wait()
        output.seek(0)
        text = output.read(output_cap).decode("utf-8", errors="replace")
    return Finished(code, text, timed_out, 0)


# ---------------------------------------------------------------- the supervisor (a forked process)

class _Stop(Exception):
    pass


def _raise_stop(signum, frame):
    raise _Stop()


def _supervise(plan: _Plan, output_fd: int, report_fd: int) -> None:
    """Run the command, wait for it (or the timeout), end every process left, report, exit."""
    report, command_pid = "error\t-\t0\t0\tthe supervisor failed", -1
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C belongs to the harness; it tells us with SIGTERM
        signal.signal(signal.SIGTERM, _raise_stop)
        _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)  # the harness died: clean up anyway
        _prctl(PR_SET_CHILD_SUBREAPER, 1)  # every orphan in the command's tree is re-parented to us
        setup_read, setup_write = os.pipe()  # close-on-exec: EOF without a word means exec worked
        # The PID namespace's first process reads this pipe and ends when it does: the supervisor holds
        # the only writing end, so the namespace, with everything in it, ends when the supervisor does.
        holder_read, holder_write = os.pipe()
        command_pid = os.fork()
        if command_pid == 0:
            _command(plan, output_fd, setup_write, holder_read)
        os.close(setup_write)
        os.close(holder_read)
        failure, helpers = _helpers_said(_read_all(setup_read))
        spared = {command_pid, *helpers}  # ours, not the command's: never counted among its stragglers
        if failure:
            os.waitpid(command_pid, 0)
            _end_descendants(spare_from_count=spared)
            report = f"error\t-\t0\t0\t{failure}"
        else:
            growth = DiskGrowth(str(plan.workspace), *plan.disk_limit)
            code = _wait(command_pid, plan.timeout_s, growth.passed)
            stragglers = _end_descendants(spare_from_count=spared)
            over = growth.passed()
            timed_out = code is None and not over
            report = f"done\t{'-' if code is None else code}\t{int(timed_out)}\t{stragglers}\t{over}"
    except BaseException as error:  # _Stop included: end what was started, then say so
        report = f"error\t-\t0\t0\tthe supervisor stopped: {type(error).__name__} {error}".replace("\n", " ")
        try:
            _end_descendants(spare_from_count=command_pid)
        except BaseException:
            pass
    finally:
        try:
            os.write(report_fd, report.encode())
        finally:
            os._exit(0)


def _helpers_said(said: str) -> tuple[str, tuple[int, ...]]:
    """(what failed, or ""; the pids of the PID namespace's holder and of the shell), from what the command's
    child wrote before the shell ran: the pids between two NUL characters, a failure in plain words."""
    found = re.search(r"\x00(\d+) (\d+)\x00", said)
    if not found:
        return said, ()
    return (said[:found.start()] + said[found.end():]), (int(found[1]), int(found[2]))


def _read_all(fd: int) -> str:
    data = b""
    while chunk := os.read(fd, 4096):
        data += chunk
    os.close(fd)
    return data.decode("utf-8", errors="replace")


class DiskGrowth:
    """How much the workspace's file system filled up while the command ran, from statvfs (one system
    call, a few times a second): RLIMIT_FSIZE bounds each file, not their sum, and a size-limited tmpfs
    cannot be put under the user's own workspace. It counts what anyone wrote on that file system
    meanwhile, so it errs towards stopping the command, never towards letting it fill the disk."""

    def __init__(self, folder: str, limit: int = DISK_GROWTH_LIMIT, entry_limit: int = ENTRY_GROWTH_LIMIT):
        self.folder, self.limit, self.entry_limit = folder, limit, entry_limit
        self.start = self._free()

    def _free(self) -> tuple[int, int]:
        try:
            found = os.statvfs(self.folder)
        except OSError:
            return (0, 0)
        return (found.f_bavail * found.f_frsize, found.f_favail)

    def passed(self) -> str:
        """"" while within the bounds; else what was passed, one line."""
        space, entries = self._free()
        if self.start[0] - space > self.limit:
            if self.limit < DISK_GROWTH_LIMIT:
                return (f"the command wrote more than {self.limit >> 20} MB, what was left of the "
                        f"{RUN_DISK_GROWTH_LIMIT >> 20} MB this run's commands may add to the disk, so it was stopped: "
                        "delete what is not needed first")
            return f"the command wrote more than {self.limit >> 20} MB, so it was stopped"
        if self.start[1] and self.start[1] - entries > self.entry_limit:
            if self.entry_limit < ENTRY_GROWTH_LIMIT:
                return (f"the command made more than {self.entry_limit:,} files and folders, what was left of the "
                        f"{RUN_ENTRY_GROWTH_LIMIT:,} this run's commands may make, so it was stopped: "
                        "delete what is not needed first")
            return f"the command made more than {self.entry_limit:,} files and folders, so it was stopped"
        return ""


def _wait(pid: int, timeout_s: float, over=lambda: "") -> int | None:
    """The shell's exit code, or None at the timeout or once ``over()`` says a bound was passed (the
    caller then ends it with the rest). Woken every DISK_CHECK_S to ask ``over()``."""
    try:
        handle = os.pidfd_open(pid)  # Linux 5.3: a file descriptor that becomes readable when pid exits
    except (AttributeError, OSError):
        handle = None
    deadline = time.monotonic() + timeout_s
    while (left := deadline - time.monotonic()) > 0 and not over():
        if handle is not None:
            ready, _, _ = select.select([handle], [], [], min(left, DISK_CHECK_S))
            if ready:
                os.close(handle)
                return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
            continue
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.005)
    if handle is not None:
        os.close(handle)
    return None


def _end_descendants(spare_from_count) -> int:
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


# ---------------------------------------------------------------- the command (a forked process)

def _command(plan: _Plan, output_fd: int, setup_fd: int, holder_fd: int = -1) -> None:
    """Confine this process step by step, then become /bin/sh; confined, start the shell in a PID namespace
    of its own instead, and end as it ends. A failed step is reported, never skipped."""
    step = "start"
    try:
        os.setsid()  # no controlling terminal: nothing to inject keystrokes into
        for number in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
            signal.signal(number, signal.SIG_DFL)  # Python ignores SIGPIPE and SIGXFSZ; exec would keep that
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(output_fd, 1)
        os.dup2(output_fd, 2)
        for group in plan.groups:
            step = f"cannot join the command's own cgroup {group}"
            _join(group)
        step = "cannot enter the workspace"
        os.chdir(plan.workspace)
        _narrow_umask()
        if plan.confine:
            step = "cannot create a user and mount namespace (unprivileged user namespaces disabled?)"
            _enter_namespaces()
            step = "cannot create a PID namespace"
            _check(_libc().unshare(CLONE_NEWPID), "unshare CLONE_NEWPID")  # owned by the new user namespace
            step = "cannot make the protected paths read-only"
            _make_read_only(plan.read_only)
            step = "cannot mask hidden paths with bind mounts"
            _mask(plan.hidden)
            step = "cannot make every mount read-only but the workspace"
            read_only_but([str(plan.workspace)])
            os.chdir(plan.workspace)
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the supervisor died: so does the shell (set after
        # the user namespace, whose new credentials clear it)
        step = "cannot set resource limits"
        _set_limits(plan.file_size_limit, plan.timeout_s, in_own_user_namespace=plan.confine)
        _close_inherited_files(keep={0, 1, 2, setup_fd, holder_fd})
        if plan.confine:
            step = "cannot drop capabilities"
            _drop_capabilities()
            step = "cannot set no_new_privs"
            _prctl(PR_SET_NO_NEW_PRIVS, 1)  # required by landlock_restrict_self without CAP_SYS_ADMIN
            step = "cannot apply Landlock"
            ruleset = _landlock_ruleset(plan.grants, plan.abi)  # each process below enters it on its own
            step = "cannot join a fresh session keyring"
            _join_fresh_session_keyring()
            step = "cannot apply the seccomp filter"
            _refuse_unix_sockets()
            step = "cannot start the shell in its PID namespace"
            _run_in_own_pid_namespace(plan, setup_fd, holder_fd, ruleset)
        step = "cannot run /bin/sh"
        os.execve("/bin/sh", ["/bin/sh", "-c", plan.command], plan.environment)
    except BaseException as error:
        os.write(setup_fd, f"{step}: {error}".replace("\n", " ").encode())
    finally:
        os._exit(127)


# The command's processes get a PID namespace of their own (man pid_namespaces(7)): they see each other
# and no other process of the machine, so pidfd_open, kill(pid, 0), getpriority or sched_getaffinity of
# another pid answer "no such process", and a pid cannot be named to signal, trace or probe it.
# unshare(CLONE_NEWPID) moves only the caller's children, and the first becomes the namespace's PID 1,
# whose end the kernel follows by killing every process in it; orphans are re-parented to it, not to the
# supervisor; and no signal from inside reaches it unless it set a handler. The shell is not that first
# process: it would take every process it left with it, uncounted, and the supervisor pins what a
# command left (`stragglers`) and ends it itself. So this process (outside the namespace, in the user,
# mount, network and IPC ones) starts two children in it:
#   1. the holder, PID 1: /bin/sh running `read` on a pipe whose only writing end the supervisor holds. A
#      fresh program: nothing of the harness's memory (its API key among it) is in the namespace, only
#      what the shell gets; it starts with every signal ignored, which sh keeps so (but SIGCHLD, whose
#      handler only notes that a child ended), so no signal from inside moves it; it is in a Landlock
#      domain of its own (a sibling of the shell's), so nothing inside may ptrace it or read its memory,
#      nor, from ABI 6, signal it. It outlives the shell, so the supervisor still finds, counts and ends what the shell left
#      (under the holder now), as before; it ends with the supervisor, and the namespace with it. Like the
#      supervisor before, it reaps no orphan while the command runs: one that ended waits, a zombie, until then.
#   2. the shell, PID 2: a session of its own, a fresh proc of the namespace mounted over /proc, then its
#      own Landlock domain, then exec. Its parent is this process, which waits for it and ends as it ended
#      (its exit code, or the signal that ended it), so the supervisor's wait reads the shell's own status.
# This process enters a third sibling domain; seccomp, no_new_privs, the rlimits and the empty bounding set
# were set before the forks, so all three have them. No pid names it inside the namespace.
# A proc mounted by a process in the namespace lists only the namespace's processes; it is mounted
# read-only (Landlock denies /proc to the command anyway). The kernel refuses it where the machine's /proc
# is partly covered (a container's masked /proc): there the machine's /proc stays, denied by Landlock.
# bubblewrap's --unshare-pid and --proc do the same (https://github.com/containers/bubblewrap).
HOLDER = ["/bin/sh", "-c", "read -r line"]  # ends when the pipe does: when the supervisor has gone


def _run_in_own_pid_namespace(plan: _Plan, setup_fd: int, holder_fd: int, ruleset: int) -> None:
    """Start the holder (PID 1) and the shell in the PID namespace, tell the supervisor their pids, wait
    for the shell and end as it ended. Never returns; a failed step raises, naming it, into _command's report."""
    step = "cannot start the holder"
    try:
        holder = os.fork()
        if holder == 0:  # PID 1 of the namespace
            step = "cannot run the holder"
            os.dup2(holder_fd, 0)
            os.close(holder_fd)
            for number in signal.valid_signals() - {signal.SIGKILL, signal.SIGSTOP}:
                try:  # ignored on entry, a signal stays ignored in a non-interactive sh: no handler runs
                    signal.signal(number, signal.SIG_IGN)
                except (OSError, ValueError):  # one the C library keeps for itself (its threads)
                    pass
            _restrict_self(ruleset)
            os.execve(HOLDER[0], HOLDER, {})
        step = "cannot start the shell"
        shell = os.fork()
        if shell == 0:  # PID 2
            os.close(holder_fd)
            os.setsid()  # `kill 0` in the command reaches its own processes, not this one
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # this process died: so does the shell
            step = "cannot mount a proc of the PID namespace's own"
            _mount_own_proc()
            step = "cannot apply Landlock to the shell"
            _restrict_self(ruleset)
            step = "cannot run /bin/sh"
            os.execve("/bin/sh", ["/bin/sh", "-c", plan.command], plan.environment)
        os.close(holder_fd)
        step = "cannot apply Landlock to the shell's parent"
        _restrict_self(ruleset)
    except OSError as error:
        raise OSError(error.errno, f"{step}: {error.strerror or error}") from None
    os.close(ruleset)
    os.write(setup_fd, f"\0{holder} {shell}\0".encode())  # _helpers_said reads it
    os.close(setup_fd)
    _end_as(os.waitpid(shell, 0)[1])


def _mount_own_proc() -> None:
    flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC
    if _libc().mount(b"proc", b"/proc", b"proc", flags, None) < 0 and ctypes.get_errno() != errno.EPERM:
        _check(-1, "mount proc")  # EPERM: the machine's /proc is partly covered; it stays, denied by Landlock


def _end_as(status: int) -> None:
    """End this process with the shell's wait status: its exit code, or the signal that ended it."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        if number not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 127)


def _narrow_umask() -> None:
    """What the command makes is not others' to write: umask 022 added to the user's, never wider."""
    os.umask(os.umask(0o022) | 0o022)


def _set_limits(file_size: int, timeout_s: float, in_own_user_namespace: bool, strict: bool = True) -> None:
    """Lower the limits of this process (and so of the command). Not strict: skip a limit this OS refuses."""
    cpu = math.ceil(timeout_s) + 1
    limits = [(resource.RLIMIT_FSIZE, file_size), (resource.RLIMIT_CORE, 0), (resource.RLIMIT_CPU, cpu),
              (resource.RLIMIT_NOFILE, OPEN_FILES_LIMIT)]
    if hasattr(resource, "RLIMIT_AS"):
        limits.append((resource.RLIMIT_AS, MEMORY_LIMIT))
    if in_own_user_namespace:
        # RLIMIT_NPROC counts every process of the user, so outside a user namespace of its own a
        # learner with a desktop open would hit it at once. Inside one (created before this limit is
        # lowered) only the command's own processes count. Not enforced for root (uid 0 is exempt).
        limits.append((resource.RLIMIT_NPROC, PROCESS_LIMIT))
    for which, value in limits:
        hard = resource.getrlimit(which)[1]
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        try:
            resource.setrlimit(which, (value, value))
        except (OSError, ValueError):
            if strict:
                raise


# RLIMIT_NPROC does not bind root (the kernel exempts uid 0 of the machine, whatever the user namespace
# maps it to), so where the harness may make a pids cgroup, the command runs in one of its own whose
# pids.max is PROCESS_LIMIT (https://docs.kernel.org/admin-guide/cgroup-v1/pids.html, and for cgroup v2
# https://docs.kernel.org/admin-guide/cgroup-v2.html#pid): a fork past it fails with EAGAIN, as the
# rlimit would. cgroup v1's pids hierarchy, where mounted and writable; cgroup v2 only where the
# harness's own cgroup delegates the pids controller to its children (cgroup.subtree_control names it).
# RLIMIT_AS bounds each process, not the command: 50 children of 200 MB each would use 10 GB. So the
# same goes for memory: a memory cgroup of the command's own holds all its processes to
# COMMAND_MEMORY_LIMIT together, swap included (cgroup v2's memory.max and memory.swap.max,
# https://docs.kernel.org/admin-guide/cgroup-v2.html#memory-interface-files; v1's memory.limit_in_bytes
# and memory.memsw.limit_in_bytes, https://docs.kernel.org/admin-guide/cgroup-v1/memory.html); past it
# the kernel reclaims what it can (the page cache of written files) and then ends a process of the
# command (the OOM killer, within the group only). In cgroup v2 a process is in one group, so one group
# gets both limits. Elsewhere there is no such group, and the docstring above says what is then not bounded.
CONTROLLERS = ("pids", "memory")


def _groups_of_its_own() -> dict[str, str]:
    """{controller: a new, empty cgroup beneath the harness's own with that controller's limit}, for
    each of CONTROLLERS that can be made here (two controllers may share one folder: cgroup v2)."""
    try:
        with open("/proc/self/cgroup") as listing:
            lines = [line.rstrip("\n").split(":", 2) for line in listing]
    except OSError:
        return {}
    places: list[tuple[str, set[str]]] = []
    for _, kinds, path in lines:
        if kinds == "":  # cgroup v2: the unified hierarchy, wherever it is mounted
            for root in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
                folder = os.path.join(root, path.lstrip("/"))
                try:
                    with open(os.path.join(folder, "cgroup.subtree_control")) as control:
                        places.append((folder, set(control.read().split()) & set(CONTROLLERS)))
                except OSError:
                    pass
        else:  # cgroup v1: a hierarchy per controller
            places += [(os.path.join("/sys/fs/cgroup", kind, path.lstrip("/")), {kind})
                       for kind in kinds.split(",") if kind in CONTROLLERS]
    groups: dict[str, str] = {}
    for place, controllers in places:
        controllers -= groups.keys()
        if not controllers:
            continue
        folder = os.path.join(place, f"agent-course-command-{os.getpid()}-{time.monotonic_ns()}")
        try:
            os.mkdir(folder)
        except OSError:
            continue
        limited = [controller for controller in controllers if _limit(folder, controller)]
        if limited:
            groups.update(dict.fromkeys(limited, folder))
        else:
            os.rmdir(folder)
    return groups


def _limit(folder: str, controller: str) -> bool:
    """Write the controller's limit in the group; whether it could be (cgroup v2's names, then v1's)."""
    if controller == "pids":
        return _write_setting(folder, "pids.max", PROCESS_LIMIT)
    if _write_setting(folder, "memory.max", COMMAND_MEMORY_LIMIT):
        _write_setting(folder, "memory.swap.max", 0)  # absent where the kernel keeps no swap account
        return True
    if _write_setting(folder, "memory.limit_in_bytes", COMMAND_MEMORY_LIMIT):
        _write_setting(folder, "memory.memsw.limit_in_bytes", COMMAND_MEMORY_LIMIT)  # memory and swap together
        return True
    return False


def _write_setting(folder: str, name: str, value: int) -> bool:
    try:
        with open(os.path.join(folder, name), "w") as setting:
            setting.write(str(value))
        return True
    except OSError:
        return False


def _join(folder: str) -> None:
    """This process (and so every process the command starts) into the group; it raises if it cannot."""
    with open(os.path.join(folder, "cgroup.procs"), "w") as procs:
        procs.write("0")  # 0: the process that writes


def _close_inherited_files(keep: set[int]) -> None:
    for name in os.listdir("/proc/self/fd"):  # before Landlock, which hides /proc
        if int(name) not in keep:
            try:
                os.close(int(name))
            except OSError:
                pass


# ---------------------------------------------------------------- hidden paths: a private mount namespace

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

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWNET = 0x00020000, 0x08000000, 0x10000000, 0x40000000
CLONE_NEWPID = 0x20000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND = 1, 2, 4, 8, 32, 4096
MS_NOATIME, MS_NODIRATIME, MS_REC, MS_PRIVATE, MS_RELATIME = 1024, 2048, 16384, 1 << 18, 1 << 21
# A read-only remount inside a user namespace must keep the locked flags of the mount it came from.
KEPT_FLAGS = {os.ST_NOSUID: MS_NOSUID, os.ST_NODEV: MS_NODEV, os.ST_NOEXEC: MS_NOEXEC,
              os.ST_NOATIME: MS_NOATIME, os.ST_NODIRATIME: MS_NODIRATIME,
              getattr(os, "ST_RELATIME", 4096): MS_RELATIME} if LINUX else {}


def _stand_ins(hidden: Sequence[Path], workspace: Path) -> tuple[tuple[str, str], ...]:
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

def _everywhere(pairs: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
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


def _enter_namespaces() -> None:
    uid, gid = os.getuid(), os.getgid()
    # A network namespace of its own: only a loopback, down, so UDP to 127.0.0.1 fails like TCP (man
    # network_namespaces(7)); no interface of the machine is in it. An IPC namespace of its own: no
    # System V shared memory, semaphore or message queue of the machine's (a root-owned segment of mode
    # 0600 was readable and writable otherwise), and no POSIX message queue (man ipc_namespaces(7)).
    _check(_libc().unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC), "unshare")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as mapping:
            mapping.write(text)
    # Our mounts must not propagate back to the machine's namespace.
    _check(_libc().mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate /")


def _make_read_only(paths: Sequence[tuple[str, str]]) -> None:
    """Each path (a folder or a file inside the workspace) bound onto itself read-only, in the command's
    mount namespace only: nothing in it can be written, created, renamed or deleted, and the path itself
    cannot be renamed or removed (it is a mount point). Codex CLI keeps .git read-only inside its
    writable roots the same way (a read-only bind mount, codex-rs/linux-sandbox)."""
    for target, path in paths:  # (where, the path bound there): the path itself, or another place it is reachable
        _check(_libc().mount(path.encode(), target.encode(), None, MS_BIND | MS_REC, None), f"bind {target}")
        kept = sum(flag for bit, flag in KEPT_FLAGS.items() if os.statvfs(target).f_flag & bit)
        _check(_libc().mount(None, target.encode(), None, MS_REMOUNT | MS_BIND | MS_RDONLY | kept, None),
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
    libc = _libc()
    for folder in writable:
        _check(libc.mount(folder.encode(), folder.encode(), None, MS_BIND | MS_REC, None), f"bind {folder}")
    _set_mount_attributes("/", AT_RECURSIVE, MOUNT_ATTR_RDONLY, 0)
    for folder in writable:
        _set_mount_attributes(folder, 0, 0, MOUNT_ATTR_RDONLY)


def _set_mount_attributes(path: str, flags: int, attr_set: int, attr_clr: int) -> None:
    attr = _MountAttr(attr_set=attr_set, attr_clr=attr_clr)
    _check(_libc().syscall(ctypes.c_long(SYS_MOUNT_SETATTR), ctypes.c_int(AT_FDCWD), path.encode(),
                           ctypes.c_uint(flags), ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr))),
           f"mount_setattr {path}")


def _mask(pairs: Sequence[tuple[str, str]]) -> None:
    for target, stand_in in pairs:
        _check(_libc().mount(stand_in.encode(), target.encode(), None, MS_BIND, None), f"bind over {target}")
        kept = sum(flag for bit, flag in KEPT_FLAGS.items() if os.statvfs(stand_in).f_flag & bit)
        _check(_libc().mount(None, target.encode(), None, MS_REMOUNT | MS_BIND | MS_RDONLY | kept, None),
               f"read-only {target}")


def _drop_capabilities() -> None:
    """Empty the bounding set, so that /bin/sh starts with no capability even as uid 0."""
    with open("/proc/sys/kernel/cap_last_cap") as last:
        for capability in range(int(last.read()) + 1):
            _prctl(PR_CAPBSET_DROP, capability)


# ---------------------------------------------------------------- Landlock (ctypes, no package)

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
    version = _libc().syscall(ctypes.c_long(SYS_CREATE_RULESET), None, ctypes.c_size_t(0),
                              ctypes.c_uint32(CREATE_RULESET_VERSION))
    return max(version, 0)


def _handled_files(abi: int) -> int:
    """Only the rights this ABI knows: asking for a newer one makes landlock_create_ruleset fail."""
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


def _grants(workspace: Path, abi: int) -> tuple[tuple[str, int], ...]:
    """What the command may reach: system folders and the course's Python read-only, the workspace fully.

    The Python prefixes (the venv and the interpreter it was made from) are granted so that an approved
    `python3 script.py` finds its standard library and packages; they hold code, not data. A prefix
    that contains the workspace would open its neighbours too, so it is left out.
    """
    grants = list(system_grants(READ_AND_RUN))
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}:
        if prefix != "/" and not workspace.is_relative_to(Path(prefix).resolve()):
            grants.append((prefix, READ_AND_RUN))
    grants += DEVICES.items()
    grants.append((str(workspace), _handled_files(abi)))
    return tuple(grants)


def _restrict_with_landlock(grants: Sequence[tuple[str, int]], abi: int) -> None:
    ruleset = _landlock_ruleset(grants, abi)
    try:
        _restrict_self(ruleset)
    finally:
        os.close(ruleset)


def _restrict_self(ruleset: int) -> None:
    """This process (and what it starts) into a new Landlock domain of the ruleset's. Processes that each
    call it with the same ruleset are in sibling domains: none may ptrace another (landlock(7))."""
    _check(_libc().syscall(ctypes.c_long(SYS_RESTRICT_SELF), ctypes.c_int(ruleset), ctypes.c_uint32(0)),
           "landlock_restrict_self")


def _landlock_ruleset(grants: Sequence[tuple[str, int]], abi: int) -> int:
    """A ruleset (a close-on-exec descriptor) that grants ``grants`` and handles every right this ABI knows."""
    handled = _handled_files(abi)
    attr = _RulesetAttr(handled_access_fs=handled,
                        # handled with no rule: every TCP bind and connect is refused
                        handled_access_net=NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0,
                        scoped=SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0)
    size = ctypes.sizeof(attr) if abi >= 6 else 16 if abi >= 4 else 8  # older kernels know a shorter struct
    libc = _libc()
    ruleset = libc.syscall(ctypes.c_long(SYS_CREATE_RULESET), ctypes.byref(attr), ctypes.c_size_t(size),
                           ctypes.c_uint32(0))
    _check(ruleset, "landlock_create_ruleset")
    try:
        for path, rights in grants:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except FileNotFoundError:  # /lib32 and friends exist on some systems only
                continue
            try:
                rule = _PathBeneathAttr(allowed_access=rights & handled, parent_fd=fd)
                _check(libc.syscall(ctypes.c_long(SYS_ADD_RULE), ctypes.c_int(ruleset),
                                    ctypes.c_int(RULE_PATH_BENEATH), ctypes.byref(rule), ctypes.c_uint32(0)),
                       f"landlock_add_rule {path}")
            finally:
                os.close(fd)
    except BaseException:
        os.close(ruleset)
        raise
    return ruleset


# ---------------------------------------------------------------- seccomp: the doors Landlock leaves open

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


def _join_fresh_session_keyring() -> None:
    """A new, empty session keyring for this process (man keyctl(2), KEYCTL_JOIN_SESSION_KEYRING with no
    name): the harness's keys are not in it. Where keyctl is refused already (a container), nothing is held."""
    machine = os.uname().machine
    if machine not in SECCOMP_ARCHES:
        return
    keyctl = SECCOMP_ARCHES[machine][2][-1]
    if _libc().syscall(ctypes.c_long(keyctl), ctypes.c_long(KEYCTL_JOIN_SESSION_KEYRING), None) < 0:
        number = ctypes.get_errno()
        if number not in (errno.ENOSYS, errno.EPERM, errno.EACCES):
            raise OSError(number, f"keyctl join session keyring: {os.strerror(number)}")


def _refuse_unix_sockets() -> None:
    """Install the filter on this process (inherited by everything it starts; no_new_privs is set)."""
    machine = os.uname().machine
    if machine not in SECCOMP_ARCHES:
        return  # said in the module's docstring: named unix sockets stay reachable there
    program = seccomp_program(*SECCOMP_ARCHES[machine], unsupported=PREALLOCATE_CALLS[machine],
                              own_process_only=OWN_PROCESS_ONLY[machine])
    instructions = (_SockFilter * len(program))(*(_SockFilter(*instruction) for instruction in program))
    fprog = _SockFprog(len(program), instructions)
    _check(_libc().prctl(ctypes.c_int(PR_SET_SECCOMP), ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.byref(fprog),
                         ctypes.c_ulong(0), ctypes.c_ulong(0)), "seccomp")


# ---------------------------------------------------------------- libc

PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 24, 36, 38


@functools.lru_cache(maxsize=None)
def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _prctl(option: int, value: int) -> None:
    _check(_libc().prctl(ctypes.c_int(option), ctypes.c_ulong(value), ctypes.c_ulong(0), ctypes.c_ulong(0),
                         ctypes.c_ulong(0)), f"prctl {option}")


def _check(result: int, what: str) -> int:
    if result < 0:
        number = ctypes.get_errno()
        raise OSError(number, f"{what}: {os.strerror(number)}")
    return result


# ---------------------------------------------------------------- python -m course.sandbox.confinement --bench

def _bench(runs: int = 50) -> None:
    """Median wall time of a call: confined, then our supervisor alone (the opt-out), then plain sh -c."""
    print(probe().reason)
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder)
        for name in ("a.txt", "b.txt", "c.txt"):
            (workspace / name).write_text(name)
        for command in ("true", "ls -l"):
            confined = _median(lambda: run_confined(command, workspace), runs)
            os.environ[OPT_OUT] = "1"
            supervised = _median(lambda: run_confined(command, workspace), runs)
            del os.environ[OPT_OUT]
            plain = _median(lambda: subprocess.run(["/bin/sh", "-c", command], cwd=workspace,
                                                   stdout=subprocess.DEVNULL, check=False), runs)
            print(f"{command:6}  confined {confined * 1000:5.1f} ms   supervisor only {supervised * 1000:5.1f} ms"
                  f"   plain sh -c {plain * 1000:4.1f} ms   confined/plain {confined / plain:4.1f}x"
                  f"   (median of {runs})")


def _median(action, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


if __name__ == "__main__":
    if sys.argv[1:] == ["--bench"]:
        _bench()
    else:
        print("usage: python -m course.sandbox.confinement --bench")
        print(probe().reason)
