"""Shared test setup: no network, no real credentials, fresh workspaces, stages by name."""

from __future__ import annotations

import importlib
import json
import os
import socket
import tempfile

import anthropic
import httpx2
import pytest

import course

# Tests marked `live` talk to a real API; everything else must run with the network blocked.
LIVE_KEY = os.environ.get("ANTHROPIC_API_KEY")
LOOPBACK = {"127.0.0.1", "::1", "localhost"}
_real_connect = socket.socket.connect


def _loopback_only(sock, address):
    host = address[0] if isinstance(address, tuple) else address
    if sock.family == getattr(socket, "AF_UNIX", None) or host in LOOPBACK:
        return _real_connect(sock, address)  # notebook kernels talk to the test process on loopback
    raise ConnectionRefusedError(f"tests never reach the network (tried {address!r}); mark the test `live` if it must")


def pytest_collection_modifyitems(config, items):
    skip = pytest.mark.skip(reason="live test: set ANTHROPIC_API_KEY to run it")
    for item in items:
        if "live" in item.keywords and not LIVE_KEY:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def offline_environment(request, monkeypatch, tmp_path):
    """Offline by default: no key, no model override, no base URL, no socket beyond loopback."""
    if "live" in request.keywords:
        yield
        return
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "MODEL_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENT_COURSE_RUNS_LOG", str(tmp_path / "runs.jsonl"))
    monkeypatch.setenv("AGENT_COURSE_AUDIT_LOG", str(tmp_path / "audit.jsonl"))
    monkeypatch.setattr(socket.socket, "connect", _loopback_only)
    # Fresh workspaces (course.prepare_workspace) go under this test's tmp_path, which pytest cleans,
    # instead of piling up in the system's temporary folder.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    yield


@pytest.fixture
def workspace():
    """A fresh copy of the sample workspace."""
    return course.prepare_workspace()


def load_stage(name: str):
    """A stage's agent module, e.g. load_stage("s01"); a student's copy of it instead while
    `python -m course check` grades one (it names the copy in AGENT_COURSE_STUDENT_STAGE)."""
    from course.exercises import import_student_copy

    student_copy = import_student_copy(name)
    return student_copy if student_copy is not None else importlib.import_module(f"{name}.agent")


def scripted_client(*replies: list[dict]):
    """A client whose model sends ``replies`` (lists of content blocks) in order, through the real
    SDK. Some are what a real model would never send (a tool_use input that is not an object, an
    empty tool name) and an Anthropic-compatible local server might: the harness must cope."""
    queue, requests = list(replies), []

    def handle(request):
        body = json.loads(request.content)
        requests.append(body)
        content = queue.pop(0)
        return httpx2.Response(200, json={
            "id": f"msg_scripted_{len(requests)}", "type": "message", "role": "assistant", "model": body["model"],
            "content": content, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5},
            "stop_reason": "tool_use" if any(block["type"] == "tool_use" for block in content) else "end_turn"})

    client = anthropic.Anthropic(api_key="scripted", base_url="http://scripted.invalid", max_retries=0,
                                 http_client=httpx2.Client(transport=httpx2.MockTransport(handle)))
    return client, requests
