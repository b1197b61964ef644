"""`course serve`: the offline model over real HTTP, in the Messages API's, OpenAI's and Ollama's formats.

Every test talks to a server on the loopback over a real socket (port 0: a free port), with each
API's own client where the course has one (anthropic, openai) and urllib where a loop would.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import anthropic
import pytest

from course.serve import CourseServer, start

ROOT = Path(__file__).resolve().parents[1]
TASK = "List the files and write their count and names to report.txt"
FUNCTION_TOOLS = [
    {"type": "function", "function": {"name": "list_files", "description": "List a folder.",
                                      "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "read_file", "description": "Read a file.",
                                      "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                                                     "required": ["path"]}}},
    {"type": "function", "function": {"name": "write_file", "description": "Write a file.",
                                      "parameters": {"type": "object", "required": ["path", "content"],
                                                     "properties": {"path": {"type": "string"},
                                                                    "content": {"type": "string"}}}}},
]


@pytest.fixture(scope="module")
def server():
    running = start()
    yield running
    running.shutdown()
    running.server_close()


def send(server, path: str, body=None, *, method: str = "POST", raw: bytes | None = None, headers=None):
    """(status, content type, body bytes) of one request; an HTTP error is an answer like any other."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(server.url + path, data=data, method=method,
                                     headers={"content-type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers.get("content-type", ""), response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("content-type", ""), error.read()


def chat_request(model="offline", **extra) -> dict:
    return {"model": model, "messages": [{"role": "user", "content": TASK}], "tools": FUNCTION_TOOLS, **extra}


# ---------------------------------------------------------------- the Messages API

def test_the_messages_api_answers_the_anthropic_sdk(server):
    client = anthropic.Anthropic(api_key="x", base_url=server.url, max_retries=0)
    tools = [{"name": tool["function"]["name"], "description": tool["function"]["description"],
              "input_schema": tool["function"]["parameters"]} for tool in FUNCTION_TOOLS]
    reply = client.messages.create(model="offline", max_tokens=1024, tools=tools,
                                   messages=[{"role": "user", "content": TASK}])
    assert reply.stop_reason == "tool_use"
    assert [block.name for block in reply.content if block.type == "tool_use"] == ["list_files"]
    counted = client.messages.count_tokens(model="offline", tools=tools, messages=[{"role": "user", "content": TASK}])
    assert counted.input_tokens == reply.usage.input_tokens
    assert "offline" in [model.id for model in client.models.list()]


def test_the_messages_api_answers_a_broken_history_with_its_400(server):
    client = anthropic.Anthropic(api_key="x", base_url=server.url, max_retries=0)
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.create(model="offline", max_tokens=100, messages=[
            {"role": "user", "content": TASK},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "list_files", "input": {}}]},
            {"role": "user", "content": "go on"}])
    assert caught.value.body["type"] == "error" and caught.value.body["error"]["type"] == "invalid_request_error"


@pytest.mark.parametrize("path, method, raw, status, error_type", [
    ("/v1/messages", "POST", b"{not json", 400, "invalid_request_error"),
    ("/v1/messages", "GET", None, 405, "invalid_request_error"),
    ("/v1/messages/batches", "POST", b"{}", 404, "not_found_error"),
])
def test_the_messages_api_errors_have_its_shape(server, path, method, raw, status, error_type):
    got, _, body = send(server, path, method=method, raw=raw, headers={"anthropic-version": "2023-06-01"})
    assert got == status
    assert json.loads(body)["type"] == "error" and json.loads(body)["error"]["type"] == error_type


# ---------------------------------------------------------------- OpenAI's Chat Completions

def test_chat_completions_sends_calls_with_arguments_as_a_json_string(server):
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(api_key="x", base_url=server.url + "/v1", max_retries=0)
    completion = client.chat.completions.create(**chat_request())
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    call = choice.message.tool_calls[0]
    assert call.function.name == "list_files" and isinstance(call.function.arguments, str)
    assert json.loads(call.function.arguments) == {"path": "."}
    answered = client.chat.completions.create(**chat_request(messages=[
        {"role": "user", "content": TASK},
        {"role": "assistant", "content": None, "tool_calls": [call.model_dump()]},
        {"role": "tool", "tool_call_id": call.id, "content": "a.txt\nb.txt"}]))
    assert answered.choices[0].message.tool_calls[0].function.name == "write_file"


