"""Fixtures and hooks: no network, no real credentials, fresh workspaces. Shared helpers are in helpers.py."""

from __future__ import annotations

import functools
import inspect
import os
import re
import socket
import tempfile


import pytest
from hypothesis import settings

import course
import course.runtime.schema  # before nbformat imports jsonschema: it keeps rfc3987-syntax out (1 s; see there)
from helpers import STAGES, load_stage

# The suite is deterministic: property tests draw the same examples on every run (CI and a clean
# clone see what the developer saw). To explore new examples, as an attacker would, run with
# HYPOTHESIS_PROFILE=explore (random draws, ten times as many), e.g. on tests/test_s06_commands_read_as_the_shell_does.py.
settings.register_profile("course", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False, max_examples=1000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "course"))

# Tests marked `live` talk to a real API, and tests marked `live_local` to the local server at
# $ANTHROPIC_BASE_URL; everything else must run with the network blocked.
LIVE_KEY = os.environ.get("ANTHROPIC_API_KEY")
LOCAL_SERVER = os.environ.get("ANTHROPIC_BASE_URL")
LOOPBACK = {"127.0.0.1", "::1", "localhost"}
_real_connect = socket.socket.connect


def _loopback_only(sock, address):
    host = address[0] if isinstance(address, tuple) else address
    if sock.family == getattr(socket, "AF_UNIX", None) or host in LOOPBACK:
        return _real_connect(sock, address)  # notebook kernels talk to the test process on loopback
    raise ConnectionRefusedError(f"tests never reach the network (tried {address!r}); mark the test `live` if it must")


# The files that take longest, started first: the suite's two workers take whole files (--dist loadfile,
# so that a module's one site build or class grading is made once), and a long file begun last would
# leave one worker running it alone while the other has nothing left to do.
LONGEST_FIRST = ("test_docs.py", "test_grading.py", "test_notebooks.py", "test_command_line.py",
                 "test_s06_commands_read_as_the_shell_does.py")


def _started_first(item) -> int:
    name = item.path.name
    return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)


def pytest_collection_modifyitems(config, items):
    items.sort(key=_started_first)  # a stable sort: each file's tests keep their order
    skip = pytest.mark.skip(reason="live test: set ANTHROPIC_API_KEY to run it")
    skip_local = pytest.mark.skip(reason="live local test: set ANTHROPIC_BASE_URL and MODEL_ID to run it")
    for item in items:
        if "live" in item.keywords and not LIVE_KEY:
            item.add_marker(skip)
        if "live_local" in item.keywords and not LOCAL_SERVER:
            item.add_marker(skip_local)
        problem = pinning_problem(item)
        if problem:
            PINNING_PROBLEMS[item.nodeid] = problem


# Which stages a test pins is declared with @pytest.mark.stage(...) (on the test, its parameter, or the
# module's pytestmark; the closest one counts; an empty one pins none), and grading a stage runs exactly
# the tests that pin it
# (course.grading.exercises). A test may load a stage it does not pin (to compare s03 with s04, say), so the
# declaration is checked against what each test's own code loads (load_stage("s03"), load_stage(<a
# parameter>), a stage fixture such as `s04`): a test that loads a stage and declares none, or declares
# one it does not load, is recorded here, and tests/test_stage_files.py fails naming it.
PINNING_PROBLEMS: dict[str, str] = {}
STAGE_NAMES = set(STAGES)
# helpers.load_stage (a student's copy while one is graded), not course.lab.ladder's or course.lab.bench's.
LITERAL_LOAD = re.compile(r"(?<![.\w])load_stage\(\s*[\"'](s\d\d)[\"']\s*\)")
NAMED_LOAD = re.compile(r"(?<![.\w])load_stage\(\s*([A-Za-z_]\w*)\s*\)")


def pinning_problem(item) -> str:
    loaded, pinned = stages_loaded_by(item), pinned_stages(item)
    if loaded and item.get_closest_marker("stage") is None:
        return (f"loads {', '.join(sorted(loaded))} but does not say what it pins: add @pytest.mark.stage(...), "
                "or @pytest.mark.stage() for a test that only drives a stage (the offline model's tests)")
    if loaded and not pinned <= loaded:
        return f"pins {', '.join(sorted(pinned - loaded))}, which it does not load"
    return ""


def pinned_stages(item) -> set[str]:
    marker = item.get_closest_marker("stage")
    return set(marker.args) if marker else set()


def stages_loaded_by(item) -> set[str]:
    function = getattr(item, "function", None)
    if function is None:
        return set()
    source = source_of(function)
    loaded = set(LITERAL_LOAD.findall(source)) | {name for name in item.fixturenames if name in STAGE_NAMES}
    parameters = getattr(getattr(item, "callspec", None), "params", {})
    loaded |= {parameters[name] for name in NAMED_LOAD.findall(source) if parameters.get(name) in STAGE_NAMES}
    return loaded


@functools.lru_cache(maxsize=None)  # a parametrized test is one function for all its cases
def source_of(function) -> str:
    try:
        return inspect.getsource(function)
    except (OSError, TypeError):
        return ""


@pytest.fixture(scope="session", autouse=True)
def temporary_files_stay_in_pytests_folder(tmp_path_factory):
    """What the code under test puts in the system's temporary folder (workspaces, a notebook's folders,
    confinement's stand-ins), in this process and in every process it starts (TMPDIR), goes under
    pytest's own temporary folder, which pytest prunes to the last three runs: a run leaves nothing in
    /tmp. (Thousands of folders left there by earlier runs had made creating a file in a new folder of
    /tmp ten times slower on the course's machine: ext4 spreads new top-level folders thin.)"""
    folder = str(tmp_path_factory.mktemp("tmp", numbered=False))
    saved = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"], tempfile.tempdir = folder, folder
    yield
    if saved[0] is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = saved[0]
    tempfile.tempdir = saved[1]


@pytest.fixture(autouse=True)
def offline_environment(request, monkeypatch, tmp_path):
    """Offline by default: no key, no model override, no base URL, no socket beyond loopback."""
    if "live" in request.keywords or "live_local" in request.keywords:
        yield
        return
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "MODEL_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENT_COURSE_RUNS_LOG", str(tmp_path / "runs.jsonl"))
    monkeypatch.setenv("AGENT_COURSE_AUDIT_LOG", str(tmp_path / "audit.jsonl"))
    monkeypatch.setenv("AGENT_COURSE_TRANSCRIPTS", str(tmp_path / "transcripts"))
    monkeypatch.setattr(socket.socket, "connect", _loopback_only)
    # Fresh workspaces (course.prepare_workspace) go under this test's own tmp_path, in this process
    # and in the processes it starts.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    yield


@pytest.fixture
def confined():
    """What course.sandbox.confinement found on this machine; the test is skipped, saying why, where it cannot confine."""
    import course.sandbox.confinement
    found = course.sandbox.confinement.probe()
    if not found.available:
        pytest.skip(found.reason)
    return found


@pytest.fixture
def workspace():
    """A fresh copy of the sample workspace."""
    return course.prepare_workspace()


def stage_fixture(stage: str):
    @pytest.fixture(name=stage)
    def loaded():
        """The stage's agent module (a student's copy while `python -m course check` grades one)."""
        return load_stage(stage)

    return loaded


# A fixture per stage, named after it: a test that takes `s04` gets s04's agent module (and pins s04).
for _stage in STAGES:
    globals()[_stage] = stage_fixture(_stage)
