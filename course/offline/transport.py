"""The offline model: an in-process Messages API behind the real SDK.

``make_client`` builds ``anthropic.Anthropic(http_client=httpx2.Client(transport=...))`` with the
transport below, so stage code calls ``client.messages.create`` unchanged and gets real SDK types
back (``Message``, ``ToolUseBlock``, ``BadRequestError``...). Requests are JSON in, JSON out, like
the wire protocol; nothing about a stage is known here.

What it does, in the order the real API does it:
1. optionally injects a transient fault (429, 529, 500, or a dropped connection), for reliability
   work; the SDK's own retries (2 by default) then apply;
2. validates the request (``validation.py``, then the table of ``rules.py``) and answers a violation with
   the real 400; a request for the message-threads beta gets the answer for a server that cannot thread it
   (the offline model is stateless), and the SDK then sends the full history;
3. estimates the prompt (``tokens.py``) and refuses one larger than the context window with the
   real "prompt is too long" 400;
4. asks the behaviour named by the model id (``catalog.py``) for a reply, a pure function of the
   request; a scripted client (``make_client(behaviour=...)``) asks its own function instead;
5. applies ``tool_choice``, ``disable_parallel_tool_use`` and ``stop_sequences`` to whatever the behaviour
   replied (``rules.shape_reply``), or answers ``output_config.format`` with JSON valid for its schema;
   then honours ``max_tokens``: a reply longer than that is cut and ends with ``stop_reason:
   "max_tokens"``; a tool_use that did not fit is returned with the input it had so far (none),
   as a cut real reply would be unusable too;
6. reports ``usage`` from the same estimate, split by the prompt cache (``cache.py``) into tokens
   read from the cache, tokens written to it, and the rest, as the API does. The cache belongs to
   the transport, so each client has its own.

A request with ``stream: true`` gets the same reply as server-sent events; ``GET /v1/models`` lists the
catalog's ids; every response carries a ``request-id`` header.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from typing import Callable

import httpx2

from course.offline import tokens
from course.offline.cache import PromptCache, check_breakpoints
from course.offline.behaviours import Reply
from course.offline.catalog import UnknownBehaviour, behaviour_for
from course.offline.conversation import read_request
from course.offline import context_management as managed
from course.offline.thinking import Signatures, check_config
from course.offline import rules
from course.offline.catalog import known_models
from course.offline.validation import LATEST_API_VERSION, ApiError, validate_request
from course.helpers.replies import cleaned, reply_problem

DEFAULT_CONTEXT_WINDOW = 200_000


@dataclass
class Faults:
    """Transient faults injected before a request reaches the model."""

    rate: float = 0.0
    seed: int = 0
    kinds: tuple[str, ...] = ("rate_limit", "overloaded", "api_error", "connection")


FAULT_RESPONSES = {
    # status, error type, message: the shapes documented on the API's errors page.
    "rate_limit": (429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"),
    "overloaded": (529, "overloaded_error", "Overloaded"),
    "api_error": (500, "api_error", "Internal server error"),
}


# A scripted model: the request body (model, messages, system, tools...) -> the reply's content
# blocks, or a Reply to set the stop_reason too. Its replies are not validated, as a real model's
# are not: a harness must cope with what a model sends. The requests it answers are.
Script = Callable[[dict], "list[dict] | Reply"]


class OfflineTransport(httpx2.MockTransport):
    def __init__(self, *, context_window: int = DEFAULT_CONTEXT_WINDOW, faults: Faults | None = None,
                 script: Script | None = None):
        super().__init__(self.handle)
        self.context_window = context_window
        self.faults = faults or Faults()
        self.script = script
        self._random = random.Random(self.faults.seed)
        self.prompt_cache = PromptCache()
        self.signatures = Signatures()   # the thinking blocks sent, to check the ones that come back
        self.betas: set[str] = set()      # of the request being answered: its anthropic-beta header
        self.api_version = LATEST_API_VERSION  # of the request being answered: its anthropic-version header

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        response = self._answer(request)
        # Every response of the API carries a request-id header (the SDK's ``_request_id``, which its errors print).
        # Unique within a client, and the same for the same requests in the same order: a page that quotes an
        # error stays true from one build to the next.
        self._requests += 1
        seed = b"%d %s %s " % (self._requests, request.method.encode(), request.url.path.encode()) + (request.content or b"")
        response.headers["request-id"] = f"req_offline_{hashlib.sha256(seed).hexdigest()[:24]}"
        return response

    _requests = 0  # answered by this transport

    def _answer(self, request: httpx2.Request) -> httpx2.Response:
        fault = self._maybe_fault(request)
        if fault is not None:
            return fault
        try:
            if request.method == "GET" and request.url.path.startswith("/v1/models"):
                return httpx2.Response(200, json=models_page(request.url.path, request.url.params))
            body = json.loads(request.content or b"{}")
            self.api_version = request.headers.get("anthropic-version", LATEST_API_VERSION)
            self.betas = {beta.strip() for beta in request.headers.get("anthropic-beta", "").split(",") if beta.strip()}
            if request.url.path == "/v1/messages":
                streamed = isinstance(body, dict) and bool(body.pop("stream", False))
                if streamed:  # the same reply as unstreamed, sent as events
                    message = self.create(body)
                    return httpx2.Response(200, content=server_sent_events(message),
                                           headers={"content-type": "text/event-stream"})
                return httpx2.Response(200, json=self.create(body))
            if request.url.path == "/v1/messages/count_tokens":
                return httpx2.Response(200, json=self.count_tokens(body))
            raise ApiError(404, "not_found_error", f"Not Found: {request.url.path}")
        except ApiError as error:
            return httpx2.Response(error.status, json=error.body())
        except ValueError:
            return httpx2.Response(400, json=ApiError(400, "invalid_request_error", "The request body is not valid JSON.").body())

    def _maybe_fault(self, request: httpx2.Request):
        if self.faults.rate <= 0 or self._random.random() >= self.faults.rate:
            return None
        kind = self._random.choice(self.faults.kinds)
        if kind == "connection":
            raise httpx2.ConnectError("offline model: injected connection failure", request=request)
        status, error_type, message = FAULT_RESPONSES[kind]
        # retry-after-ms keeps the SDK's backoff short offline; the real API sends retry-after.
        return httpx2.Response(status, json=ApiError(status, error_type, message).body(), headers={"retry-after-ms": "1"})

    def _check(self, body: dict, *, needs_max_tokens: bool) -> tuple[int, Script]:
        validate_request(body, needs_max_tokens=needs_max_tokens, api_version=self.api_version)
        check_config(body)
        self.signatures.check(body)
        check_breakpoints(body)
        rules.check(body)
        if body.get("thread") is not None:
            raise thread_unsupported()
        behaviour = self.script or self._behaviour_named(body["model"])
        input_tokens = tokens.request_tokens(body)
        if input_tokens > self.context_window:
            raise ApiError(400, "invalid_request_error", f"prompt is too long: {input_tokens} tokens > {self.context_window} maximum")
        return input_tokens, behaviour

    @staticmethod
    def _behaviour_named(model: str) -> Script:
        try:
            behaviour = behaviour_for(model)
        except UnknownBehaviour as error:
            raise ApiError(404, "not_found_error", f"model: {model} ({error})")
        return lambda body: behaviour(read_request(body))

    def _scripted_reply(self, body: dict) -> Reply:
        # A broken script is a 500 that says what broke: raised through the SDK, it would only be
        # "Connection error.", with the script's own message hidden in the exception's cause.
        try:
            reply = self.script(body)
        except Exception as error:
            raise ApiError(500, "api_error", f"the scripted model raised {type(error).__name__}: {error}") from error
        if isinstance(reply, Reply):
            return reply
        if not isinstance(reply, list) or not all(isinstance(block, dict) and "type" in block for block in reply):
            raise ApiError(500, "api_error", f"the scripted model returned {reply!r:.80}; return a list of content "
                                             "blocks such as [{'type': 'text', 'text': 'Done.'}], or a Reply")
        return Reply(blocks=reply)

    def count_tokens(self, body: dict) -> dict:
        input_tokens, _ = self._check(body, needs_max_tokens=False)
        return {"input_tokens": input_tokens}

    def create(self, body: dict) -> dict:
        # The API's own context management (context_management.py) edits the prompt before the model sees it.
        edits = managed.edits_of(body, self.betas)
        compacting = [edit for edit in edits if edit["type"] == "compact_20260112"]
        seen, applied, iterations, compaction = managed.after_last_compaction(body) if compacting else body, [], [], None
        for edit in edits:
            if edit["type"] == "clear_tool_uses_20250919":
                seen, done = managed.clear_tool_uses(seen, edit)
                applied += [done] if done else []
        self._check(seen, needs_max_tokens=True)
        if compacting and managed.compacts(seen, compacting[0]):
            summary = managed.summary_of(seen)
            iterations.append(dict(self.prompt_cache.usage(seen), type="compaction", output_tokens=tokens.text_tokens(summary)))
            seen, compaction = managed.compacted(seen, summary), {"type": "compaction", "content": summary}
        body = seen
        _, behaviour = self._check(body, needs_max_tokens=True)
        if compaction and compacting[0].get("pause_after_compaction"):
            reply = Reply(stop_reason="compaction")
        else:
            reply = behaviour(body) if self.script is None else self._scripted_reply(body)
        structured = structured_reply(body)
        blocks, shaped_stop, stop_sequence = rules.shape_reply(body, structured or reply.blocks, reply.stop_reason)
        if structured is None:
            reply = Reply(blocks=blocks, stop_reason=shaped_stop, stop_details=reply.stop_details)
        else:  # a refusal stays one; any other reply is the structured answer
            reply = reply if reply.stop_reason == "refusal" else Reply(blocks=blocks, stop_reason=shaped_stop)
        content, stop_reason = _cut_to(reply.blocks, body["max_tokens"])
        content = ([compaction] if compaction else []) + content
        if stop_reason is None:
            has_tool_use = any(block["type"] == "tool_use" for block in content)
            stop_reason = reply.stop_reason or ("tool_use" if has_tool_use else "end_turn")
        digest = hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
        for index, block in enumerate(content):
            if block["type"] == "tool_use" and "id" not in block:  # a script may name its own ids
                block["id"] = f"toolu_{digest[:20]}{index:02d}"
        self.signatures.sign(content, digest[:16])
        message = {
            "id": f"msg_offline_{digest[:24]}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": stop_sequence if stop_reason == "stop_sequence" else None,
            **({"stop_details": reply.stop_details} if reply.stop_details else {}),
            # A cut reply used its whole budget: the estimate of a cut tool_use (its name and "{}") can
            # exceed what was left, but the API never reports more output than max_tokens.
            "usage": dict(self.prompt_cache.usage(rules.with_automatic_caching(body)),
                          output_tokens=min(sum(map(tokens.block_tokens, content[1 if compaction else 0:])), body["max_tokens"])),
        }
        if iterations:  # the top-level usage is the answer's; the summary's step is billed beside it
            message["usage"]["iterations"] = iterations + [dict(message["usage"], type="message")]
        if edits:
            message["context_management"] = {"applied_edits": applied}
        # A script may send what a broken local server would; it meets the same check (course.helpers.replies).
        problem = reply_problem(message, body["messages"]) if self.script is not None else ""
        if problem:
            raise ApiError(502, "api_error", f"the scripted model's reply is not one the course can read: {problem}")
        return cleaned(message) if self.script is not None else message


def _cut_to(blocks: list[dict], max_tokens: int) -> tuple[list[dict], str | None]:
    """Keep the blocks that fit in max_tokens; cut the first that does not."""
    kept, budget = [], max_tokens
    for block in blocks:
        cost = tokens.block_tokens(block)
        if cost <= budget:
            kept.append(dict(block))
            budget -= cost
            continue
        if block["type"] == "text":
            cut = block["text"].encode("utf-8")[: budget * 4].decode("utf-8", errors="ignore")
            if cut:
                kept.append({"type": "text", "text": cut})
        elif block["type"] == "tool_use":
            kept.append({"type": "tool_use", "name": block["name"], "input": {}})
        return kept, "max_tokens"
    return kept, None


def thread_unsupported() -> ApiError:
    """The message-threads beta's answer when the server cannot hold a thread: the offline model is stateless, so
    it holds none. The error's ``details`` say so the way the SDK reads it (``error_code``
    ``thread_unsupported_request``), and the SDK's tool runner then sends every turn with the full history."""
    error = ApiError(400, "invalid_request_error", "This request cannot be threaded: the offline model keeps no "
                                                   "conversation between requests; send the full history.")
    error.details = {"error_code": "thread_unsupported_request", "unsupported": ["thread"]}
    return error


