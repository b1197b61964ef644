"""Helpers the tests share, imported as ``from helpers import ...`` (pytest puts tests/ on the path).

Fixtures and hooks stay in conftest.py; everything here is a plain function or constant.
"""

from __future__ import annotations

import os

import importlib
import importlib.util
import sys
from pathlib import Path

import pytest

import course
from course.helpers.limits import run_options
from course.offline import Reply, validate_request
from course.offline.flood import COUNT_TASK, logs

ROOT = Path(__file__).resolve().parent.parent
STAGES = sorted(path.parent.name for path in ROOT.glob("s[0-9][0-9]/agent.py"))
REPORT_TASK = "List the files and write their count and names to report.txt"
DONE = [{"type": "text", "text": "Done."}]


def load_stage(name: str):
    """A stage's agent module, e.g. load_stage("s01"); a student's copy of it instead while
    `python -m course check` grades one (it names the copy in AGENT_COURSE_STUDENT_STAGE)."""
    from course.grading.exercises import import_student_copy

    student_copy = import_student_copy(name)
    return student_copy if student_copy is not None else importlib.import_module(f"{name}.agent")


def each_stage(*stages: str) -> list:
    """Parameters for a test that runs on each of ``stages`` (default: every stage), each one marked as
    pinning its stage (``@pytest.mark.stage``): grading a stage runs its parameter on the student's copy."""
    return [pytest.param(stage, marks=pytest.mark.stage(stage), id=stage) for stage in (stages or STAGES)]


def scripted_client(*replies: list[dict] | Reply, **options):
    """A client whose model sends ``replies`` (lists of content blocks, or Replies) in order, and the
    list of the request bodies it answered. It is the offline model with a script
    (``course.make_client(behaviour=...)``): every request is validated like the real API's, and
    each reply is checked as a local server's is (course.helpers.replies: the shape every stage relies on),
    so within that shape a reply can be what a real model would never send (a tool_use input that is
    not an object, an empty tool name) and an Anthropic-compatible local server might: the harness
    must cope. ``options`` go to make_client (``faults``, ``context_window``...)."""
    queue, requests = list(replies), []

    def reply(body: dict):
        requests.append(body)
        if not queue:
            raise AssertionError(f"the script has no reply left for request {len(requests)}")
        return queue.pop(0)

    return course.make_client(behaviour=reply, max_retries=options.pop("max_retries", 0), **options), requests


def results_in(messages: list) -> list[dict]:
    """Every tool_result block of a history, in order."""
    return [block for message in messages if message["role"] == "user" and isinstance(message["content"], list)
            for block in message["content"] if block.get("type") == "tool_result"]


def assert_valid_history(messages: list) -> None:
    """The API would accept the whole history as the next request (every tool_use answered first)."""
    validate_request({"model": "offline", "max_tokens": 1, "messages": messages})


def tool_uses(source) -> list:
    """The tool_use blocks, in order, of a reply (an SDK Message: blocks are objects), a message dict, a
    list of content blocks, or a whole history (a list of message dicts; a string content has none)."""
    return [block for block in _content_blocks(source)
            if (block.get("type") if isinstance(block, dict) else getattr(block, "type", None)) == "tool_use"]


def calls_of(source) -> list[tuple]:
    """The calls of ``source`` (anything tool_uses takes), in order, as (name, input) pairs."""
    return [(block["name"], block["input"]) if isinstance(block, dict) else (block.name, block.input)
            for block in tool_uses(source)]


def _content_blocks(source) -> list:
    if isinstance(source, dict):  # a message
        return list(source["content"]) if isinstance(source.get("content"), list) else []
    if not isinstance(source, (list, tuple)):  # a reply from the SDK
        return list(source.content)
    if source and isinstance(source[0], dict) and "role" in source[0]:  # a history
        return [block for message in source for block in _content_blocks(message)]
    return list(source)  # content blocks


def run_flood(stage, workspace, files: int, *, model_files: int | None = None, window: int | None = None,
              trace=None):
    """``stage`` (a name, or its agent module) on the flood task (course.offline.flood) over ``files``
    logs written to ``workspace``, the model (offline-flood-N) told to read ``model_files`` of them
    (default: all); ``window`` is the offline model's context window (default: make_client's). The
    client is capped at 4 calls a file + 20, so a loop cannot run away, and the stage's own limits (if
    it has any) are set out of its way. Returns the stage's result, as it returns it, and the client."""
    logs(workspace, files)
    agent = load_stage(stage) if isinstance(stage, str) else stage
    model = f"offline-flood-{files if model_files is None else model_files}"
    cap = 4 * files + 20
    client = course.capped(course.make_client(model, **({} if window is None else {"context_window": window})), cap)
    options = run_options(agent.run, {"trace": trace, "runs_log": False, "max_turns": cap, "token_budget": 10**9})
    return agent.run(COUNT_TASK, client=client, model=model, workspace=workspace, **options), client


def load_hook():
    """The docs' MkDocs hook (docs/hooks/generate.py), loaded as a module of its own."""
    spec = importlib.util.spec_from_file_location("docs_hook_generate", ROOT / "docs" / "hooks" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def module_from_source(folder: Path, file_name: str, source: str, name: str | None = None):
    """A module written to ``folder/file_name.py`` and imported under ``name`` (default: file_name;
    remove it from sys.modules when done): a function with a file of its own, for course.sandbox.isolated."""
    name = name or file_name
    path = folder / f"{file_name}.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def cgroups_a_command_gets() -> set[str]:
    """The controllers (pids, memory) of which course.sandbox.confinement can make a group of a command's own
    here; the groups made to find out are removed."""
    import course.sandbox.confinement
    groups = course.sandbox.confinement._groups_of_its_own()
    for folder in set(groups.values()):
        os.rmdir(folder)
    return set(groups)
