"""A confined command lives in a PID namespace of its own: it finds no process of the machine's.

Without one, a command could map which process ids exist (pidfd_open, getpriority, sched_getaffinity,
kill(pid, 0) and the like answer differently for a pid that exists) and learn of processes outside
its confinement, the harness's among them. Each probe is a small Python program run as a confined
command, with the kernel's answer asserted; where it makes the test meaningful, the same probe runs
unconfined as a control, where it finds the harness.
"""

from __future__ import annotations

import errno
import os
import shlex
import sys
import threading
import time
from pathlib import Path

import pytest

import course.sandbox.confinement as confine

pytestmark = [pytest.mark.stage("s06"),
              pytest.mark.skipif(not confine.probe().available, reason=confine.probe().reason)]

PYTHON = sys.executable

# What the kernel answers for one pid: 0, or the errno of the refusal, for each call.
ASK = """
import os, sys
def answer(call):
    try:
        call()
        return 0
    except OSError as error:
        return error.errno
for pid in map(int, sys.argv[1:]):
    print(pid, answer(lambda: os.close(os.pidfd_open(pid))), answer(lambda: os.getpriority(os.PRIO_PROCESS, pid)),
          answer(lambda: os.sched_getaffinity(pid)), answer(lambda: os.sched_getscheduler(pid)),
          answer(lambda: os.kill(pid, 0)))
"""


def ask(pids, workspace, *, confined=True) -> dict[int, tuple[int, ...]]:
    """{pid: (pidfd_open, getpriority, sched_getaffinity, sched_getscheduler, kill 0)}, each 0 or an errno."""
    command = f"{shlex.quote(PYTHON)} -I -S -c {shlex.quote(ASK)} {' '.join(map(str, pids))}"
    with pytest.MonkeyPatch.context() as patch:
        if not confined:
            patch.setenv(confine.OPT_OUT, "1")
        output = confine.run_confined(command, workspace).output
    answers = {}
    for line in output.splitlines():
        pid, *found = map(int, line.split())
        answers[pid] = tuple(found)
    assert sorted(answers) == sorted(pids), output
    return answers


def test_the_harness_is_no_process_a_command_can_find(tmp_path):
    harness = os.getpid()
    assert ask([harness], tmp_path, confined=False)[harness] == (0, 0, 0, 0, 0)  # the control: every call finds it
    # Confined, none does: no such process (kill 0 included, which Landlock's scope refused as not permitted).
    assert ask([harness], tmp_path)[harness] == (errno.ESRCH,) * 5


def test_pid_1_of_a_command_is_its_own_not_the_machines(tmp_path):
    """pid 1 exists inside too, so its CPU affinity tells them apart: the harness narrows its own (which the
    command's processes inherit) for the call, while the machine's pid 1 keeps the one it had."""
    machine = os.sched_getaffinity(1)
    if len(machine) < 2:
        pytest.skip("one CPU: no narrower affinity to tell pid 1 of the command from the machine's")
    kept = os.sched_getaffinity(0)
    narrow = {min(machine)}
    os.sched_setaffinity(0, narrow)
    try:
        probe = "import os; print(sorted(os.sched_getaffinity(1)))"
        inside = confine.run_confined(f"{shlex.quote(PYTHON)} -I -S -c {shlex.quote(probe)}", tmp_path).output
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv(confine.OPT_OUT, "1")
            outside = confine.run_confined(f"{shlex.quote(PYTHON)} -I -S -c {shlex.quote(probe)}", tmp_path).output
    finally:
        os.sched_setaffinity(0, kept)
    assert outside.strip() == str(sorted(machine)), outside  # the control: the machine's pid 1
    assert inside.strip() == str(sorted(narrow)), inside  # the command's own, which inherited the narrow one


def test_a_command_finds_no_pid_but_its_own(tmp_path):
    """Every pid up to the harness's: outside, the machine's processes answer; inside, only the command's."""
    pids = range(1, max(os.getpid(), 1000) + 1)
    code = ("import os\nfound = []\nfor pid in range(1, %d):\n    try:\n        os.close(os.pidfd_open(pid))\n"
            "        found.append(pid)\n    except OSError:\n        pass\nprint(os.getpid(), found)" % pids.stop)
    command = f"{shlex.quote(PYTHON)} -I -S -c {shlex.quote(code)}"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(confine.OPT_OUT, "1")
        outside = confine.run_confined(command, tmp_path).output
    assert str(os.getpid()) in outside.split("[", 1)[1], outside  # the control: the harness is found
    inside = confine.run_confined(command, tmp_path).output
    # The namespace's first process (1), the shell (2), the probe itself (3): nothing else.
    assert inside.strip() == "3 [1, 2, 3]", inside


