"""The client factory: one call returns an ``anthropic.Anthropic``, offline or real."""

from __future__ import annotations

import json
import os

import anthropic
import httpx2

from .models import CourseError, is_offline, resolve_model
from .schema import first_problem
from .trace import shorten
from .wire import MAX_DEPTH, sendable
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
                                   http_client=anthropic.DefaultHttpxClient(transport=CheckedReplies()))
    if not os.environ.get("ANTHROPIC_API_KEY"):
        raise CourseError(f"model {model!r} needs ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL for a local server); "
                          "set it, or run with --model offline")
    return anthropic.Anthropic(max_retries=max_retries)


def offline_client(transport: OfflineTransport, max_retries: int) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="offline", base_url=OFFLINE_BASE_URL,
                               http_client=httpx2.Client(transport=transport), max_retries=max_retries)


# What every stage relies on in a reply (the Messages API's reference: content is a list of typed
# blocks; a text block has its text, a tool_use block its id, name and input; usage counts tokens in
# whole numbers). Only what no stage can cope with is required: an unknown block type or stop reason,
# a tool name that is not text or an input that is not an object are left to the stages, which answer
# them (tests/test_malformed_replies.py).
TOKENS = {"type": ["integer", "null"], "minimum": 0}
REPLY_SHAPE = {
    "type": "object", "required": ["content", "usage"],
    "properties": {
        "content": {"type": "array", "items": {
            "type": "object", "required": ["type"], "properties": {"type": {"type": "string"}},
            "allOf": [
                {"if": {"required": ["type"], "properties": {"type": {"const": "text"}}},
                 "then": {"required": ["text"], "properties": {"text": {"type": "string"}}}},
                {"if": {"required": ["type"], "properties": {"type": {"const": "tool_use"}}},
                 "then": {"required": ["id", "name", "input"], "properties": {"id": {"type": "string"}}}},
            ]}},
        "stop_reason": {"type": ["string", "null"]},
        "usage": {"type": "object", "required": ["input_tokens", "output_tokens"],
                  "properties": {"input_tokens": {"type": "integer", "minimum": 0},
                                 "output_tokens": {"type": "integer", "minimum": 0},
                                 "cache_creation_input_tokens": TOKENS, "cache_read_input_tokens": TOKENS}},
    },
}


class CheckedReplies(httpx2.HTTPTransport):
    """HTTP as the SDK does it, with a local server's reply to a Messages request read and checked
    before the SDK reads it. The SDK builds a reply without checking it, and raises its JSON reader's
    own ValueError or RecursionError, or hands over a string for a body that is not JSON: each crashed
    a stage deep inside, where it expects an API error (red team, rounds 3 and 4). So a reply that is not
    JSON, that Python's reader refuses (an integer of over 4,300 digits), that nests past MAX_DEPTH or
    that lacks what REPLY_SHAPE asks becomes a 502 that says why: the SDK retries it, then a stage ends
    the run as api_error in one line. A reply holding what JSON cannot carry back (NaN, a lone surrogate)
    is passed on with those replaced (course.sendable). The real API sends none of these, so its client
    is the SDK's own."""

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        response = super().handle_request(request)
        content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if (not 200 <= response.status_code < 300 or not request.url.path.endswith("/messages")
                or content_type == "text/event-stream"):
            return response
        try:
            reply = json.loads(response.read())
        except (ValueError, RecursionError) as error:
            return refused(request, response, f"not JSON ({content_type or 'no content type'}; "
                                              f"{type(error).__name__}: {shorten(str(error), 80)})")
        if nesting(reply) > MAX_DEPTH:
            return refused(request, response, f"arrays or objects nested more than {MAX_DEPTH} deep")
        problem = first_problem(REPLY_SHAPE, reply)
        if problem:
            return refused(request, response, problem)
        clean = sendable(reply)
        if clean == reply:
            return response
        response.close()
        return httpx2.Response(response.status_code, request=request, json=clean)


def refused(request: httpx2.Request, response: httpx2.Response, why: str) -> httpx2.Response:
    response.close()
    return httpx2.Response(502, request=request, json={"type": "error", "error": {
        "type": "api_error", "message": f"the server's reply is not one the course can read: {why}"}})


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
