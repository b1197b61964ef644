"""Where a student's code runs while it is graded: a child the grader can trust to report nothing but what it saw.

``start(job, limits)`` forks a child (from a server that imported the SDK and the course once, so a
child costs milliseconds) that does, before any student code is imported:

- its own user, mount, network, PID and IPC namespaces (when the kernel allows them unprivileged): no
  network at all; the child is PID 1 of its namespace, so every process the copy starts, however
  it detaches (setsid, double forks), is ended by the kernel when the child ends; no System V queue,
  shared memory or semaphore and no POSIX message queue of the machine's or of another child's, and
  what the copy makes of them goes with the namespace when the child ends (where no namespace can be
  made, the filter refuses those calls instead);
- every mount read-only but the scratch folder, in a mount namespace of the child's own (so that,
  run as root, the copy cannot change even a file's mode or times outside it, which Landlock does
  not govern); where no namespace can be made, seccomp refuses every call that changes a mode or
  a time instead;
- no capability (capset: an empty bounding set binds only what exec starts, and the child runs the
  copy without exec);
- Landlock (course.sandbox.kernel.landlock, the layer s06's command is confined with too):
  the system folders (but what the system keeps from other users, /etc/shadow and the like:
  course.sandbox.kernel.landlock.system_grants), the Python that runs the course and the support package can
  be read; the assembled copy can be read; only the child's scratch folder can be written. Nothing else can be
  touched: not the stages or tests of the grading checkout, not the grader's files, not /proc (so not
  /proc/PARENT/fd/1, the grader's terminal), not /tmp; TCP is refused, and signals cannot leave the
  sandbox (Landlock ABI 6);
- seccomp (course.sandbox.kernel.seccomp.filter_program): no unix socket, so not the server it was forked from;
- rlimits: address space, CPU seconds, file size, open files, and processes; and, where they can be
  made (course.sandbox.kernel.cgroups, as for an s06 command), a pids cgroup of the child's own,
  which binds a grader run as root (the kernel exempts the real root from RLIMIT_NPROC), and a memory
  cgroup that bounds all its processes together;
- a bounded scratch folder (``Limits.disk_mb``, ``Limits.files``): a size-limited tmpfs mounted in the
  child's own mount namespace, or, without namespaces, a supervisor that measures the folder as it
  runs; a copy that passes the bound is ended, and its exercise fails saying so (RLIMIT_FSIZE bounds
  one file, not a folder of many);
- stdin from /dev/null, stdout and stderr into a file the grader reads back, capped.

The supervising process (outside the sandbox) kills the child at the time limit and ends whatever is
left of its process tree; its exit code, which the child cannot set, says whether the time ran out,
and CPU_NOTE how much CPU every process of the copy had used by then (the case running included).
"""

from __future__ import annotations

import functools
import gc
import json
import multiprocessing
import os
import resource
import signal
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from course.sandbox import confinement
from course.sandbox.kernel import SUPPORT_PACKAGE, _python_prefixes, cgroups, landlock, mounts, processes, seccomp
from course.sandbox.kernel.calls import check, libc
from course.sandbox.kernel.landlock import EXECUTE, IOCTL_DEV, READ_DIR, READ_FILE, WRITE_FILE
from course.sandbox.kernel.quota import held
from course.sandbox.kernel.seccomp import filter_program

REPO_ROOT = Path(__file__).resolve().parents[2]
# Imported once, in the server the children are forked from: what a child would otherwise import again
# each time, this module among them (a child is handed _supervise by name, and imports its module to run it).
PRELOAD = ["anthropic", "course", "course.sandbox.paths", "course.sandbox.shell_reading", "course.grading.probes",
           "course.offline.behaviours", "course.grading.jail"]

TIMED_OUT, SIGNALLED, FAILED_EXIT, SETUP_FAILED, WROTE_TOO_MUCH = 3, 4, 5, 6, 7
SCRATCH, OVER_QUOTA_NOTE = "scratch", "over-quota.txt"  # in job/work: the copy's folder; what the supervisor saw
CPU_NOTE = "cpu-seconds.txt"  # in job/work: the CPU the worker had used when the time ran out

