"""The client factory: one call returns an ``anthropic.Anthropic``, offline or real."""

from __future__ import annotations

import json
import os
import time
import warnings

import anthropic
import httpx2

from course.runtime.models import CourseError, is_offline, refuses_thinking_budget, resolve_model
from course.helpers.replies import cleaned, reply_problem, request_body
from course.runtime.trace import shorten
from course.offline import DEFAULT_CONTEXT_WINDOW, Faults, OfflineTransport, Script, UnknownBehaviour, behaviour_for, known_models

# The SDK reads a block of a type it does not know (a compaction block, a type newer than the SDK) as
# a text block that keeps every field, and pydantic warns when such a block is dumped to be recorded.
# The dump is the block exactly as it came (tests/test_stop_reasons.py pins it): the warning would
# only print a page of internals in the middle of a run.
warnings.filterwarnings("ignore", message="Pydantic serializer warnings", category=UserWarning)

# The offline model lives at no address; the SDK needs a URL anyway, and nothing resolves this one.
OFFLINE_BASE_URL = "http://offline.invalid"


def make_client(model_id: str | None = None, *, behaviour: Script | None = None,
                context_window: int = DEFAULT_CONTEXT_WINDOW, faults: Faults | None = None,
                max_retries: int = 2, thinking: int | str | None = None) -> anthropic.Anthropic:
    """A client for ``model_id`` (see ``resolve_model``).

    An id starting with ``offline`` gets the in-process offline model (``context_window`` and
    ``faults`` configure it). Any other id gets the real API, or ``$ANTHROPIC_BASE_URL`` when set
    (Ollama >= 0.14, llama.cpp's server and other Anthropic-compatible servers).

    ``behaviour`` scripts the offline model instead, whatever the model id: a function from the
    request body (``model``, ``messages``, ``system``, ``tools``...) to the reply's content blocks,
    or to a ``course.offline.Reply`` to set its stop_reason too. Requests are validated, counted,
    cut at ``max_tokens`` and faulted exactly as for the built-in models; a reply is checked as a local
    server's is (course.helpers.replies), and one no stage could take is a 502 that says why.

    ``thinking`` (``"adaptive"``, or a budget of tokens, at least 1,024, for a model that still takes
    one) turns thinking on for every request the client sends (``WithThinking``).
    """
    if thinking is not None:
        model = resolve_model(model_id) if behaviour is None else "scripted"
        if thinking != "adaptive" and refuses_thinking_budget(model):
            raise CourseError(f"{model} refuses a thinking budget (it thinks adaptively, on by default): "
                              "use --thinking adaptive, or drop --thinking")
        return WithThinking(make_client(model_id, behaviour=behaviour, context_window=context_window, faults=faults,
                                        max_retries=max_retries), thinking)
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
                                   http_client=anthropic.DefaultHttpxClient(transport=CheckedReplies(), follow_redirects=False))
    if not os.environ.get("ANTHROPIC_API_KEY"):
        # Without a key, a name that is no Claude model is most likely a mistyped offline one: the
        # offline models come first, on one line, and the key only after.
        offline = f"the offline models are: {', '.join(known_models())}"
        if not model.lower().startswith("claude"):
            raise CourseError(f"no model is called {model!r} here; {offline}. A real model needs ANTHROPIC_API_KEY "
                              "(or ANTHROPIC_BASE_URL for a local server)")
        raise CourseError(f"model {model!r} needs ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL for a local server); "
                          f"set it, or run with --model offline ({offline})")
    return anthropic.Anthropic(max_retries=max_retries)


def make_async_client(model_id: str | None = None, *, behaviour: Script | None = None,
                      context_window: int = DEFAULT_CONTEXT_WINDOW, faults: Faults | None = None,
                      max_retries: int = 2) -> anthropic.AsyncAnthropic:
    """``make_client``'s asynchronous form: an ``anthropic.AsyncAnthropic`` over the same offline transport (the
    same function from a request to its reply, validated, counted and faulted alike), or the real API.
    A local server (``$ANTHROPIC_BASE_URL``) gets the SDK's own asynchronous client: its replies are not checked
    as ``make_client`` checks them."""
    if behaviour is not None and not callable(behaviour):
        raise CourseError(f"behaviour= takes a function from the request body to the reply's content blocks, "
                          f"got {type(behaviour).__name__}")
    if behaviour is None:
        model = resolve_model(model_id)
        if not is_offline(model):
            if not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_BASE_URL")):
                raise CourseError(f"model {model!r} needs ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL for a local "
                                  "server); set it, or run with --model offline")
            return anthropic.AsyncAnthropic(api_key=os.environ.get("ANTHROPIC_API_KEY") or "local",
                                            max_retries=max_retries)
        try:
            behaviour_for(model)
        except UnknownBehaviour as error:
            raise CourseError(str(error)) from None
    transport = OfflineTransport(context_window=context_window, faults=faults, script=behaviour)
    return anthropic.AsyncAnthropic(api_key="offline", base_url=OFFLINE_BASE_URL,
                                    http_client=httpx2.AsyncClient(transport=transport), max_retries=max_retries)


def offline_client(transport: OfflineTransport, max_retries: int) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="offline", base_url=OFFLINE_BASE_URL,
                               http_client=httpx2.Client(transport=transport), max_retries=max_retries)


