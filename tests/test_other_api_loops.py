"""s01's closed loop on OpenAI's Chat Completions and on Ollama's chat, against the offline model over
real HTTP (`course serve` on a free port)."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

import course
from course.serve import start

ROOT = Path(__file__).resolve().parents[1]
TASK = "List the files and write their count and names to report.txt"
SAMPLE_FILES = ["config.json", "hello.txt", "memo.md", "sample.txt", "todo.md"]


def loop(name: str):
    spec = importlib.util.spec_from_file_location(f"s01_{name}", ROOT / "s01" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def server():
    running = start()
    yield running
    running.shutdown()
    running.server_close()


def broken_arguments_then_report(body: dict) -> list[dict]:
    """A model whose first call's arguments are cut-off JSON text; then it reports what it was told."""
    last = body["messages"][-1]["content"]
    results = [block for block in last if isinstance(block, dict) and block.get("type") == "tool_result"] \
        if isinstance(last, list) else []
    told = results[0]["content"] if results else (last if isinstance(last, str) and "Result of" in last else "")
    if told:
        return [{"type": "text", "text": f"The tool said: {told}"}]
    return [{"type": "tool_use", "name": "list_files", "input": '{"path": "."'}]


@pytest.fixture(scope="module")
def broken_server():
    running = start(script=broken_arguments_then_report)
    yield running
    running.shutdown()
    running.server_close()


def sample(tmp_path: Path) -> Path:
    return Path(shutil.copytree(course.SAMPLE, tmp_path / "workspace"))


def report_lists_the_sample(workspace: str) -> bool:
    report = (Path(workspace) / "report.txt").read_text(encoding="utf-8")
    return "5" in report and all(name in report for name in SAMPLE_FILES)


def every_call_answered(messages: list[dict]) -> bool:
    asked = [call["id"] for message in messages for call in message.get("tool_calls") or []]
    return asked == [message["tool_call_id"] for message in messages if message["role"] == "tool"]


# ---------------------------------------------------------------- the openai SDK

@pytest.fixture
def openai_client(server):
    openai = pytest.importorskip("openai")
    return openai.OpenAI(api_key="offline", base_url=server.url + "/v1", max_retries=0)


def test_the_openai_loop_lists_and_reports(openai_client, tmp_path):
    result = loop("openai_loop").run(TASK, client=openai_client, model="offline", workspace=sample(tmp_path))
    assert result["finish_reason"] == "stop" and result["turns"] == 3
    assert report_lists_the_sample(result["workspace"])
    assert every_call_answered(result["messages"])


def test_the_openai_loop_answers_arguments_that_are_not_json(broken_server, tmp_path):
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(api_key="offline", base_url=broken_server.url + "/v1", max_retries=0)
    result = loop("openai_loop").run(TASK, client=client, model="offline", workspace=sample(tmp_path))
    tool_messages = [message for message in result["messages"] if message["role"] == "tool"]
    assert len(tool_messages) == 1 and "not valid JSON" in tool_messages[0]["content"]
    assert "not valid JSON" in result["answer"] and result["turns"] == 2   # the model read the result, the loop went on
    assert every_call_answered(result["messages"])


def test_the_openai_loop_stops_at_its_guard_when_the_model_never_does(openai_client, tmp_path):
    result = loop("openai_loop").run(TASK, client=openai_client, model="offline-looping", workspace=sample(tmp_path),
                                     max_turns=6)
    assert result["turns"] == 6 and result["finish_reason"] == "tool_calls"
    assert every_call_answered(result["messages"])


def test_the_openai_loop_goes_offline_without_the_services_variables(monkeypatch):
    pytest.importorskip("openai")
    module = loop("openai_loop")
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL"):
        monkeypatch.delenv(name, raising=False)
    client, model, server = module.connect(None)
    try:
        assert model == "offline" and str(client.base_url) == server.url + "/v1/"
    finally:
        server.shutdown()
        server.server_close()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    client, model, server = module.connect(None)
    assert server is None and model == module.DEFAULT_REAL_MODEL and "offline" not in str(client.base_url)


# ---------------------------------------------------------------- urllib against /api/chat

def test_the_ollama_loop_lists_and_reports(server, tmp_path):
    result = loop("ollama_loop").run(TASK, host=server.url, model="offline", workspace=sample(tmp_path))
    assert result["done_reason"] == "stop" and result["turns"] == 3
    assert report_lists_the_sample(result["workspace"])
    assert [message["tool_name"] for message in result["messages"] if message["role"] == "tool"] == \
        ["list_files", "write_file"]


def test_the_ollama_loop_recovers_calls_written_as_text(server, tmp_path):
    result = loop("ollama_loop").run(TASK, host=server.url, model="offline-text-calls", workspace=sample(tmp_path))
    assert report_lists_the_sample(result["workspace"])
    assert not any(message.get("tool_calls") for message in result["messages"])   # not one structured call
    assert [message["role"] for message in result["messages"]].count("tool") == 0


def test_the_ollama_loop_answers_arguments_that_are_not_json(broken_server, tmp_path):
    result = loop("ollama_loop").run(TASK, host=broken_server.url, model="offline", workspace=sample(tmp_path))
    tool_messages = [message for message in result["messages"] if message["role"] == "tool"]
    assert len(tool_messages) == 1 and "not valid JSON" in tool_messages[0]["content"]
    assert result["turns"] == 2


@pytest.mark.parametrize("text, calls", [
    ('{"name": "list_files", "arguments": {"path": "."}}', [("list_files", {"path": "."})]),
    ('I will look first.\n\n{"name": "read_file", "arguments": {"path": "memo.md"}}', [("read_file", {"path": "memo.md"})]),
    ('```json\n{\n  "name": "list_files",\n  "arguments": {}\n}\n```', [("list_files", {})]),
    ('<tool_call>\n{"name": "list_files", "arguments": {"path": "."}}\n</tool_call>', [("list_files", {"path": "."})]),
    ('{"name": "a", "arguments": {}}\n{"name": "b", "arguments": "x" + y}', [("a", {})]),
    ("There are 5 files.", []),
    ('The config is {"debug": true}.', []),
])
def test_calls_written_as_text_are_read_in_each_shape_seen(text, calls):
    found = loop("ollama_loop").calls_in_text(text)
    assert [(call["function"]["name"], call["function"]["arguments"]) for call in found] == calls


@pytest.mark.parametrize("value, url", [
    ("0.0.0.0:11434", "http://127.0.0.1:11434"), ("http://gpu-box:11434", "http://gpu-box:11434"),
    ("localhost", "http://localhost:11434"), ("", None),
])
def test_ollama_host_is_read_as_ollama_reads_it(monkeypatch, value, url):
    monkeypatch.setenv("OLLAMA_HOST", value)
    assert loop("ollama_loop").ollama_host() == url
