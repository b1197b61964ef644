"""course.sandbox.isolated: a function runs in a fresh child of a small server; a crash there is an answer here.

s06's gate reads every command this way, in course.sandbox.shell_reading (tree-sitter-bash is C, and it can
crash). These tests use modules written for the purpose, so that each behaviour is shown by the real thing: a real SIGSEGV,
a real exit, a real exception, a real edit of the module's file.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import types

import pytest

from course.sandbox import isolated
from helpers import module_from_source

SOURCE = '''
import os
import signal

calls = 0


def pid_and_calls(argument):
    global calls
    calls += 1
    return os.getpid(), calls, argument


def crash(argument):
    os.kill(os.getpid(), signal.SIGSEGV)


def loop(argument):
    while True:
        pass


def leave(code):
    os._exit(code)


def refuse(argument):
    raise NotImplementedError(f"exercise 2: {argument}")


def unsendable(argument):
    return lambda: argument


def version(argument):
    return "first"


def chatty(argument):
    print("a line on stdout, as a module may print")
    return input() if argument == "read stdin" else argument
'''


@pytest.fixture
def module(tmp_path, request):
    name = f"isolated_sample_{request.node.name.replace('[', '_').replace(']', '')}"
    yield module_from_source(tmp_path, name, SOURCE)
    sys.modules.pop(name, None)


def test_each_call_runs_in_a_fresh_child_and_returns_what_the_function_returns(module):
    answers = [isolated.call(module.pid_and_calls, {"n": n}) for n in range(3)]
    pids = [pid for pid, _, _ in answers]
    assert os.getpid() not in pids and len(set(pids)) == 3  # another process, a new one every call
    assert [calls for _, calls, _ in answers] == [1, 1, 1]  # no call sees an earlier call's state
    assert [argument for _, _, argument in answers] == [{"n": 0}, {"n": 1}, {"n": 2}]
    assert module.calls == 0  # nor does it change this process


def test_a_segmentation_fault_is_a_crash_answer_and_the_next_call_still_works(module):
    with pytest.raises(isolated.ChildCrashed, match="killed by SIGSEGV"):
        isolated.call(module.crash, "x")
    assert isolated.call(module.pid_and_calls, "after")[2] == "after"


def test_a_child_that_exits_without_an_answer_is_a_crash_answer(module):
    with pytest.raises(isolated.ChildCrashed, match=r"exit 3\)"):
        isolated.call(module.leave, 3)


def test_a_child_that_never_finishes_is_stopped_at_the_time_limit(module, monkeypatch):
    monkeypatch.setattr(isolated, "TIME_LIMIT_S", 0.5)  # given to this module's server when it starts, below
    started = time.monotonic()
    with pytest.raises(isolated.ChildCrashed, match=r"stopped after 0.5 s"):
        isolated.call(module.loop, None)
    assert time.monotonic() - started < 5
    assert isolated.call(module.pid_and_calls, "next")[2] == "next"


def test_an_exception_is_raised_again_here_as_it_was(module):
    with pytest.raises(NotImplementedError, match="^exercise 2: see the chapter$"):
        isolated.call(module.refuse, "see the chapter")


def test_an_answer_that_cannot_be_sent_back_is_an_error_that_says_so(module):
    with pytest.raises(RuntimeError, match="could not be sent back"):
        isolated.call(module.unsendable, 1)


def test_what_the_module_prints_or_reads_does_not_break_the_messages(module):
    assert isolated.call(module.chatty, "said") == "said"
    with pytest.raises(EOFError):  # its stdin is empty, not the caller's pipe
        isolated.call(module.chatty, "read stdin")
    assert isolated.call(module.chatty, "still said") == "still said"


def test_an_edited_module_file_is_run_as_it_now_is(module):
    assert isolated.call(module.version, None) == "first"
    path = module.__file__
    source = open(path, encoding="utf-8").read().replace('return "first"', 'return "second"')
    time.sleep(0.01)  # a new modification time, even on a coarse clock
    with open(path, "w", encoding="utf-8") as edited:
        edited.write(source + "\n")  # a new size too
    assert isolated.call(module.version, None) == "second"


def test_a_server_that_was_killed_is_started_again(module):
    isolated.call(module.pid_and_calls, 0)
    for server in list(isolated._servers.values()):
        server.process.kill()
        server.process.wait()
    assert isolated.call(module.pid_and_calls, "again")[2] == "again"


def test_a_module_of_a_package_only_the_caller_has_sends_its_own_classes_back(tmp_path, monkeypatch):
    # As a student copy is loaded (course.grading.exercises): a package made of a folder, in this process only.
    (tmp_path / "copy").mkdir()
    package = types.ModuleType("a_copy_made_here")
    package.__path__ = [str(tmp_path / "copy")]
    monkeypatch.setitem(sys.modules, "a_copy_made_here", package)
    module = module_from_source(tmp_path / "copy", "reader", "from dataclasses import dataclass\n\n"
                                "@dataclass\nclass Reading:\n    words: list\n\n"
                                "def read_here(command):\n    return Reading(command.split())\n",
                                name="a_copy_made_here.reader")
    try:
        assert isolated.call(module.read_here, "ls -l") == module.Reading(["ls", "-l"])
    finally:
        del sys.modules["a_copy_made_here.reader"]


SCRIPT = """
from pathlib import Path
from course.sandbox import isolated