class CheckedReplies(httpx2.HTTPTransport):
    """HTTP as the SDK does it, with a local server's reply to a Messages request read and checked
    before the SDK reads it, whatever its content type says. The SDK builds a reply without checking
    it, raises its JSON reader's own ValueError or RecursionError, or hands over a string for a body
    that is not JSON: each would crash a stage deep inside, where it expects an API error. So a
    reply that is not JSON, that Python's reader refuses (an integer of over 4,300 digits), or that
    course.helpers.replies finds no stage could take (its shape, its nesting, a tool_use id used twice)
    becomes a 502 that says why: the SDK retries it, then a stage ends the run as api_error in one
    line. What passes is cleaned (course.helpers.replies.cleaned, course.sendable) before the SDK sees
    it, and one still arriving after reply_deadline_s is refused. Redirects are not followed (see
    make_client): a redirected request's reply was never checked.
    The real API sends none of these, so its client is the SDK's own."""

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        response = super().handle_request(request)
        sent = request_body(request)
        if (not 200 <= response.status_code < 300 or request.method != "POST"
                or request.url.path.endswith("/count_tokens") or sent.get("stream")):
            return response
        content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        body = self.read_in_time(response)
        if body is None:
            return refused(request, response, f"it took longer than {self.reply_deadline_s:g} s to arrive")
        try:
            reply = json.loads(body)
        except (ValueError, RecursionError) as error:
            return refused(request, response, f"not JSON ({content_type or 'no content type'}; "
                                              f"{type(error).__name__}: {shorten(str(error), 80)})")
        problem = reply_problem(reply, sent.get("messages") if isinstance(sent.get("messages"), list) else [])
        if problem:
            return refused(request, response, problem)
        response.close()
        return httpx2.Response(response.status_code, request=request, json=cleaned(reply))

    # The SDK's timeout bounds each read, not the whole reply: a server sending a byte a second would
    # keep a run waiting for ever. Ten minutes is the SDK's own default timeout.
    reply_deadline_s = 600.0

    def read_in_time(self, response: httpx2.Response) -> bytes | None:
        """The reply's body, or None if it is still arriving after reply_deadline_s."""
        deadline, chunks = time.monotonic() + self.reply_deadline_s, []
        for chunk in response.iter_bytes():
            chunks.append(chunk)
            if time.monotonic() > deadline:
                return None
        return b"".join(chunks)


def refused(request: httpx2.Request, response: httpx2.Response, why: str) -> httpx2.Response:
    response.close()
    return httpx2.Response(502, request=request, json={"type": "error", "error": {
        "type": "api_error", "message": f"the server's reply is not one the course can read: {why}"}})


class WithThinking:
    """A client whose every Messages request turns thinking on, the stage's code unchanged.

    ``"adaptive"`` asks for ``{"type": "adaptive"}``: the model decides how much to think, as the
    current Claude models do by default (https://platform.claude.com/docs/en/build-with-claude/adaptive-thinking).
    A number asks for a manual budget of that many tokens (older models and local servers): the budget
    is part of ``max_tokens`` and must stay below it
    (https://platform.claude.com/docs/en/build-with-claude/extended-thinking), so the request's own
    ``max_tokens`` is added on top and the stage keeps all of its room for the answer. The thinking
    blocks come back in the reply; a stage that records every block sends them back unchanged, as
    the API requires with tool results."""

    def __init__(self, client, budget: int | str):
        if budget != "adaptive" and (isinstance(budget, bool) or not isinstance(budget, int) or budget < 1024):
            raise CourseError(f"--thinking takes 'adaptive' or a budget of at least 1024 tokens, got {budget!r}")
        self._client, self.budget = client, budget
        self.messages = _ThinkingMessages(client.messages, budget)

    def __getattr__(self, name):
        return getattr(self._client, name)


class _ThinkingMessages:
    def __init__(self, messages, budget: int | str):
        self._messages, self._budget = messages, budget

    def create(self, **request):
        return self._messages.create(**self.thinking(request))

    def stream(self, **request):
        return self._messages.stream(**self.thinking(request))

    def thinking(self, request: dict) -> dict:
        if self._budget == "adaptive":
            return dict(request, thinking={"type": "adaptive"})
        return dict(request, max_tokens=request["max_tokens"] + self._budget,
                    thinking={"type": "enabled", "budget_tokens": self._budget})

    def __getattr__(self, name):
        return getattr(self._messages, name)


class WithLiveText:
    """A client whose every Messages request is streamed, so that a person watching a live model sees its
    text as it is written (on ``shown_on``), and whose ``create`` still returns the whole reply, the same
    message a plain ``create`` returns: the stage records, tests and resumes one whole reply per turn."""

    def __init__(self, client, shown_on):
        self._client = client
        self.messages = _LiveMessages(client.messages, shown_on)

    def __getattr__(self, name):
        return getattr(self._client, name)


class _LiveMessages:
    def __init__(self, messages, shown_on):
        self._messages, self._shown_on = messages, shown_on

    def create(self, **request):
        with self._messages.stream(**request) as stream:
            for text in stream.text_stream:
                print(text, end="", flush=True, file=self._shown_on)
            reply = stream.get_final_message()
        print(file=self._shown_on)
        return reply

    def __getattr__(self, name):
        return getattr(self._messages, name)
