"""A graded copy's child shares nothing with the machine or with another child: no System V queue, shared
memory or semaphore of the host's or of another exercise (an IPC namespace of its own, or the filter
refusing the calls where no namespace can be made); its processes are bounded even for a grader run as
root (a pids cgroup of its own); and a copy too large to be a stage is refused before the grader parses it.

The region bodies here import what they need: the regions are not checked (check_regions=False), so
that what holds is the confinement alone.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys

import pytest

from course.sandbox.kernel import seccomp
from course.grading import grade as grading, jail as grading_jail
from helpers import cgroups_a_command_gets
from test_grading import ROOT, SEED, make_copy, needs_confinement

pytestmark = pytest.mark.stage()  # these tests grade copies: they pin the grader, no stage

LIBC = ctypes.CDLL(None, use_errno=True)
IPC_CREAT, IPC_RMID, IPC_NOWAIT = 0o1000, 0, 0o4000
QUICK = grading_jail.Limits(seconds=10, disk_mb=8, files=200)
SYSV = """
    import ctypes, json, os, time
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
"""


def seen(result: grading.ExerciseResult) -> list[dict]:
    return [json.loads(line) for line in result.printed.splitlines() if line.startswith("{")]


def graded(tmp_path, stage: str, bodies: dict, limits=QUICK, jobs: int = 2) -> dict[int, grading.ExerciseResult]:
    copy = make_copy(tmp_path / "ana" / stage, stage, bodies)
    grade = grading.grade_copies([("ana", stage, copy)],
                                 grading.Options(seed=SEED, jobs=jobs, check_regions=False, limits=limits))[0]
    return {result.exercise.number: result for result in grade.results}


def key_for(tmp_path) -> int:
    return 0x5EC00000 | (os.getpid() & 0xFFFF) | (len(str(tmp_path)) << 16 & 0xF0000)


def remove_queue(key: int) -> None:
    found = LIBC.msgget(key, 0)
    if found >= 0:
        LIBC.msgctl(found, IPC_RMID, None)


@needs_confinement
def test_two_exercises_graded_at_once_cannot_pass_a_message(tmp_path):
    """Exercise 1's child puts its argument in a queue; exercise 2's child, run beside it (or after it),
    looks for it there. Each child has its own queues, gone when it ends: nothing reaches the other, and
    nothing is left on the machine."""
    key = key_for(tmp_path)
    remove_queue(key)
    send = SYSV + f"""
    queue = libc.msgget({key}, {IPC_CREAT} | 0o600)
    message = ctypes.create_string_buffer(ctypes.sizeof(ctypes.c_long) + 16)
    ctypes.c_long.from_buffer(message).value = 1
    message[ctypes.sizeof(ctypes.c_long):ctypes.sizeof(ctypes.c_long) + 5] = b"relay"
    print(json.dumps({{"sent": queue >= 0 and libc.msgsnd(queue, message, 16, {IPC_NOWAIT}) == 0}}))
    return "relay", True"""
    receive = SYSV + f"""
    got, until = "", time.monotonic() + (1 if not os.path.exists("looked") else 0)
    open("looked", "w").close()
    while not got and time.monotonic() <= until:
        queue = libc.msgget({key}, 0)
        message = ctypes.create_string_buffer(ctypes.sizeof(ctypes.c_long) + 16)
        if queue >= 0 and libc.msgrcv(queue, message, 16, 0, {IPC_NOWAIT}) > 0:
            got = message[ctypes.sizeof(ctypes.c_long):].rstrip(b"\\0").decode()
        time.sleep(0.05)
    print(json.dumps({{"received": got}}))
    return None"""
    try:
        results = graded(tmp_path, "s00", {1: send, 2: receive})
    finally:
        left = LIBC.msgget(key, 0)
        remove_queue(key)
    assert any(line.get("sent") for line in seen(results[1])), results[1].printed  # the queue was the child's own
    received = [line["received"] for line in seen(results[2])]
    assert received and not any(received), results[2].printed
    assert left < 0, "the child's queue outlived it, on the machine"


@needs_confinement
@pytest.mark.parametrize("namespaces", [True, False], ids=["own IPC namespace", "no namespaces: the filter"])
def test_a_copy_cannot_read_or_write_a_segment_of_the_machine(tmp_path, namespaces):
    """A root-owned 0600 shared-memory segment of the host: the copy, run as the same user, finds nothing
    to attach to (its own namespace has no such key), or is refused the call (no namespaces)."""
    key = key_for(tmp_path) ^ 0x1
    LIBC.shmat.restype = ctypes.c_void_p
    segment = LIBC.shmget(key, 4096, IPC_CREAT | 0o600)
    assert segment >= 0, os.strerror(ctypes.get_errno())
    address = LIBC.shmat(segment, None, 0)
    try:
        ctypes.memmove(address, b"the host's secret", 17)
        body = SYSV + f"""
    segment = libc.shmget({key}, 0, 0)
    errno_get = ctypes.get_errno()
    read = ""
    if segment >= 0:
        address = libc.shmat(segment, None, 0)
        if address not in (None, ctypes.c_void_p(-1).value):
            read = ctypes.string_at(address, 17).decode(errors="replace")
            ctypes.memmove(address, b"overwritten by me", 17)
        libc.shmctl(segment, {IPC_RMID}, None)
    print(json.dumps({{"segment": segment, "errno": errno_get, "read": read}}))
    return None"""
        limits = grading_jail.Limits(seconds=10, disk_mb=8, files=200, namespaces=namespaces)
        results = graded(tmp_path, "s00", {1: body}, limits=limits, jobs=1)
        lines = seen(results[1])
        assert lines and all(line["segment"] < 0 and not line["read"] for line in lines), results[1].printed
        if not namespaces:
            assert all(line["errno"] in (1, 13) for line in lines), lines  # refused, not merely absent
        assert ctypes.string_at(address, 17) == b"the host's secret"
        assert LIBC.shmget(key, 0, 0) == segment  # still there
    finally:
        LIBC.shmdt(ctypes.c_void_p(address))
        LIBC.shmctl(segment, IPC_RMID, None)


def test_the_filter_without_namespaces_refuses_every_sysv_and_posix_queue_call():
    """Read as data: where no namespace can be made, each System V IPC call and POSIX queue call is refused."""
    machine = os.uname().machine
    if machine not in seccomp.SECCOMP_ARCHES:
        pytest.skip(f"no filter on {machine}")
    calls = seccomp.IPC_CALLS[machine]
    assert len(calls) == 18 and len(set(calls)) == 18  # 4 queue, 4 memory, 4 semaphore, 6 POSIX queue calls
    program = seccomp.filter_program(machine, namespaces=False)
    refusals = {value for code, _, _, value in program if code == seccomp.JUMP_EQUAL}
    assert set(calls) <= refusals
    assert not set(calls) & {value for code, _, _, value in seccomp.filter_program(machine, namespaces=True)
                             if code == seccomp.JUMP_EQUAL}


@needs_confinement
def test_a_copy_run_as_root_cannot_start_more_processes_than_its_limit(tmp_path):
    if os.getuid() == 0:
        if "pids" not in cgroups_a_command_gets():
            pytest.skip("run as root and no pids cgroup can be made here: the kernel exempts root from RLIMIT_NPROC")
    body = """
    import json, os, time
    if os.path.exists("forked"):
        return None
    open("forked", "w").close()
    started = 0
    for _ in range(150):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(20)
            os._exit(0)
        started += 1
    print(json.dumps({"started": started}))
    return None"""
    results = graded(tmp_path, "s00", {1: body}, jobs=1)
    started = [line["started"] for line in seen(results[1])]
    assert started and 0 < started[0] < 64, results[1].printed


MEASURE = """
import json, resource, sys
from pathlib import Path
from course.grading import grade as grading
try:
    grading.read_copy("s03", Path(sys.argv[1]))
    said = ""