def test_a_chat_completions_stream_is_chunks_that_add_up_to_the_reply(server):
    whole = json.loads(send(server, "/v1/chat/completions", chat_request())[2])
    status, content_type, body = send(server, "/v1/chat/completions", chat_request(stream=True))
    assert status == 200 and content_type.startswith("text/event-stream")
    events = [line[len("data: "):] for line in body.decode().splitlines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(event) for event in events[:-1]]
    assert {chunk["object"] for chunk in chunks} == {"chat.completion.chunk"}
    text = "".join(chunk["choices"][0]["delta"].get("content") or "" for chunk in chunks)
    arguments = "".join(call["function"].get("arguments", "") for chunk in chunks
                        for call in chunk["choices"][0]["delta"].get("tool_calls", []))
    assert text == whole["choices"][0]["message"]["content"]
    assert arguments == whole["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_a_call_left_without_its_tool_message_is_openais_400(server):
    request = chat_request(messages=[
        {"role": "user", "content": TASK},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "list_files", "arguments": "{}"}},
            {"id": "call_b", "type": "function", "function": {"name": "list_files", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_a", "content": "a.txt"},
        {"role": "user", "content": "go on"}])
    status, _, body = send(server, "/v1/chat/completions", request)
    error = json.loads(body)["error"]
    assert status == 400 and error["type"] == "invalid_request_error"
    assert "call_b" in error["message"] and "call_a" not in error["message"]
    assert error["param"] == "messages.[1].role"


def test_a_tool_message_answering_no_call_is_openais_400(server):
    request = chat_request(messages=[{"role": "user", "content": TASK},
                                     {"role": "tool", "tool_call_id": "call_nobody", "content": "a.txt"}])
    status, _, body = send(server, "/v1/chat/completions", request)
    assert status == 400 and json.loads(body)["error"]["param"] == "messages.[1].role"


@pytest.mark.parametrize("path, method, raw, status, code", [
    ("/v1/chat/completions", "POST", b"{not json", 400, None),
    ("/v1/chat/completions", "GET", None, 404, None),
    ("/v1/responses", "POST", b"{}", 404, None),
    ("/v1/chat/completions", "POST", json.dumps(chat_request(model="gpt-nobody")).encode(), 404, "model_not_found"),
])
def test_chat_completions_errors_have_openais_shape(server, path, method, raw, status, code):
    got, _, body = send(server, path, method=method, raw=raw)
    error = json.loads(body)["error"]
    assert got == status and set(error) == {"message", "type", "param", "code"} and error["code"] == code


# ---------------------------------------------------------------- Ollama's chat

def test_ollama_chat_streams_ndjson_unless_told_not_to(server):
    status, content_type, body = send(server, "/api/chat", chat_request())
    lines = [json.loads(line) for line in body.decode().splitlines()]
    assert status == 200 and content_type.startswith("application/x-ndjson")
    assert [line["done"] for line in lines] == [False] * (len(lines) - 1) + [True]
    calls = [call for line in lines for call in line["message"].get("tool_calls", [])]
    assert calls == [{"function": {"name": "list_files", "arguments": {"path": "."}}}]
    whole = json.loads(send(server, "/api/chat", chat_request(stream=False))[2])
    assert whole["done"] is True and whole["done_reason"] == "stop"
    assert whole["message"]["tool_calls"] == calls
    assert whole["message"]["content"] == "".join(line["message"]["content"] for line in lines)


def test_ollama_results_are_matched_to_calls_by_order(server):
    messages = [{"role": "user", "content": TASK},
                {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "list_files", "arguments": {}}}]},
                {"role": "tool", "content": "a.txt\nb.txt"}]
    reply = json.loads(send(server, "/api/chat", chat_request(messages=messages, stream=False))[2])
    assert reply["message"]["tool_calls"][0]["function"]["name"] == "write_file"
    assert "2" in reply["message"]["tool_calls"][0]["function"]["arguments"]["content"]


@pytest.mark.parametrize("path, method, raw, status", [
    ("/api/chat", "POST", b"{not json", 400),
    ("/api/chat", "POST", json.dumps(chat_request(model="qwen-nobody")).encode(), 404),
])
def test_ollama_errors_have_its_shape(server, path, method, raw, status):
    got, _, body = send(server, path, method=method, raw=raw)
    assert got == status and isinstance(json.loads(body)["error"], str)


@pytest.mark.parametrize("path, method", [("/api/chat", "GET"), ("/api/nothing", "POST")])
def test_an_unknown_ollama_route_is_its_plain_404(server, path, method):
    status, content_type, _ = send(server, path, method=method, raw=b"{}" if method == "POST" else None)
    assert status == 404 and content_type.startswith("text/plain")


# ---------------------------------------------------------------- every behaviour, every format

def reply_text_and_calls(server, api: str, model: str) -> tuple[str, list[str]]:
    if api == "anthropic":
        request = {"model": model, "max_tokens": 2048, "messages": [{"role": "user", "content": TASK}],
                   "tools": [{"name": tool["function"]["name"], "input_schema": tool["function"]["parameters"]}
                             for tool in FUNCTION_TOOLS]}
        status, _, body = send(server, "/v1/messages", request, headers={"anthropic-version": "2023-06-01"})
        reply = json.loads(body)
        return ("".join(block.get("text", "") for block in reply["content"]),
                [block["name"] for block in reply["content"] if block["type"] == "tool_use"])
    path = "/v1/chat/completions" if api == "openai" else "/api/chat"
    status, _, body = send(server, path, chat_request(model, stream=False))
    assert status == 200, body
    message = json.loads(body)["choices"][0]["message"] if api == "openai" else json.loads(body)["message"]
    return message["content"] or "", [call["function"]["name"] for call in message.get("tool_calls") or []]