def structured_reply(body: dict) -> list[dict] | None:
    """Structured outputs (``output_config.format`` of type json_schema, or the beta's ``output_format``): the
    reply is one text block of JSON valid for the schema
    (https://platform.claude.com/docs/en/build-with-claude/structured-outputs)."""
    config = body.get("output_config") if isinstance(body.get("output_config"), dict) else {}
    form = config.get("format") or body.get("output_format")
    if not isinstance(form, dict) or form.get("type") != "json_schema":
        return None
    return [{"type": "text", "text": json.dumps(rules.example_of(form.get("schema") or {}), ensure_ascii=False)}]


def models_page(path: str, params) -> dict:
    """``GET /v1/models`` (the catalog's ids, newest first as the API lists them) and ``GET /v1/models/{id}``."""
    def model(model_id: str) -> dict:
        return {"type": "model", "id": model_id, "display_name": model_id, "created_at": "2026-01-01T00:00:00Z"}

    ids = [model_id for model_id in known_models()]
    if path.rstrip("/") != "/v1/models":
        wanted = path.rsplit("/", 1)[-1]
        try:
            behaviour_for(wanted)
        except UnknownBehaviour:
            raise ApiError(404, "not_found_error", f"model: {wanted}")
        return model(wanted)
    limit = int(params.get("limit") or 20)
    start = ids.index(params["after_id"]) + 1 if params.get("after_id") in ids else 0
    page = ids[start:start + limit]
    return {"data": [model(model_id) for model_id in page], "has_more": start + limit < len(ids),
            "first_id": page[0] if page else None, "last_id": page[-1] if page else None}


