"""The client factory: one call returns an ``anthropic.Anthropic``, offline or real."""

from __future__ import annotations

import json
import os

import anthropic
import httpx2

from .models import CourseError, is_offline, resolve_model
from .trace import shorten
from .wire import MAX_DEPTH
from .offline import DEFAULT_CONTEXT_WINDOW, Faults, OfflineTransport, Script, UnknownBehaviour, behaviour_for

# The offline model lives at no address; the SDK needs a URL anyway, and nothing resolves this one.
OFFLINE_BASE_URL = "http://offline.invalid"


def make_client(model_id: str | None = None, *, behaviour: Script | None = None,
                context_window: int = DEFAULT_CONTEXT_WINDOW, faults: Faults | None = None,
                max_retries: int = 2) -> anthropic.Anthropic:
    """A client for ``model_id`` (see ``resolve_model``).

    An id starting with ``offline`` gets the in-process offline model (``context_window`` and
    ``faults`` configure it). Any other id gets the real API, or ``$ANTHROPIC_BASE_URL`` when set
    (Ollama >= 0.14, llama.cpp's server and other Anthropic-compatible servers).

    ``behaviour`` scripts the offline model instead, whatever the model id: a function from the
    request body (``model``, ``messages``, ``system``, ``tools``...) to the reply's content blocks,
    or to a ``course.offline.Reply`` to set its stop_reason too. Requests are validated, counted,
    cut at ``max_tokens`` and faulted exactly as for the built-in models; replies are not checked.
    """
    if behaviour is not None and not callable(behaviour):
        raise CourseError(f"behaviour= takes a function from the request body to the reply's content blocks, "
                          f"got {type(behaviour).__name__}")
    if behaviour is not None:
        return offline_client(OfflineTransport(context_window=context_window, faults=faults, script=behaviour),
                              max_retries)
    model = resolve_model(model_id)
    if is_offline(model):
        try:
            behaviour_for(model)
        except UnknownBehaviour as error:
            raise CourseError(str(error)) from None
        return offline_client(OfflineTransport(context_window=context_window, faults=faults), max_retries)
    if os.environ.get("ANTHROPIC_BASE_URL"):
        # Local servers ignore the key, but the SDK wants one.
        return anthropic.Anthropic(api_key=os.environ.get("ANTHROPIC_API_KEY") or "local", max_retries=max_retries,
                                   http_client=anthropic.DefaultHttpxClient(transport=ReadableReplies()))
    if not os.environ.get("ANTHROPIC_API_KEY"):
        raise CourseError(f"model {model!r} needs ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL for a local server); "
                          "set it, or run with --model offline")
    return anthropic.Anthropic(max_retries=max_retries)


def offline_client(transport: OfflineTransport, max_retries: int) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="offline", base_url=OFFLINE_BASE_URL,
                               http_client=httpx2.Client(transport=transport), max_retries=max_retries)


class ReadableReplies(httpx2.HTTPTransport):
    """HTTP as the SDK does it, with each JSON reply read once before the SDK reads it. A local server's
    reply that Python's JSON reader cannot take (not JSON, an integer of over 4,300 digits, arrays or
    objects nested past MAX_DEPTH) becomes a 502 that says why: the SDK would raise the reader's own
    ValueError or RecursionError, which is no anthropic.APIError, and crash the run where a stage
    expects an API error (it retries a 502, then ends the run as api_error in one line). The real API
    never sends such a reply, so its client is the SDK's own."""

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        response = super().handle_request(request)
        if not response.headers.get("content-type", "").split(";")[0].strip().lower().endswith("json"):
            return response
        try:
            depth = nesting(json.loads(response.read()))
        except (ValueError, RecursionError) as error:
            why = f"{type(error).__name__}: {shorten(str(error), 120)}"
        else:
            if depth <= MAX_DEPTH:
                return response
            why = f"arrays or objects nested {depth} deep (more than {MAX_DEPTH})"
        response.close()
        return httpx2.Response(502, request=request, json={"type": "error", "error": {
            "type": "api_error", "message": f"the server's reply is not JSON the course can read ({why})"}})


def nesting(value) -> int:
    """How deep arrays and objects are nested in ``value``, counted without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is not None:
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in children)
    return deepest