@pytest.mark.parametrize("api", ["anthropic", "openai", "ollama"])
def test_the_misbehaving_models_misbehave_in_every_format(server, api):
    assert reply_text_and_calls(server, api, "offline")[1] == ["list_files"]
    text, calls = reply_text_and_calls(server, api, "offline-text-calls")
    assert calls == [] and '"name": "list_files"' in text   # a call written as text, never structured
    assert reply_text_and_calls(server, api, "offline-looping")[1] == ["list_files"]
    assert reply_text_and_calls(server, api, "offline-flood-3")[1]


def test_eight_requests_at_once_are_all_answered(server):
    results = []

    def one():
        results.append(send(server, "/v1/chat/completions", chat_request())[0])

    threads = [threading.Thread(target=one) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert results == [200] * 8


# ---------------------------------------------------------------- where it listens, and how it stops

def test_it_listens_on_the_loopback_unless_told_otherwise(server):
    assert server.server_address[0] == "127.0.0.1"
    with pytest.raises(ValueError):
        CourseServer("0.0.0.0", 0)
    refused = subprocess.run([sys.executable, "-m", "course", "serve", "--host", "0.0.0.0", "--port", "0"],
                             cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "--allow-remote" in refused.stderr


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT])
def test_the_command_answers_then_stops_cleanly_on_a_signal(how):
    process = subprocess.Popen([sys.executable, "-m", "course", "serve", "--port", "0"], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = process.stdout.readline()
        url = first.split("listening on ")[1].strip()
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(url + "/api/tags", timeout=10) as response:
            assert "offline" in [model["name"] for model in json.loads(response.read())["models"]]
        process.send_signal(how)
        out, err = process.communicate(timeout=20)
    finally:
        process.kill() if process.poll() is None else None
    assert process.returncode == 0 and "Traceback" not in err and "stopped" in out


# ---------------------------------------------------------------- course doctor, on the other formats

@pytest.mark.parametrize("api, path", [("openai", "/v1"), ("ollama", "")])
def test_the_doctor_checks_a_server_of_another_format(server, api, path):
    from course.lab import doctor
    from course.serve.wire_client import WireClient
    healthy = doctor.diagnose("offline", client=WireClient(api, server.url + path), where=api)
    assert healthy.healthy and all(check.good is not False for check in healthy.checks)
    writing = doctor.diagnose("offline-text-calls", client=WireClient(api, server.url + path), where=api)
    assert {check.name: check.good for check in writing.checks}["writes calls as text"] is False
    with pytest.raises(Exception, match="did not answer"):
        doctor.diagnose("offline-nobody", client=WireClient(api, server.url + path), where=api)


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/api/chat"])
@pytest.mark.parametrize("body", [
    {"model": "offline", "messages": [{"role": "assistant", "tool_calls": "not a list"}]},
    {"model": "offline", "messages": [{"role": "user", "content": 5}]},
    {"model": "offline", "messages": [{"role": "user", "content": "hi"}], "tools": "not a list"},
    {"model": "offline", "messages": "hi"},
    ["not", "an", "object"],
])
def test_a_request_of_the_wrong_shape_is_a_400_in_the_formats_shape(server, path, body):
    status, _, answer = send(server, path, body)
    error = json.loads(answer)["error"]
    assert status == 400
    assert isinstance(error, str) if path == "/api/chat" else set(error) == {"message", "type", "param", "code"}


@pytest.mark.parametrize("body", [
    {"model": "offline", "max_tokens": 50, "messages": [{"role": "user", "content": TASK}]},
    {"model": "offline", "max_tokens": 50, "stream": True, "messages": [{"role": "user", "content": TASK}]},
    {"model": "offline", "messages": [{"role": "user", "content": TASK}]},
])
def test_the_messages_api_answers_exactly_as_the_in_process_model(server, body):
    """Requests reach the same request -> reply function the course's client uses: its status and body,
    streamed or not, whatever rules it enforces now or later."""
    import httpx2

    from course.offline import OfflineTransport
    direct = OfflineTransport().handle(httpx2.Request("POST", "http://offline.invalid/v1/messages",
                                                      headers={"anthropic-version": "2023-06-01"}, json=body))
    status, content_type, served = send(server, "/v1/messages", body, headers={"anthropic-version": "2023-06-01"})
    assert status == direct.status_code
    assert content_type.split(";")[0] == direct.headers["content-type"].split(";")[0]
    assert served == direct.read()