def double(x):
    return 2 * x


if __name__ == "__main__":
    with open(Path(__file__).with_name("main-ran.txt"), "a") as ran:
        ran.write("ran\\n")
    print(isolated.call(double, 21))
"""


def test_a_function_of_the_main_module_runs_without_running_the_script_again(tmp_path):
    (tmp_path / "doubling.py").write_text(SCRIPT, encoding="utf-8")
    run_as_module = subprocess.run([sys.executable, "-m", "doubling"], cwd=tmp_path, capture_output=True, text=True)
    assert run_as_module.stdout == "42\n", run_as_module.stderr
    assert (tmp_path / "main-ran.txt").read_text() == "ran\n"  # in the caller only, not in the server
    run_as_file = subprocess.run([sys.executable, "doubling.py"], cwd=tmp_path, capture_output=True, text=True)
    assert "ValueError: course.sandbox.isolated.call needs a function of an imported module" in run_as_file.stderr
    assert "run it as python -m PACKAGE.MODULE" in run_as_file.stderr


def test_importing_the_course_package_leaves_the_sdk_out_so_a_server_stays_small():
    imported = subprocess.run([sys.executable, "-c", "import sys, course, course.sandbox.isolated; "
                               "print(sorted({'anthropic', 'jsonschema', 'httpx2'} & set(sys.modules)))"],
                              capture_output=True, text=True, check=True)
    assert imported.stdout.strip() == "[]"


# ---------------------------------------------------------------- shutting down quietly

# A process that reads commands the way s06 does, then waits to be ended, as a notebook kernel does: an
# interrupt (SIGINT to the whole process group, which is how a kernel is interrupted, and shut down) is
# not an exit for it; it ends when it is told to, or is terminated.
KERNEL_LIKE = """
import signal, sys, time
import course.sandbox.shell_reading

interrupted = []
signal.signal(signal.SIGINT, lambda *frame: interrupted.append(True))
print(course.sandbox.shell_reading.read_command("ls -l").commands, flush=True)
while not interrupted:
    time.sleep(0.01)
time.sleep(0.3)  # the server has had the interrupt too, and time to print whatever it would print
print(course.sandbox.shell_reading.read_command("wc -l memo.md").commands, flush=True)  # and it still answers
"""


@pytest.mark.parametrize("ending", ["interrupted, then exits", "terminated"])
def test_the_server_ends_quietly_with_its_caller_when_the_group_is_interrupted_or_terminated(ending):
    root = os.path.dirname(os.path.dirname(os.path.abspath(isolated.__file__)))
    caller = subprocess.Popen([sys.executable, "-c", KERNEL_LIKE], cwd=root, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert caller.stdout.readline() == "[['ls', '-l']]\n"
        os.killpg(caller.pid, signal.SIGINT if ending == "interrupted, then exits" else signal.SIGTERM)
        out, err = caller.communicate(timeout=20)
    finally:
        if caller.poll() is None:
            os.killpg(caller.pid, signal.SIGKILL)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err and "BrokenPipe" not in err, err
    if ending == "interrupted, then exits":
        assert caller.returncode == 0 and out == "[['wc', '-l', 'memo.md']]\n", err
    time.sleep(0.2)
    assert not group_alive(caller.pid), "a server outlived its caller"


def group_alive(group: int) -> bool:
    """Whether a process of the group still runs: an ended one left unreaped (a zombie, in a container
    whose first process reaps none) does not count."""
    if not os.path.isdir("/proc"):
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return False
        return True
    for entry in os.listdir("/proc"):
        try:
            state, _, _, pgid = open(f"/proc/{entry}/stat").read().rpartition(")")[2].split()[:4]
        except (OSError, ValueError):
            continue
        if int(pgid) == group and state != "Z":
            return True
    return False


def test_a_call_interrupted_before_its_answer_never_hands_that_answer_to_the_next_call(module, monkeypatch):
    assert isolated.call(module.pid_and_calls, "warm up")[2] == "warm up"
    real_receive = isolated._receive

    def interrupted(stream):
        monkeypatch.setattr(isolated, "_receive", real_receive)  # only the first answer is missed
        raise KeyboardInterrupt

    monkeypatch.setattr(isolated, "_receive", interrupted)
    with pytest.raises(KeyboardInterrupt):
        isolated.call(module.pid_and_calls, "first")  # its answer is left unread in the pipe
    assert isolated.call(module.pid_and_calls, "second")[2] == "second"
