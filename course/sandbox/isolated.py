"""Calling a function where a crash cannot end the caller: in a child process forked from a small server.

s06's gate reads each command with tree-sitter-bash (course.sandbox.shell_reading), which is C, and it crashed
(a segmentation fault) on a few generated strings in this course's property tests. In the agent's own
process such a crash would end the run; in a child process it ends the child, and the gate treats the
command as one it could not read. ``call(function, argument)`` is that child process.

Forking the agent itself for every call is the simple way, and a slow one: the kernel copies the
agent's page tables, then every page that either process writes afterwards, so the cost grows with
what the caller has loaded. ``python -m course.lab.fork_bench`` measures it: a command read in a
fork of a process that has imported the SDK, and of one that has imported a test suite, against a
fork of a small server. So ``call`` keeps one small server process per module: it imports only that
module (and what the module imports), and forks a fresh child of its own for every call. Every call
still starts from the server's state just after the import, never from an earlier call's.

This is what multiprocessing's "forkserver" start method does, and Chrome's zygote. multiprocessing
is not used here because it prepares each child by importing the caller's main script again (a stage's
agent.py, and with it the SDK: a second or more per call).

The server belongs to the process that started it, and ends quietly with it: when the caller closes
the pipe (it exits, or is killed), and never on the caller's Ctrl-C. An interrupt reaches the whole
process group (a terminal's Ctrl-C; a notebook kernel is interrupted that way when it is shut down),
and it is the caller's to handle, not a reason for a second process to print a traceback.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import Any, BinaryIO, Callable

LENGTH = struct.Struct("!I")  # each message: its length, then the pickled message
TIME_LIMIT_S = 10  # for one call; reading a command takes well under a millisecond


class ChildCrashed(Exception):
    """The child ended without answering: killed by a signal (SIGSEGV from C code), exited, or was
    stopped at the time limit."""


def call(function: Callable[[Any], Any], argument: Any) -> Any:
    """``function(argument)`` run in a child process: its return value, or the exception it raised,
    raised here again. Raises ChildCrashed if the child died without an answer. ``function`` is a
    module-level function of a module with a file, and what it returns must pickle. Where the system
    cannot fork (Windows), it runs in this process."""
    if not hasattr(os, "fork"):
        return function(argument)
    kind, value = _server_for(*_where(function)).ask(function.__name__, argument)
    if kind == "raised":
        raise value
    if kind == "crashed":
        raise ChildCrashed(value)
    return value


# ---------------------------------------------------------------- the caller's side

_servers: dict[str, "_Server"] = {}
_servers_lock = threading.Lock()


def _where(function: Callable) -> tuple[str, Path]:
    """The name and file of the module holding ``function``, as the server loads it: by a name that
    does not run it as a script (``python -m course.sandbox.shell_reading`` runs that file as __main__; the
    server loads it as course.sandbox.shell_reading)."""
    module = sys.modules[function.__module__]
    name = module.__name__
    if name == "__main__":
        if module.__spec__ is None:
            raise ValueError(f"course.sandbox.isolated.call needs a function of an imported module, not of the script "
                             f"{module.__file__}: run it as python -m PACKAGE.MODULE")
        name = module.__spec__.name
    return name, Path(module.__file__).resolve()


def _server_for(name: str, path: Path) -> "_Server":
    """The server holding the module as its file is now: an edited file (a learner's, then reloaded)
    gets a new server, so a child never runs code older than the caller's."""
    version = path.stat()
    key = f"{name}@{path}"
    with _servers_lock:
        server = _servers.get(key)
        if server is None or server.version != (version.st_mtime_ns, version.st_size) or not server.alive():
            if server is not None:
                server.close()
            server = _servers[key] = _Server(name, path, (version.st_mtime_ns, version.st_size))
        return server


class _Server:
    def __init__(self, name: str, path: Path, version: tuple[int, int]):
        self.version = version
        self.lock = threading.Lock()
        # A new interpreter (not a fork of this one) running this very file's serve(), below; it then
        # takes this process's sys.path to import the module.
        start = (f"import runpy, sys; sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r}); "
                 f"runpy.run_module('course.sandbox.isolated', run_name='__main__')")
        # -I: no user site-packages (a usercustomize.py there would run here, unconfined), no PYTHON*
        # variables; the caller's sys.path comes in the first message.
        self.process = subprocess.Popen([sys.executable, "-I", "-c", start], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE)
        _send(self.process.stdin, (name, str(path), sys.path, TIME_LIMIT_S))

    def alive(self) -> bool:
        return self.process.poll() is None

    def ask(self, function_name: str, argument: Any) -> tuple[str, Any]:
        with self.lock:
            try:
                _send(self.process.stdin, (function_name, argument))
                answer = _receive(self.process.stdout)
            except (BrokenPipeError, OSError):
                answer = None
            except BaseException:  # interrupted (Ctrl-C) between a question and its answer: that answer
                self.kill()        # would be read as the next question's, so this server is done
                raise
            if answer is None:  # the server itself ended (it should not: it never runs the function)
                self.close()
                return "crashed", f"the server process ended (exit {self.process.returncode})"
            return pickle.loads(answer)

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass

    def close(self) -> None:
        for stream in (self.process.stdin, self.process.stdout):
            stream.close()  # the server reads the end of its input and leaves
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@atexit.register
def _close_servers() -> None:
    for server in _servers.values():
        server.close()
    _servers.clear()


# ---------------------------------------------------------------- the server's side

def serve(requests: BinaryIO, answers: BinaryIO) -> None:
    """Import the module named in the first message, then answer each (function, argument) message
    with a child's answer, until the input ends."""
    name, path, caller_path, time_limit_s = pickle.loads(_receive(requests))
    sys.path[:] = caller_path
    _packages_of(name, Path(path).parent)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # under the caller's name, so that what it returns unpickles there
    spec.loader.exec_module(module)
    while (request := _receive(requests)) is not None:
        function_name, argument = pickle.loads(request)
        _write(answers, _in_a_child(getattr(module, function_name), argument, time_limit_s))


def _packages_of(name: str, folder: Path) -> None:
    """The packages above ``name``, imported, or (a package the caller made, such as a student copy's
    folder) made here the same way: what the module returns is pickled by its module's full name, which
    must import in the caller and here alike."""
    parts = name.split(".")[:-1]
    for depth in range(1, len(parts) + 1):
        package = ".".join(parts[:depth])
        try:
            importlib.import_module(package)
        except ImportError:
            made = sys.modules[package] = ModuleType(package)
            made.__path__ = [str(folder)] if depth == len(parts) else []


def _in_a_child(function: Callable[[Any], Any], argument: Any, time_limit_s: float) -> bytes:
    """The pickled answer of ``function(argument)`` run in a fork of this (small) process."""
    reading_end, writing_end = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            os.close(reading_end)
            try:
                answer = _pickled("returned", function(argument))
            except Exception as error:  # a bug in Python code is raised again in the caller, as it was
                answer = _pickled("raised", error)
            with os.fdopen(writing_end, "wb") as out:
                out.write(answer)
        finally:
            os._exit(0)
    os.close(writing_end)
    answer, finished = _read_until(reading_end, time.monotonic() + time_limit_s)
    if not finished:  # a loop that never ends (a learner's code, say) must not hang the caller
        os.kill(child, signal.SIGKILL)
    _, status = os.waitpid(child, 0)
    if finished and status == 0 and answer:
        return answer
    ended = (f"stopped after {time_limit_s:g} s" if not finished
             else f"killed by {signal.Signals(os.WTERMSIG(status)).name}" if os.WIFSIGNALED(status)
             else f"exit {os.waitstatus_to_exitcode(status)}")
    return pickle.dumps(("crashed", f"the child process ended without an answer ({ended})"))


def _read_until(descriptor: int, deadline: float) -> tuple[bytes, bool]:
    """What the child wrote, and whether it closed its end before the deadline."""
    chunks = []
    try:
        while (left := deadline - time.monotonic()) > 0:
            if not select.select([descriptor], [], [], left)[0]:
                break
            chunk = os.read(descriptor, 1 << 16)
            if not chunk:
                return b"".join(chunks), True
            chunks.append(chunk)
        return b"".join(chunks), False
    finally:
        os.close(descriptor)


def _pickled(kind: str, value: Any) -> bytes:
    try:
        return pickle.dumps((kind, value))
    except Exception as error:  # e.g. an exception class the caller could not rebuild
        return pickle.dumps(("raised", RuntimeError(f"{value!r} (could not be sent back: {error})")))


def _send(stream: BinaryIO, message: Any) -> None:
    _write(stream, pickle.dumps(message))


def _write(stream: BinaryIO, data: bytes) -> None:
    stream.write(LENGTH.pack(len(data)) + data)
    stream.flush()


def _receive(stream: BinaryIO) -> bytes | None:
    """The next message's bytes, or None at the end of the stream."""
    head = stream.read(LENGTH.size)
    if len(head) < LENGTH.size:
        return None
    return stream.read(LENGTH.unpack(head)[0])


if __name__ == "__main__":
    # Ctrl-C, or a notebook kernel's interrupt, goes to the whole process group: the caller handles
    # it, and this server ends when the caller closes the pipe (SIGTERM still ends it, silently).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The messages go on the original stdout; anything the module or a child prints goes to stderr,
    # and a child reads nothing from the caller's pipe, so neither can break a message in two.
    requests, answers = os.fdopen(os.dup(0), "rb"), os.fdopen(os.dup(1), "wb")
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(2, 1)
    try:
        serve(requests, answers)
    except BrokenPipeError:  # the caller went away before an answer: nothing is left to say
        os._exit(0)
