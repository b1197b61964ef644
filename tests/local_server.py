"""A stand-in for a local model server, for tests: an offline behaviour served over HTTP on loopback.

``serving("offline-echo")`` answers the Messages API at ``http://127.0.0.1:PORT`` with that offline
model's replies, whatever model name a request gives (as llama-server does), through the offline
model's own validation. The client then goes through ``ANTHROPIC_BASE_URL`` exactly as it would to
llama.cpp or Ollama: real HTTP, a model id the course does not know.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx2

from course.offline import OfflineTransport, behaviour_for
from course.offline.conversation import read_request


@contextmanager
def serving(offline_model: str):
    behaviour = behaviour_for(offline_model)
    transport = OfflineTransport(script=lambda body: behaviour(read_request(body)))

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            response = transport.handle(httpx2.Request("POST", f"http://local{self.path.split('?')[0]}", content=body))
            self.send_response(response.status_code)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(response.content)))
            self.end_headers()
            self.wfile.write(response.content)

        def log_message(self, *args):  # quiet: a test's output is its assertions
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