NAMESPACES = processes.NAMESPACES | processes.CLONE_NEWPID
PROCESS_LIMIT = 64  # counted in the child's own user namespace (RLIMIT_NPROC), or its pids cgroup (root too)


@dataclass(frozen=True)
class Limits:
    seconds: float = 60.0       # per exercise of a copy
    memory_mb: int = 1024       # address space of each process of the child; all together, where a memory cgroup can be made
    output_cap: int = 20_000    # characters of the copy's own output kept for the scorecard
    disk_mb: int = 64           # what the copy may write in its scratch folder, all files together
    files: int = 10_000         # files and folders it may make there
    namespaces: bool = True     # False: confine as on a machine that refuses user namespaces (the fallback, for tests)


def forkserver() -> multiprocessing.context.BaseContext:
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context


def available() -> str:
    """"" when a child can be confined here, else why not (the grade is then not protected: said in the scorecard)."""
    if os.environ.get(confinement.OPT_OUT) == "1":
        return f"{confinement.OPT_OUT}=1"
    if not sys.platform.startswith("linux"):
        return f"no Landlock on {sys.platform}"
    abi = landlock.landlock_abi()
    if abi < 4:
        return f"Landlock ABI {abi} (ABI 4, Linux 6.7, is needed to refuse TCP)"
    return ""


@functools.lru_cache(maxsize=None)
def namespaces_available() -> bool:
    """Whether a child may make its own user, mount, network and PID namespaces here (some distributions
    refuse unprivileged user namespaces: Ubuntu 24.04's AppArmor switch, a container's seccomp profile)."""
    pid = os.fork()
    if pid == 0:
        os._exit(0 if libc().unshare(NAMESPACES) == 0 else 1)
    return os.waitpid(pid, 0)[1] == 0


def stages_readable() -> bool:
    """Whether the reference stages sit inside a folder the child may read (a non-editable install)."""
    readable = [Path(prefix) for prefix in _python_prefixes()] + [SUPPORT_PACKAGE]
    stages = [path.parent.resolve() for path in REPO_ROOT.glob("s[0-9][0-9]/agent.py")]
    return any(folder == stage or folder in stage.parents for stage in stages for folder in readable)


def run(job: Path, limits: Limits, confine: bool) -> int:
    """Run the job in ``job`` (job/job.json says what to run, job/copy holds the package; job/work/scratch is the only writable
    folder) and return the supervisor's exit code: 0, TIMED_OUT, SIGNALLED, FAILED_EXIT, SETUP_FAILED or
    WROTE_TOO_MUCH (then job/work/over-quota.txt says what was passed)."""
    (job / "work" / SCRATCH).mkdir(exist_ok=True)
    groups = _groups(limits.memory_mb) if confine else ()
    try:
        child = forkserver().Process(target=_supervise, args=(str(job), limits.seconds, limits.memory_mb, confine,
                                                              limits.disk_mb, limits.files, limits.namespaces, groups),
                                     daemon=False)
        child.start()
        child.join(limits.seconds + 15)
        if child.is_alive():  # the supervisor itself hangs: never the copy's doing, but never wait forever
            child.kill()
            child.join()
            return TIMED_OUT
        return child.exitcode if child.exitcode is not None and child.exitcode >= 0 else SIGNALLED
    finally:
        cgroups.end_and_remove(groups)


def _groups(memory_mb: int) -> tuple[str, ...]:
    """The cgroups of the child's own: pids.max its process limit, binding root too, and all its processes
    held to ``memory_mb`` together, swap included. None where none can be made."""
    return tuple(dict.fromkeys(cgroups.groups_of_its_own(PROCESS_LIMIT, memory_mb << 20).values()))


# ---------------------------------------------------------------- the supervisor (outside the sandbox)

