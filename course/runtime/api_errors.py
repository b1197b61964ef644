"""One actionable line for an error the API (or the offline model) answered: what the command line prints
and what the trace viewer shows when a run ended on one."""

from __future__ import annotations

import anthropic

from course.runtime.trace import escape_terminal_controls, shorten


def explain_api_error(error: anthropic.APIError) -> str:
    """One actionable line for an error the API (or the offline model) answered."""
    if isinstance(error, anthropic.APIStatusError):
        body = error.body if isinstance(error.body, dict) else {}
        detail = body.get("error")  # {"type", "message"} from the API; a bare string from some local servers
        message = detail.get("message") if isinstance(detail, dict) else detail if isinstance(detail, str) else None
        if not message:
            # A body of a shape no API documents: the server's own words, rather than the SDK's
            # rendering of them (which changes between releases).
            message = error.response.text if error.body is not None else error.message
        # One line, of a readable length, whatever the server put in it.
        message = shorten(" ".join(str(message).split()), 300)
        hints = {401: "check ANTHROPIC_API_KEY", 404: "check the model id (--model or MODEL_ID)",
                 429: "wait and retry, or lower the request rate", 529: "the API is overloaded; retry later"}
        hint = hints.get(error.status_code, "")
        message = escape_terminal_controls(message)  # a server's words, shown as data
        return f"the API answered {error.status_code}: {message}" + (f" ({hint})" if hint else "")
    if isinstance(error, anthropic.APIConnectionError):
        if "injected" in str(error.__cause__):  # --faults: the offline model dropped it on purpose
            return "the connection was dropped: a fault injected into the offline model (--faults), not your network"
        return "could not reach the API: check your network, or ANTHROPIC_BASE_URL for a local server"
    return str(error)