except grading.Refused as error:
    said = str(error)
print(json.dumps({"said": said, "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def test_a_copy_too_large_to_be_a_stage_is_refused_before_it_is_parsed(tmp_path):
    """A 2 MB list literal in a region: refused in one line that names the file and its size, the grader's
    memory about what reading any copy takes (it parsed such a copy in more than a gigabyte)."""
    small = make_copy(tmp_path / "small" / "s03", "s03", solved=(1,))
    huge = make_copy(tmp_path / "huge" / "s03", "s03", {1: "x = [" + "1," * 1_000_000 + "]\nreturn None"})
    size = (huge / "agent.py").stat().st_size
    assert size > 2_000_000
    measured = {}
    for name, copy in (("small", small), ("huge", huge)):
        finished = subprocess.run([sys.executable, "-c", MEASURE, str(copy)], capture_output=True, text=True,
                                  cwd=ROOT, timeout=120)
        measured[name] = json.loads(finished.stdout.strip().splitlines()[-1])
    assert measured["small"]["said"] == ""
    said = measured["huge"]["said"]
    assert "agent.py" in said and f"{size:,}" in said and "\n" not in said, said
    assert measured["huge"]["peak_kb"] < measured["small"]["peak_kb"] + 20_000, measured


def test_a_region_too_long_to_be_an_answer_is_refused(tmp_path):
    copy = make_copy(tmp_path / "long" / "s03", "s03", {1: "x = [" + "1," * 40_000 + "]\nreturn None"})
    with pytest.raises(grading.Refused, match=r"exercise 1 .*80,0\d\d characters"):
        grading.read_copy("s03", copy)


def test_a_file_swollen_outside_its_regions_is_refused_before_it_is_parsed(tmp_path):
    copy = make_copy(tmp_path / "outside" / "s03", "s03", solved=(1,))
    agent = copy / "agent.py"
    agent.write_text(agent.read_text(encoding="utf-8") + "X = [" + "1," * 60_000 + "]\n", encoding="utf-8")
    with pytest.raises(grading.Refused, match=r"agent.py was changed outside its exercise regions: 1\d\d,\d\d\d characters"):
        grading.read_copy("s03", copy)


@needs_confinement
def test_the_processes_of_a_copy_share_one_memory_bound(tmp_path):
    """Each process is held to the address space limit; all of them together to the same amount by a memory
    cgroup of the child's own: three processes of 200 MB each do not all fit in 512 MB."""
    if "memory" not in cgroups_a_command_gets():
        pytest.skip("no memory cgroup can be made here: each process is bounded, not the copy")
    body = """
    import json, os, time
    if os.path.exists("allocated"):
        return None
    open("allocated", "w").close()
    children = []
    for _ in range(3):
        pid = os.fork()
        if pid == 0:
            try:
                held = b"x" * (200 << 20)
                time.sleep(0.5)  # all three at once
            except MemoryError:
                os._exit(3)
            os._exit(0)
        children.append(pid)
    ended = [os.waitpid(pid, 0)[1] for pid in children]
    print(json.dumps({"whole": sum(status == 0 for status in ended), "killed": sum(os.WIFSIGNALED(status) for status in ended)}))
    return None"""
    limits = grading_jail.Limits(seconds=15, memory_mb=512, disk_mb=8, files=200)
    results = graded(tmp_path, "s00", {1: body}, limits=limits, jobs=1)
    lines = seen(results[1])
    assert lines and lines[0]["whole"] < 3 and lines[0]["killed"] >= 1, results[1].printed


@needs_confinement
def test_a_case_cannot_attach_to_the_worker_that_drives_the_cases(tmp_path):
    """A case's fork attaching to its parent, the worker that drives every case and writes what each
    observed, could forge the report; ptrace and the calls that read or write another process's memory
    are refused in the child."""
    body = """
    import ctypes, json, os
    libc = ctypes.CDLL(None, use_errno=True)
    attached = libc.ptrace(16, os.getppid(), None, None)  # PTRACE_ATTACH
    errno_attach = ctypes.get_errno()
    print(json.dumps({"attach": attached, "errno": errno_attach}))
    return None"""
    result = graded(tmp_path, "s00", {1: body})[1]
    reports = seen(result)
    assert reports and all(report["attach"] == -1 and report["errno"] == 13 for report in reports), result.printed