def _supervise(job: str, seconds: float, memory_mb: int, confine: bool, disk_mb: int = 64, files: int = 10_000,
               namespaces_allowed: bool = True, groups: tuple = ()) -> None:
    # The objects imported before the fork are left out of every garbage collection from here on: a
    # collection would walk them all and so copy every page of them into this process and the worker
    # (https://docs.python.org/3/library/gc.html#gc.freeze).
    gc.freeze()
    os.setsid()
    libc().prctl(processes.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    namespaces = False
    # Opened here, before the user namespace, with the grader's rights over the cgroup files; the worker
    # joins through them ("0": the process that writes) before it runs anything of the copy.
    joins = [os.open(os.path.join(group, "cgroup.procs"), os.O_WRONLY | os.O_CLOEXEC) for group in groups]
    if confine and namespaces_allowed:
        try:
            processes.enter_namespaces(NAMESPACES)
            namespaces = True
        except OSError:
            namespaces = False
    scratch = Path(job) / "work" / SCRATCH
    # The tmpfs's size is the bound and one more megabyte, so a copy that passes the bound is seen passing
    # it rather than stopped at it.
    quota = Quota(scratch, disk_mb, files, on_tmpfs=namespaces and mounts.mount_tmpfs(str(scratch), disk_mb + 1, files + 16))
    me = os.getpid()
    pid = os.fork()
    if pid == 0:
        try:
            for join in joins:
                os.write(join, b"0")
                os.close(join)
            _worker(Path(job), seconds, memory_mb, confine, namespaces, me)
        except BaseException as error:  # a step of the setup failed: say which, where the grader reads it
            try:
                with open(Path(job) / "work" / "setup-error.txt", "w", encoding="utf-8") as report:
                    report.write(f"{type(error).__name__}: {error}")
            except OSError:
                pass
        finally:
            os._exit(SETUP_FAILED)
    for join in joins:
        os.close(join)
    deadline = time.monotonic() + seconds
    status, over = None, ""
    while True:
        done, code, _ = os.wait4(pid, os.WNOHANG)
        if done:
            status = code
            break
        over = quota.passed()
        if over or time.monotonic() >= deadline:
            # The limit is wall time (a copy asleep in a loop must be stopped too); the CPU it used tells a
            # loop that computes from a wait, or from a machine too loaded to run it in time. Read before
            # the kill: the case's fork that was running is never reaped by the worker, so the worker's
            # own account (wait4) would leave out the very loop that ran out of time.
            spent = _cpu_seconds_below(me)
            os.kill(pid, signal.SIGKILL)
            used = os.wait4(pid, 0)[2]
            with open(Path(job) / "work" / CPU_NOTE, "w", encoding="utf-8") as note:
                note.write(f"{max(spent, used.ru_utime + used.ru_stime):.2f}")
            break
        time.sleep(0.003)
    processes.end_descendants()
    over = over or quota.passed(now=True)
    if over:
        with open(Path(job) / "work" / OVER_QUOTA_NOTE, "w", encoding="utf-8") as note:
            note.write(over)
        os._exit(WROTE_TOO_MUCH)
    if status is None:
        os._exit(TIMED_OUT)
    if os.WIFSIGNALED(status):
        os._exit(SIGNALLED)
    code = os.WEXITSTATUS(status)
    os._exit(0 if code == 0 else SETUP_FAILED if code == SETUP_FAILED else FAILED_EXIT)


@dataclass
class Quota:
    """What the copy wrote in its scratch folder, measured by the supervisor: a tmpfs answers statvfs at
    once; a folder on the disk is walked, a few times a second."""
    folder: Path
    disk_mb: int
    files: int
    on_tmpfs: bool
    next_walk: float = 0.0

    def passed(self, now: bool = False) -> str:
        """"" while within the bound; else what was passed, as the scorecard says it."""
        if self.on_tmpfs:
            found = os.statvfs(self.folder)
            used, made = (found.f_blocks - found.f_bfree) * found.f_frsize, found.f_files - found.f_ffree - 1
        elif now or time.monotonic() >= self.next_walk:
            used, made = held(self.folder, most=self.files)
            self.next_walk = time.monotonic() + 0.2
        else:
            return ""
        if used > self.disk_mb << 20:
            return f"wrote more than {self.disk_mb} MB"
        if made >= self.files:
            return f"made more than {self.files} files"
        return ""



def _cpu_seconds_below(root: int) -> float:
    """The CPU every process below ``root`` has used, the worker, the case's fork and whatever they started
    (man proc_pid_stat(5): utime, stime, and cutime, cstime for the children each has reaped already;
    a zombie still holds its own)."""
    children: dict[int, list[int]] = {}
    times: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()  # the name, in parentheses, may hold spaces
            except (OSError, IndexError):
                continue
            children.setdefault(int(fields[1]), []).append(int(name))
            times[int(name)] = sum(int(field) for field in fields[11:15])  # utime, stime, cutime, cstime
    ticks, frontier = 0, [root]
    while frontier:
        for pid in children.get(frontier.pop(), ()):
            ticks += times[pid]
            frontier.append(pid)
    return ticks / os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------- the worker (inside the sandbox)

def _worker(job: Path, seconds: float, memory_mb: int, confine: bool, namespaces: bool, supervisor: int) -> None:
    libc().prctl(processes.PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # the supervisor gone: so are we
    if os.getppid() not in (supervisor, 0):  # 0: PID 1 of a namespace, whose parent is outside it
        os._exit(SETUP_FAILED)
    copy, reports = job / "copy", job / "work"
    work = reports / SCRATCH
    order = json.loads((job / "job.json").read_text(encoding="utf-8"))
    # What the grader reads back is opened here, outside the scratch folder, where the copy cannot open it
    # again (it may write to these two descriptors, each bounded by RLIMIT_FSIZE).
    printed = os.open(reports / "printed.txt", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(printed, 1)
    os.dup2(printed, 2)
    observations = open(reports / "observations.jsonl", "w", encoding="utf-8")
    for name in os.listdir("/proc/self/fd"):
        if int(name) not in (0, 1, 2, observations.fileno()):
            try:
                os.close(int(name))
            except OSError:
                pass
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
        signal.signal(number, signal.SIG_DFL)
    (work / "tmp").mkdir(exist_ok=True)
    os.environ.clear()
    os.environ.update({"PATH": "/usr/bin:/bin", "HOME": str(work), "TMPDIR": str(work / "tmp"), "LANG": "C.UTF-8",
                       "AGENT_COURSE_RUNS_LOG": str(work / "runs.jsonl"),
                       "AGENT_COURSE_TRANSCRIPTS": str(work / "transcripts"),
                       "AGENT_COURSE_AUDIT_LOG": str(work / "audit.jsonl"), "PYTHONDONTWRITEBYTECODE": "1"})
    tempfile.tempdir = str(work / "tmp")
    os.chdir(work)
    if confine and namespaces:
        # Landlock governs opening, not a file's mode or times, which its owner (uid 0, run as root)
        # changes without opening it: in a mount namespace of the worker's own, every mount is read-only
        # but the scratch folder (course.sandbox.kernel.mounts.read_only_but), so any such change outside is refused
        # (EROFS). The supervisor keeps its namespace, where it writes its notes in job/work; the two
        # files the worker writes there were opened above, through the supervisor's mounts.
        check(libc().unshare(processes.CLONE_NEWNS), "a mount namespace of the worker's own")
        mounts.read_only_but([str(work)])
        os.chdir(work)
    limits = [(resource.RLIMIT_CPU, int(seconds) + 2), (resource.RLIMIT_FSIZE, 32 << 20), (resource.RLIMIT_CORE, 0),
              (resource.RLIMIT_NOFILE, 256), (resource.RLIMIT_AS, memory_mb << 20)]
    # RLIMIT_NPROC counts in our own user namespace only; the kernel exempts a real root (the pids cgroup binds it)
    processes.set_limits(limits + [(resource.RLIMIT_NPROC, PROCESS_LIMIT)] * namespaces, strict=False)
    if confine:
        processes.drop_bounding_set()
        check(libc().prctl(processes.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        _landlock([copy, *map(Path, order.get("readable", []))], work)
        if os.uname().machine in seccomp.SECCOMP_ARCHES:
            seccomp.install(filter_program(os.uname().machine, namespaces))
        processes.drop_capabilities()
    sys.path[:] = [str(copy)] + [entry for entry in sys.path if entry and _readable_prefix(entry)]
    sys.dont_write_bytecode = True
    from course.grading import probes as grading_probes
    extra = [_import_file(Path(path)) for path in order.get("probe_files", [])]
    if extra:  # of the instructor's files, only what their drivers use stays (the cases and judges run outside)
        grading_probes.keep_only_the_drivers(extra, order["probe_files"], order, copy, work)
    _work(order, copy, work, observations, grading_probes)
    sys.stdout.flush()
    sys.stderr.flush()
    observations.flush()
    os._exit(0)  # threads the copy left running are not waited for: their results are in


def _work(order: dict, copy: Path, work: Path, observations, probes) -> None:
    import importlib
    try:
        probes.keep_answers_out_of_reach(order, copy)  # before the import: a copy's import can run its code
        package = importlib.import_module(order["package"])
        module = importlib.import_module(f"{order['package']}.{order['module']}")
    except BaseException as error:  # the copy does not import: every case says why
        observations.write(json.dumps({"import_error": f"{type(error).__name__}: {error}"[:1000]}) + "\n")
        observations.flush()
        return
    del package
    observations.flush()
    try:
        probes.warm_up()  # made once here rather than in every case's fork
    except Exception:  # a cold start costs time, never a grade
        pass
    gc.freeze()  # what the import made is shared by the cases' forks, not walked (and so copied) by each
    confined = probes._confined()
    for index, case in enumerate(order["cases"]):
        folder = work / f"case-{index}"
        folder.mkdir()
        # Each case runs in a fork of this process made after the copy was imported, so nothing a case
        # leaves in memory (a count kept in a module, a class, a closure or a default argument) is there
        # when the next begins: a copy cannot tell its cases apart by the order they come in. What it
        # leaves on disk goes too: the fork may write in its own case folder only, which is removed before
        # the next fork begins; and it reports through a pipe of its own (no seek, no truncate), of which
        # this process keeps the first line that names the case, so no case writes another's line.
        sys.stdout.flush()
        sys.stderr.flush()
        reading, writing = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(reading)
            os.close(observations.fileno())  # the observations file is this process's to write, never a case's
            _one_case(index, case, order, module, folder, writing, probes, confined)
        os.close(writing)
        line = _line_of_case(reading, index, order.get("report_cap", 2 << 20))
        os.close(reading)
        os.waitpid(pid, 0)
        _end_what_the_case_left()
        observations.write(line)
        observations.flush()
        if not _removed(folder):  # the next case would read what this one left: the rest are not run
            return


def _line_of_case(reading: int, index: int, cap: int) -> str:
    """The first line the case's fork writes that names its own case, read from its pipe; a line that says
    the case reported too much when ``cap`` bytes came before any such line; "" when none came at all."""
    data, start = b"", 0
    too_much = json.dumps({"case": index, "too_much": True}) + "\n"
    while len(data) <= cap:
        chunk = os.read(reading, 1 << 16)
        if not chunk:
            break
        data += chunk
        while (end := data.find(b"\n", start)) >= 0:
            if end >= cap:  # a line that ends past the bound counts for nothing, whatever one read brought with it
                return too_much
            line = data[start:end]
            try:
                item = json.loads(line)
            except (ValueError, RecursionError, MemoryError):
                item = None
            start = end + 1
            if isinstance(item, dict) and type(item.get("case")) is int and item["case"] == index and "observed" in item:
                # Written again, not as it came: json.dumps's ASCII holds no raw "\r" or U+2028 for a reader
                # of lines to break at, so the line names this case and no other.
                return json.dumps({"case": index, "observed": item["observed"]}) + "\n"
    return too_much if len(data) > cap else ""


def _end_what_the_case_left() -> None:
    """What a case started and left running (a process that outlived its fork) ends before the next case
    begins. Only as PID 1 of the child's own namespace, where kill(-1) reaches every process of the namespace
    but this one (https://man7.org/linux/man-pages/man2/kill.2.html); elsewhere -1 would mean every process
    the user owns. Without a namespace such a process is left to the supervisor, and still writes nowhere
    but its case's folder, which is gone."""
    if os.getpid() != 1:
        return
    try:
        os.kill(-1, signal.SIGKILL)
    except OSError:
        pass
    try:
        while os.waitpid(-1, 0):
            pass
    except ChildProcessError:
        pass


def _removed(folder: Path) -> bool:
    """Remove a case's folder, whatever modes the case gave what it made there (a folder it made read-only
    is made writable again, as its owner may)."""
    import shutil

    def writable_again(function, path, _):
        try:
            os.chmod(os.path.dirname(path), 0o700)
            if os.path.isdir(path) and not os.path.islink(path):
                os.chmod(path, 0o700)
            function(path)
        except OSError:
            pass
    for _ in range(3):
        if sys.version_info >= (3, 12):
            shutil.rmtree(folder, onexc=writable_again)
        else:
            shutil.rmtree(folder, onerror=writable_again)
        if not os.path.lexists(folder):
            return True
    return False


def _one_case(index: int, case: dict, order: dict, module, folder: Path, report: int, probes, confined: bool) -> None:
    """In the fork of one case: drive it, write its one line to ``report`` (its pipe), and end (never
    returning to the loop)."""
    try:
        libc().prctl(processes.PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        # This fork knows its own case only: with the others' inputs in reach, a copy could answer a case from
        # the case it is drawn beside (the same calls and one round more) without doing the exercise.
        order["cases"].clear()
        try:
            _in_case_folder(folder, confined)
            found = probes.probes_for(order["stage"], case["exercise"], order.get("probe_files", []))
            observed = found[case["probe"]].drive(module, case["params"], folder)
            line = json.dumps({"case": index, "observed": observed}, ensure_ascii=False, default=repr)
        except BaseException as error:
            line = json.dumps({"case": index, "observed": ["raised", type(error).__name__, str(error)[:500]]})
        data = (line + "\n").encode("utf-8", errors="replace")
        while data:
            data = data[os.write(report, data):]
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(0)  # threads the case left running are not waited for


def _in_case_folder(folder: Path, confined: bool) -> None:
    """The case's fork lives in its folder: its home, its temporary files and the course's logs are there,
    and, confined, it can write nowhere else (one more Landlock layer, which handles what changes files
    and grants it on the folder alone: layers stack, each only taking rights away,
    https://docs.kernel.org/userspace-api/landlock.html)."""
    (folder / "tmp").mkdir(exist_ok=True)
    os.environ.update({"HOME": str(folder), "TMPDIR": str(folder / "tmp"),
                       "AGENT_COURSE_RUNS_LOG": str(folder / "runs.jsonl"),
                       "AGENT_COURSE_TRANSCRIPTS": str(folder / "transcripts"),
                       "AGENT_COURSE_AUDIT_LOG": str(folder / "audit.jsonl")})
    tempfile.tempdir = str(folder / "tmp")
    os.chdir(folder)
    if confined:
        _write_only_in(folder)


def _write_only_in(folder: Path) -> None:
    changes = landlock.handled_files(landlock.landlock_abi()) & ~(EXECUTE | READ_FILE | READ_DIR | IOCTL_DEV)
    landlock.add_layer(changes, [(str(folder), changes), ("/dev/null", WRITE_FILE)])


def _import_file(path: Path):
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"course_extra_tests_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _readable_prefix(entry: str) -> bool:
    path = Path(entry).resolve() if not entry.startswith("__editable__") else None
    if path is None:
        return True
    return any(path == prefix or prefix in path.parents for prefix in map(Path, _python_prefixes()))


def _landlock(readable: list[Path], writable: Path) -> None:
    abi = landlock.landlock_abi()
    read = EXECUTE | READ_FILE | READ_DIR
    grants = list(landlock.system_grants(read))  # not what the system keeps from other users (/etc/shadow)
    grants += [(prefix, read) for prefix in _python_prefixes()]
    grants += [(str(SUPPORT_PACKAGE), read)] + [(str(path), read) for path in readable]
    grants += [("/dev/null", READ_FILE | WRITE_FILE), ("/dev/urandom", READ_FILE)]
    grants.append((str(writable), landlock.handled_files(abi)))
    ruleset = landlock.full_ruleset(grants, abi)
    try:
        landlock.restrict_self(ruleset)
    finally:
        os.close(ruleset)
