"""A stand-in for a local model server, for tests: an offline behaviour served over HTTP on loopback.

``serving("offline-echo")`` answers the Messages API at ``http://127.0.0.1:PORT`` with that offline
model's replies, whatever model name a request gives (as llama-server does), through the offline
model's own validation. The client then goes through ``ANTHROPIC_BASE_URL`` exactly as it would to
llama.cpp or Ollama: real HTTP, a model id the course does not know.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx2

from course.offline import OfflineTransport, behaviour_for
from course.offline.conversation import read_request


@contextmanager
def serving(offline_model: str):
    behaviour = behaviour_for(offline_model)
    transport = OfflineTransport(script=lambda body: behaviour(read_request(body)))

    def answer(path: str, body: bytes) -> tuple[int, bytes, dict]:
        response = transport.handle(httpx2.Request("POST", f"http://local{path.split('?')[0]}", content=body))
        return response.status_code, response.content, {"content-type": "application/json"}

    with _server(answer) as url:
        yield url


@contextmanager
def serving_bytes(reply: Callable[[int], bytes | tuple], content_type: str | None = "application/json"):
    """A broken server: the Nth request (from 1) is answered with ``reply(N)``: bytes (sent with 200),
    or (status, bytes), or (status, bytes, headers); labelled ``content_type`` (None: no label at all)."""
    count = itertools.count(1)

    def answer(path: str, body: bytes) -> tuple[int, bytes, dict]:
        sent = reply(next(count))
        status, content, headers = (200, sent, {}) if isinstance(sent, bytes) else (*sent, {})[:3]
        return status, content, {**({"content-type": content_type} if content_type else {}), **headers}

    with _server(answer) as url:
        yield url


@contextmanager
def _server(answer: Callable[[str, bytes], tuple[int, bytes, dict]]):
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            status, content, headers = answer(self.path, self.rfile.read(int(self.headers.get("content-length", 0))))
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

        def log_message(self, *args):  # quiet: a test's output is its assertions
            pass

    with _running(Handler) as url:
        yield url


@contextmanager
def serving_slowly(body: bytes, seconds_per_byte: float):
    """A server that answers 200 with ``body`` one byte at a time, a pause before each."""
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("content-length", 0)))
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            try:
                for byte in body:
                    time.sleep(seconds_per_byte)
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
            except OSError:  # the client gave up: so does this server
                pass

        def log_message(self, *args):
            pass

    with _running(Handler) as url:
        yield url


@contextmanager
def _running(handler: type[BaseHTTPRequestHandler]):
    """A threading HTTP server on a free loopback port, stopped (within 5 ms) when the block ends."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.005}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