def test_the_shell_is_a_small_pid_of_its_own_namespace(tmp_path):
    finished = confine.run_confined("echo $$; sh -c 'echo $PPID'", tmp_path)
    assert finished.output.split() == ["2", "2"], finished.output


def test_left_behind_processes_of_the_namespace_are_still_ended_and_counted(tmp_path):
    marker = f"{os.getpid()}{time.monotonic_ns() % 10**6}"
    command = (f"sleep 100.{marker} & echo $!; "
               f"setsid sh -c 'sleep 100.{marker} & echo $!' & wait $!; echo started")  # a double fork: the second sleep's parent ends
    finished = confine.run_confined(command, tmp_path)
    *pids, said = finished.output.split()
    try:
        assert said == "started" and all(int(pid) < 10 for pid in pids), finished.output  # pids of its namespace
        assert finished.stragglers == 2 and finished.exit_code == 0
        assert running_with(marker) == []
    finally:
        for pid in running_with(marker):
            os.kill(pid, 9)


HOLDER_PROBE = """
import ctypes, os, signal
libc = ctypes.CDLL(None, use_errno=True)
print("ptrace", libc.ptrace(16, 1, None, None), ctypes.get_errno())  # PTRACE_ATTACH to the namespace's pid 1
for number in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGCHLD, signal.SIGSTOP):
    try:
        os.kill(1, number)
    except OSError:
        pass
"""


def test_the_namespaces_pid_1_can_be_neither_traced_nor_signalled_away(tmp_path):
    """Its end would end every process of the command at once, uncounted: after every signal the command
    may send it, the namespace still stands, and a process started then is counted and ended as before."""
    marker = f"{os.getpid()}{time.monotonic_ns() % 10**6}"
    command = (f"{shlex.quote(PYTHON)} -I -S -c {shlex.quote(HOLDER_PROBE)}; "
               f"sleep 100.{marker} & echo $$ $!")
    finished = confine.run_confined(command, tmp_path)
    try:
        lines = finished.output.splitlines()
        assert lines[0] == f"ptrace -1 {errno.EPERM}", finished.output
        assert lines[1:] == ["2 4"] and finished.stragglers == 1, finished.output  # pid 4: after the probe's 3
        assert running_with(marker) == []
    finally:
        for pid in running_with(marker):
            os.kill(pid, 9)


def test_the_proc_a_command_would_see_lists_only_its_own_processes(tmp_path):
    """Landlock denies /proc to the command; were it reached, it would show the command's namespace only.
    Seen from outside, through the command's root (/proc/PID/root), while it runs."""
    marker = f"{os.getpid()}{time.monotonic_ns() % 10**6}"
    finished = []
    worker = threading.Thread(target=lambda: finished.append(confine.run_confined(f"sleep 20.{marker}", tmp_path,
                                                                                   timeout_s=20)))
    worker.start()
    try:
        deadline = time.monotonic() + 10
        while not (found := running_with(marker)) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert found, "the command did not start"
        listed = []
        while len(listed) < 3 and time.monotonic() < deadline:  # the shell may not have started sleep yet
            listed = sorted(int(name) for name in os.listdir(f"/proc/{found[0]}/root/proc") if name.isdigit())
            time.sleep(0.01)
    finally:
        for pid in running_with(marker):
            os.kill(pid, 9)
        worker.join()
    assert listed == [1, 2, 3], listed  # the holder, the shell, sleep: nothing of the machine's
    assert len([name for name in os.listdir("/proc") if name.isdigit()]) > 3  # the machine's, seen from here


def test_where_no_pid_namespace_can_be_made_the_command_does_not_start(tmp_path, monkeypatch):
    monkeypatch.setattr(confine, "CLONE_NEWPID", 1)  # no such flag: unshare fails, as where it is refused
    with pytest.raises(confine.CommandNotStarted, match="cannot create a PID namespace"):
        confine.run_confined("echo ran > ran", tmp_path)
    assert not (tmp_path / "ran").exists()


def running_with(marker: str) -> list[int]:
    """The live processes of the machine whose command line holds the marker."""
    found = []
    for name in os.listdir("/proc"):
        try:
            if name.isdigit() and marker.encode() in Path(f"/proc/{name}/cmdline").read_bytes():
                state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    found.append(int(name))
        except OSError:
            pass
    return found
