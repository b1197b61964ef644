"""Ollama's native chat (``/api/chat``), translated to and from the Messages API's shape.

What differs from the Messages API, and is kept here:
* the system prompt is a message with role ``system``;
* a call is a ``tool_calls`` entry whose ``arguments`` is already an object; calls have no ids, so a
  result (a message with role ``tool``) is matched to its call by order alone;
* a reply ends with ``done: true`` and a ``done_reason`` (``stop`` or ``length``): a reply with calls
  ends as ``stop`` too, so the calls themselves are the only sign that the model wants a tool;
* ``stream`` is true unless the request says false, and a stream is newline-delimited JSON, one
  object a line, the last with ``done: true``;
* errors are ``{"error": "..."}``; nothing checks that every call was answered.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone

PATHS = {"/api/chat": "POST", "/api/tags": "GET", "/api/version": "GET", "/": "GET"}
DONE_REASONS = {"max_tokens": "length"}
DEFAULT_MAX_TOKENS = 8192   # Ollama's own default is no limit; the offline model needs one


class OllamaError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message

    def body(self) -> dict:
        return {"error": self.message}


def from_internal_error(status: int, body: dict) -> OllamaError:
    message = body.get("error", {}).get("message", "") if isinstance(body, dict) else ""
    if status == 404 and message.startswith("model"):
        return OllamaError(404, f"model {message.split()[1]!r} not found, try pulling it first".replace("'", '"'))
    return OllamaError(status, message)


def tags_page(model_ids: list[str]) -> dict:
    return {"models": [{"name": model_id, "model": model_id, "modified_at": "2026-01-01T00:00:00Z", "size": 0,
                        "details": {"family": "offline", "parameter_size": "0"}} for model_id in model_ids]}


def to_internal(body) -> dict:
    """An /api/chat request as a Messages request."""
    if not isinstance(body, dict):
        raise OllamaError(400, "json: cannot unmarshal the request into a chat request")
    if not body.get("model"):
        raise OllamaError(400, "model is required")
    messages = body.get("messages") or []
    if not isinstance(messages, list):
        raise OllamaError(400, "json: cannot unmarshal messages: not an array")
    if "tools" in body and not isinstance(body["tools"], (list, type(None))):
        raise OllamaError(400, "json: cannot unmarshal tools: not an array")
    system, turns, pending = [], [], []   # pending: the ids of the last calls, in order, still unanswered
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise OllamaError(400, f"json: cannot unmarshal messages[{index}]: not an object")
        role, text = message.get("role"), message.get("content") or ""
        if not isinstance(text, str):
            raise OllamaError(400, f"json: cannot unmarshal messages[{index}].content: not a string")
        if role == "system":
            system.append(text)
        elif role == "assistant":
            blocks = [{"type": "text", "text": text}] if text else []
            pending = []
            for number, call in enumerate(message.get("tool_calls") or []):
                function = (call.get("function") or {}) if isinstance(call, dict) else {}
                arguments = function.get("arguments")
                pending.append(f"toolu_ollama_{index:04d}_{number:02d}")
                blocks.append({"type": "tool_use", "id": pending[-1], "name": function.get("name", ""),
                               "input": arguments if isinstance(arguments, dict) else {}})
            _add(turns, "assistant", blocks or [{"type": "text", "text": " "}])
        elif role == "tool" and pending:
            _add(turns, "user", [{"type": "tool_result", "tool_use_id": pending.pop(0), "content": text}])
        elif role in ("user", "tool"):   # a result that answers no call is only text to the model
            _close(turns, pending)
            pending = []
            _add(turns, "user", [{"type": "text", "text": text or " "}])
        else:
            raise OllamaError(400, f"invalid role: {role!r}")
    _close(turns, pending)
    options = body.get("options") if isinstance(body.get("options"), dict) else {}
    predict = options.get("num_predict")
    internal = {"model": body["model"], "messages": turns,
                "max_tokens": predict if isinstance(predict, int) and predict > 0 else DEFAULT_MAX_TOKENS}
    if system:
        internal["system"] = "\n\n".join(system)
    if body.get("tools"):
        internal["tools"] = [{"name": tool["function"]["name"], "description": tool["function"].get("description", ""),
                              "input_schema": tool["function"].get("parameters") or {"type": "object", "properties": {}}}
                             for tool in body["tools"] if isinstance(tool, dict) and isinstance(tool.get("function"), dict)]
    if options.get("stop"):
        internal["stop_sequences"] = options["stop"]
    return internal


def _close(turns: list, pending: list) -> None:
    # Ollama never asks that a call be answered; the model saw calls with no result as calls with none.
    if pending and turns and turns[-1]["role"] == "assistant":
        turns[-1]["content"] = [block for block in turns[-1]["content"]
                                if block["type"] != "tool_use" or block["id"] not in pending] or [{"type": "text", "text": " "}]


def _add(turns: list, role: str, blocks: list) -> None:
    if turns and turns[-1]["role"] == role:
        turns[-1]["content"] = sorted(turns[-1]["content"] + blocks, key=lambda block: block["type"] != "tool_result")
    else:
        turns.append({"role": role, "content": list(blocks)})


def from_internal(message: dict, started: float) -> dict:
    """A Messages reply as Ollama's final (non-streamed) chat reply."""
    text = "".join(block.get("text", "") for block in message["content"] if block["type"] == "text")
    reply = {"role": "assistant", "content": text}
    calls = [{"function": {"name": block["name"], "arguments": block["input"]}}
             for block in message["content"] if block["type"] == "tool_use"]
    if calls:
        reply["tool_calls"] = calls
    usage = message["usage"]
    return {"model": message["model"], "created_at": _now(), "message": reply, "done": True,
            "done_reason": DONE_REASONS.get(message["stop_reason"], "stop"),
            "total_duration": int((time.monotonic() - started) * 1e9), "load_duration": 0,
            "prompt_eval_count": usage["input_tokens"] + usage.get("cache_read_input_tokens", 0)
            + usage.get("cache_creation_input_tokens", 0), "eval_count": usage["output_tokens"]}


def _now() -> str:
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


def stream_lines(final: dict):
    """The reply as Ollama streams it: the text a piece a line, the calls in one line, then the end."""
    def line(body: dict) -> bytes:
        return json.dumps(body, ensure_ascii=False).encode() + b"\n"

    text = final["message"]["content"]
    for start in range(0, len(text), 16):
        yield line({"model": final["model"], "created_at": _now(),
                    "message": {"role": "assistant", "content": text[start:start + 16]}, "done": False})
    if final["message"].get("tool_calls"):
        yield line({"model": final["model"], "created_at": _now(),
                    "message": {"role": "assistant", "content": "", "tool_calls": final["message"]["tool_calls"]},
                    "done": False})
    yield line(dict(final, message={"role": "assistant", "content": ""}))
