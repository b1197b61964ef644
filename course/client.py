"""The client factory: one call returns an ``anthropic.Anthropic``, offline or real."""

from __future__ import annotations

import os

import anthropic
import httpx2

from .models import CourseError, is_offline, resolve_model
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
        return anthropic.Anthropic(api_key=os.environ.get("ANTHROPIC_API_KEY") or "local", max_retries=max_retries)
    if not os.environ.get("ANTHROPIC_API_KEY"):
        raise CourseError(f"model {model!r} needs ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL for a local server); "
                          "set it, or run with --model offline")
    return anthropic.Anthropic(max_retries=max_retries)


def offline_client(transport: OfflineTransport, max_retries: int) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="offline", base_url=OFFLINE_BASE_URL,
                               http_client=httpx2.Client(transport=transport), max_retries=max_retries)
