"""The HTTP server: routing, the three formats' errors, a clean start and stop.

A standard-library ``ThreadingHTTPServer``: each request on a thread of its own. The offline model
keeps per-request state on its transport (the request's API version and betas) and a prompt cache,
so requests reach it one at a time, behind a lock; the model is fast, and the threads keep a slow
client from holding up the others.
"""

from __future__ import annotations

import ipaddress
import json
import signal
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx2

from course.offline import OfflineTransport, Script, UnknownBehaviour, behaviour_for, known_models
from course.serve import anthropic_format, ollama_format, openai_format

LOOPBACK = "127.0.0.1"


class CourseServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, host: str = LOOPBACK, port: int = 0, *, script: Script | None = None,
                 allow_remote: bool = False):
        if not allow_remote and not is_loopback(host):
            raise ValueError(f"{host} is not a loopback address: the offline model answers anyone who reaches "
                             "it, so binding beyond this machine needs allow_remote (--allow-remote)")
        super().__init__((host, port), Handler)
        self.transport = OfflineTransport(script=script)
        self.lock = threading.Lock()
        self.scripted = script is not None

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

    def answer(self, request: httpx2.Request) -> httpx2.Response:
        """The in-process model's response to a Messages API request, read whole."""
        with self.lock:
            response = self.transport.handle(request)
            response.read()
        return response

    def internal(self, body: dict) -> tuple[int, dict]:
        """A Messages request answered: (status, the reply or the error body)."""
        if not self.scripted:
            try:
                behaviour_for(str(body.get("model")))
            except UnknownBehaviour as error:
                return 404, {"type": "error", "error": {"type": "not_found_error", "message": f"model {body.get('model')} ({error})"}}
        request = httpx2.Request("POST", "http://offline.invalid/v1/messages",
                                 headers={"content-type": "application/json"},
                                 content=json.dumps(dict(body, stream=False)).encode())
        response = self.answer(request)
        return response.status_code, response.json()


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Handler(BaseHTTPRequestHandler):
    server: CourseServer
    server_version = "course-serve"
    protocol_version = "HTTP/1.0"   # one request a connection: a stream ends when the connection closes

    def log_message(self, format, *args):   # a quiet server: the client shows what happened
        pass

    def do_GET(self):
        self.route("GET")

    def do_POST(self):
        self.route("POST")

    def do_PUT(self):
        self.route("PUT")

    def do_DELETE(self):
        self.route("DELETE")

    def do_PATCH(self):
        self.route("PATCH")

    def route(self, method: str):
        path = self.path.split("?", 1)[0]
        try:
            if path == "/v1/models" and "anthropic-version" not in self.headers and method == "GET":
                return self.send_json(200, openai_format.models_page(known_models()))
            if path in anthropic_format.PATHS:
                return self.anthropic(method, path)
            if path.startswith("/v1/") and "anthropic-version" in self.headers:   # what only Anthropic's clients send
                return self.send_json(*anthropic_format.error(404, "not_found_error", f"Not Found: {path}"))
            if path in openai_format.PATHS or path.startswith("/v1/"):
                return self.openai(method, path)
            if path in ollama_format.PATHS or path.startswith("/api/"):
                return self.ollama(method, path)
            return self.send_bytes(404, b"404 page not found", "text/plain")
        except (BrokenPipeError, ConnectionResetError):
            pass   # the client went away; nothing is left to tell it
        except Exception as error:   # a request of a shape no rule foresaw: an answer, never a dropped connection
            message = f"the offline server could not read this request: {type(error).__name__}: {error}"
            if path.startswith("/api/"):
                return self.send_json(400, {"error": message})
            if path.startswith("/v1/") and "anthropic-version" not in self.headers and path not in anthropic_format.PATHS:
                return self.send_json(400, openai_format.OpenAIError(400, message).body())
            return self.send_json(*anthropic_format.error(400, "invalid_request_error", message))

    def read_body(self) -> bytes:
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def send_bytes(self, status: int, content: bytes, content_type: str, headers: dict | None = None):
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(content)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(content)

    def send_json(self, status: int, body, headers: dict | None = None):
        self.send_bytes(status, json.dumps(body, ensure_ascii=False).encode(), "application/json", headers)

    def send_stream(self, lines, content_type: str):
        self.send_response(200)
        self.send_header("content-type", content_type)
        self.send_header("cache-control", "no-cache")
        self.end_headers()
        for line in lines:
            self.wfile.write(line)
            self.wfile.flush()

    # ---------------------------------------------------------------- the three formats

    def anthropic(self, method: str, path: str):
        if anthropic_format.PATHS[path] != method:
            return self.send_json(*anthropic_format.error(405, "invalid_request_error", f"Method Not Allowed: {method} {path}"))
        headers = {name.lower(): value for name, value in self.headers.items()
                   if name.lower() in ("content-type", "anthropic-version", "anthropic-beta")}
        answered = anthropic_format.forward(self.server.answer, method, path, headers, self.read_body())
        if isinstance(answered, tuple):
            return self.send_json(*answered)
        content_type = answered.headers.get("content-type", "application/json")
        extra = {name: value for name, value in answered.headers.items()
                 if name.lower() in ("request-id", "retry-after", "retry-after-ms", "anthropic-ratelimit-requests-limit")}
        self.send_bytes(answered.status_code, answered.content, content_type, extra)

    def openai(self, method: str, path: str):
        if openai_format.PATHS.get(path) != method:
            error = openai_format.no_such_path(method, path)
            return self.send_json(error.status, error.body())
        try:
            try:
                body = json.loads(self.read_body() or b"null")
            except ValueError:
                raise openai_format.not_json() from None
            internal = openai_format.to_internal(body)
            status, reply = self.server.internal(internal)
            if status != 200:
                raise openai_format.from_internal_error(status, reply)
        except openai_format.OpenAIError as error:
            return self.send_json(error.status, error.body())
        completion = openai_format.from_internal(reply)
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            return self.send_stream(openai_format.stream_events(completion, include_usage), "text/event-stream")
        self.send_json(200, completion)

    def ollama(self, method: str, path: str):
        if ollama_format.PATHS.get(path) != method:
            return self.send_bytes(404, b"404 page not found", "text/plain")
        if path == "/":
            return self.send_bytes(200, b"Ollama is running", "text/plain")
        if path == "/api/tags":
            return self.send_json(200, ollama_format.tags_page(known_models()))
        if path == "/api/version":
            return self.send_json(200, {"version": "0.0.0-course"})
        started = time.monotonic()
        try:
            try:
                body = json.loads(self.read_body() or b"null")
            except ValueError as error:
                raise ollama_format.OllamaError(400, f"invalid JSON: {error}") from None
            status, reply = self.server.internal(ollama_format.to_internal(body))
            if status != 200:
                raise ollama_format.from_internal_error(status, reply)
        except ollama_format.OllamaError as error:
            return self.send_json(error.status, error.body())
        final = ollama_format.from_internal(reply, started)
        if body.get("stream", True):
            return self.send_stream(ollama_format.stream_lines(final), "application/x-ndjson")
        self.send_json(200, final)


def start(port: int = 0, host: str = LOOPBACK, *, script: Script | None = None,
          allow_remote: bool = False) -> CourseServer:
    """A server answering on a thread of its own; ``server.shutdown()`` and ``server_close()`` end it."""
    server = CourseServer(host, port, script=script, allow_remote=allow_remote)
    threading.Thread(target=server.serve_forever, name="course-serve", daemon=True).start()
    return server


def serve_command(port: int, host: str, allow_remote: bool) -> int:
    """``course serve``: answer until Ctrl-C or SIGTERM, then close the socket and exit 0."""
    server = CourseServer(host, port, allow_remote=allow_remote)

    def stop(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    print(f"course serve: listening on {server.url}", flush=True)
    print(f"  Anthropic  {server.url}/v1/messages        (ANTHROPIC_BASE_URL={server.url})", flush=True)
    print(f"  OpenAI     {server.url}/v1/chat/completions (OPENAI_BASE_URL={server.url}/v1)", flush=True)
    print(f"  Ollama     {server.url}/api/chat           (OLLAMA_HOST={server.url})", flush=True)
    print("  model ids: python -m course models; Ctrl-C stops it", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    print("course serve: stopped", flush=True)
    return 0