def server_sent_events(message: dict) -> bytes:
    """The reply as the API streams it: message_start, each block's start, deltas and stop, message_delta (with
    stop_reason and the output tokens), message_stop (https://platform.claude.com/docs/en/build-with-claude/streaming).
    Text goes in pieces of a few words, a tool's input as partial JSON."""
    def event(name: str, data: dict) -> str:
        return f"event: {name}\ndata: {json.dumps(dict(data, type=name), ensure_ascii=False)}\n\n"

    usage = message["usage"]
    start = dict(message, content=[], stop_reason=None, stop_sequence=None, usage=dict(usage, output_tokens=1))
    out = [event("message_start", {"message": start})]
    for index, block in enumerate(message["content"]):
        kind = block["type"]
        if kind == "text":
            out.append(event("content_block_start", {"index": index, "content_block": dict(block, text="")}))
            text = block["text"]
            for piece in range(0, len(text), 24):
                out.append(event("content_block_delta", {"index": index, "delta": {"type": "text_delta", "text": text[piece:piece + 24]}}))
        elif kind == "tool_use":
            out.append(event("content_block_start", {"index": index, "content_block": dict(block, input={})}))
            arguments = json.dumps(block["input"], ensure_ascii=False)
            for piece in range(0, len(arguments), 24):
                out.append(event("content_block_delta", {"index": index, "delta": {"type": "input_json_delta",
                                                                                   "partial_json": arguments[piece:piece + 24]}}))
        elif kind == "thinking":
            out.append(event("content_block_start", {"index": index, "content_block": dict(block, thinking="", signature="")}))
            out.append(event("content_block_delta", {"index": index, "delta": {"type": "thinking_delta", "thinking": block["thinking"]}}))
            out.append(event("content_block_delta", {"index": index, "delta": {"type": "signature_delta", "signature": block.get("signature", "")}}))
        else:  # blocks with no deltas of their own (redacted thinking, compaction) come whole
            out.append(event("content_block_start", {"index": index, "content_block": block}))
        out.append(event("content_block_stop", {"index": index}))
    delta = {"stop_reason": message["stop_reason"], "stop_sequence": message["stop_sequence"]}
    out.append(event("message_delta", {"delta": delta, "usage": {key: value for key, value in usage.items()
                                                                   if key != "iterations"}}))
    out.append(event("message_stop", {}))
    return "".join(out).encode()
