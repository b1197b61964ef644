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

import ctypes
import dataclasses
import errno
import functools
import math
import os
import re
import resource
import select
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from course.sandbox import paths
from course.sandbox.kernel import cgroups, landlock, mounts, processes, quota, seccomp
from course.sandbox.kernel.calls import check as _check, libc as _libc, prctl as _prctl
from course.sandbox.kernel.landlock import DEVICES, READ_AND_RUN, landlock_abi, system_grants
from course.sandbox.kernel.modes import modes_before, sweep_modes
from course.sandbox.kernel.mounts import MS_NODEV, MS_NOEXEC, MS_NOSUID, MS_RDONLY, everywhere, stand_ins
from course.sandbox.kernel.processes import CLONE_NEWPID, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS, PR_SET_PDEATHSIG

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
    modes = modes_before(workspace, unchanged)
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
    said = sweep_modes(workspace, modes, unchanged)
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


# ---------------------------------------------------------------- what the command left behind

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
    """How many entries the workspace holds, links not followed and the folders of ``unchanged`` not gone into."""
    return quota.held(workspace, unchanged, sizes=False)[1]


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
                 hidden=everywhere(stand_ins(hidden, workspace)) if confine else (),
                 grants=_grants(Path(workspace), abi) if confine else (), abi=abi,
                 read_only=everywhere(tuple((path, path) for path in read_only)) if confine else (),
                 groups=tuple(dict.fromkeys(_groups_of_its_own().values())) if confine else (),
                 disk_limit=disk_limit or (DISK_GROWTH_LIMIT, ENTRY_GROWTH_LIMIT))
    try:
        return _fork_supervisor(plan, output_cap)
    finally:
        cgroups.end_and_remove(plan.groups)


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
            processes.end_descendants(spare_from_count=spared)
            report = f"error\t-\t0\t0\t{failure}"
        else:
            growth = DiskGrowth(str(plan.workspace), *plan.disk_limit)
            code = _wait(command_pid, plan.timeout_s, growth.passed)
            stragglers = processes.end_descendants(spare_from_count=spared)
            over = growth.passed()
            timed_out = code is None and not over
            report = f"done\t{'-' if code is None else code}\t{int(timed_out)}\t{stragglers}\t{over}"
    except BaseException as error:  # _Stop included: end what was started, then say so
        report = f"error\t-\t0\t0\tthe supervisor stopped: {type(error).__name__} {error}".replace("\n", " ")
        try:
            processes.end_descendants(spare_from_count=command_pid)
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
            cgroups.join(group)
        step = "cannot enter the workspace"
        os.chdir(plan.workspace)
        _narrow_umask()
        if plan.confine:
            step = "cannot create a user and mount namespace (unprivileged user namespaces disabled?)"
            processes.enter_namespaces()
            step = "cannot create a PID namespace"
            _check(_libc().unshare(CLONE_NEWPID), "unshare CLONE_NEWPID")  # owned by the new user namespace
            step = "cannot make the protected paths read-only"
            mounts.bind_read_only(plan.read_only)
            step = "cannot mask hidden paths with bind mounts"
            mounts.mask(plan.hidden)
            step = "cannot make every mount read-only but the workspace"
            mounts.read_only_but([str(plan.workspace)])
            os.chdir(plan.workspace)
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the supervisor died: so does the shell (set after
        # the user namespace, whose new credentials clear it)
        step = "cannot set resource limits"
        _set_limits(plan.file_size_limit, plan.timeout_s, in_own_user_namespace=plan.confine)
        _close_inherited_files(keep={0, 1, 2, setup_fd, holder_fd})
        if plan.confine:
            step = "cannot drop capabilities"
            processes.drop_bounding_set()
            step = "cannot set no_new_privs"
            _prctl(PR_SET_NO_NEW_PRIVS, 1)  # required by landlock_restrict_self without CAP_SYS_ADMIN
            step = "cannot apply Landlock"
            ruleset = landlock.full_ruleset(plan.grants, plan.abi)  # each process below enters it on its own
            step = "cannot join a fresh session keyring"
            seccomp.join_fresh_session_keyring()
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
            landlock.restrict_self(ruleset)
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
            landlock.restrict_self(ruleset)
            step = "cannot run /bin/sh"
            os.execve("/bin/sh", ["/bin/sh", "-c", plan.command], plan.environment)
        os.close(holder_fd)
        step = "cannot apply Landlock to the shell's parent"
        landlock.restrict_self(ruleset)
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
    limits = [(resource.RLIMIT_FSIZE, file_size), (resource.RLIMIT_CORE, 0), (resource.RLIMIT_CPU, math.ceil(timeout_s) + 1),
              (resource.RLIMIT_NOFILE, OPEN_FILES_LIMIT)]
    if hasattr(resource, "RLIMIT_AS"):
        limits.append((resource.RLIMIT_AS, MEMORY_LIMIT))
    if in_own_user_namespace:
        # RLIMIT_NPROC counts every process of the user, so outside a user namespace of its own a
        # learner with a desktop open would hit it at once. Inside one (created before this limit is
        # lowered) only the command's own processes count. Not enforced for root (uid 0 is exempt): the
        # pids cgroup (course.sandbox.kernel.cgroups) binds it where one can be made.
        limits.append((resource.RLIMIT_NPROC, PROCESS_LIMIT))
    processes.set_limits(limits, strict)


def _groups_of_its_own() -> dict[str, str]:
    """The command's cgroups: PROCESS_LIMIT processes, COMMAND_MEMORY_LIMIT bytes for all of them together."""
    return cgroups.groups_of_its_own(PROCESS_LIMIT, COMMAND_MEMORY_LIMIT)


def _refuse_unix_sockets() -> None:
    """The command's seccomp filter on this process (inherited by everything it starts; no_new_privs is set)."""
    machine = os.uname().machine
    if machine in seccomp.SECCOMP_ARCHES:  # elsewhere, said in the module's docstring: named unix sockets stay reachable
        seccomp.install(seccomp.command_program(machine))


def _close_inherited_files(keep: set[int]) -> None:
    for name in os.listdir("/proc/self/fd"):  # before Landlock, which hides /proc
        if int(name) not in keep:
            try:
                os.close(int(name))
            except OSError:
                pass


# ---------------------------------------------------------------- what Landlock grants the command

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
    grants.append((str(workspace), landlock.handled_files(abi)))
    return tuple(grants)

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
