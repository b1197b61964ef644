"""OpenAI's Chat Completions, translated to and from the Messages API's shape.

What differs from the Messages API, and is kept here:
* the system prompt is a message (role ``system`` or ``developer``), not a field;
* a call is a ``tool_calls`` entry of the assistant message, its ``arguments`` a JSON *string* the
  client must parse (and a model may send one that does not parse);
* a result is a message of its own, role ``tool``, with the call's ``tool_call_id``; there is no
  ``is_error``: an error is only what the text says;
* ``finish_reason`` (``stop``, ``tool_calls``, ``length``, ``content_filter``) instead of ``stop_reason``;
* errors are ``{"error": {"message", "type", "param", "code"}}``, and a call left without its
  ``tool`` message, or a ``tool`` message that answers no call, is a 400 before any model sees it;
* a stream is server-sent events of ``chat.completion.chunk`` objects, ended by ``data: [DONE]``.
"""

from __future__ import annotations

import json
import time

PATHS = {"/v1/chat/completions": "POST", "/v1/models": "GET"}

FINISH_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls", "max_tokens": "length",
                  "refusal": "content_filter", "pause_turn": "stop"}
DEFAULT_MAX_TOKENS = 4096


class OpenAIError(Exception):
    def __init__(self, status: int, message: str, *, error_type: str = "invalid_request_error",
                 param: str | None = None, code: str | None = None):
        super().__init__(message)
        self.status, self.message, self.error_type, self.param, self.code = status, message, error_type, param, code

    def body(self) -> dict:
        return {"error": {"message": self.message, "type": self.error_type, "param": self.param, "code": self.code}}


def not_json() -> OpenAIError:
    return OpenAIError(400, "We could not parse the JSON body of your request. The OpenAI API expects a JSON payload.")


def no_such_path(method: str, path: str) -> OpenAIError:
    return OpenAIError(404, f"Invalid URL ({method} {path})")


def from_internal_error(status: int, body: dict) -> OpenAIError:
    error = body.get("error", {}) if isinstance(body, dict) else {}
    kind = error.get("type", "api_error")
    if kind == "not_found_error" and "model" in error.get("message", ""):
        return OpenAIError(404, error.get("message", ""), code="model_not_found")
    return OpenAIError(status, error.get("message", ""), error_type={
        "rate_limit_error": "rate_limit_exceeded", "overloaded_error": "server_error", "api_error": "server_error",
    }.get(kind, "invalid_request_error"))


def models_page(model_ids: list[str]) -> dict:
    return {"object": "list", "data": [{"id": model_id, "object": "model", "created": 0, "owned_by": "course"}
                                        for model_id in model_ids]}


def _text(content) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    raise OpenAIError(400, f"Invalid type for content: expected a string or an array, got {type(content).__name__}.")


def check_calls_answered(messages: list) -> None:
    """The two rules Chat Completions enforces on a history with calls in it."""
    waiting: dict[str, int] = {}   # tool_call_id -> index of the assistant message that made the call
    answered: set[str] = set()
    for index, message in enumerate(messages):
        role = message.get("role")
        if role != "tool" and waiting.keys() - answered:
            first = min(waiting[i] for i in waiting.keys() - answered)
            missing = ", ".join(sorted(waiting.keys() - answered))
            raise OpenAIError(400, "An assistant message with 'tool_calls' must be followed by tool messages "
                                   "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                                   f"response messages: {missing}", param=f"messages.[{first}].role")
        if role == "assistant":
            waiting = {call.get("id"): index for call in message.get("tool_calls") or []}
            answered = set()
        elif role == "tool":
            if message.get("tool_call_id") not in waiting:
                raise OpenAIError(400, "Invalid parameter: messages with role 'tool' must be a response to a "
                                       "preceeding message with 'tool_calls'.", param=f"messages.[{index}].role")
            answered.add(message["tool_call_id"])
        else:
            waiting, answered = {}, set()
    if waiting.keys() - answered:
        missing = ", ".join(sorted(waiting.keys() - answered))
        raise OpenAIError(400, "An assistant message with 'tool_calls' must be followed by tool messages responding "
                               f"to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
                               f"{missing}", param=f"messages.[{min(waiting.values())}].role")


def to_internal(body) -> dict:
    """A Chat Completions request as a Messages request."""
    if not isinstance(body, dict):
        raise OpenAIError(400, "The request body must be a JSON object.")
    for field in ("model", "messages"):
        if field not in body:
            raise OpenAIError(400, f"Missing required parameter: '{field}'.", param=field)
    messages = body["messages"]
    if not isinstance(messages, list) or not messages:
        raise OpenAIError(400, "Invalid 'messages': empty array. Expected an array with minimum length 1.",
                          param="messages")
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("system", "developer", "user", "assistant", "tool"):
            raise OpenAIError(400, f"Invalid value for 'messages[{index}].role'.", param=f"messages[{index}].role")
    if "tools" in body and not isinstance(body["tools"], (list, type(None))):
        raise OpenAIError(400, "Invalid type for 'tools': expected an array.", param="tools")
    check_calls_answered(messages)
    system, turns = [], []
    for message in messages:
        role = message["role"]
        if role in ("system", "developer"):
            system.append(_text(message.get("content")))
        elif role == "user":
            _add(turns, "user", [{"type": "text", "text": _text(message.get("content")) or " "}])
        elif role == "assistant":
            blocks = [{"type": "text", "text": _text(message.get("content"))}] if _text(message.get("content")) else []
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                try:
                    arguments = json.loads(function.get("arguments") or "{}")
                except ValueError:
                    arguments = {}   # the model saw its own broken text; the behaviours read only what parsed
                blocks.append({"type": "tool_use", "id": call["id"], "name": function.get("name", ""),
                               "input": arguments if isinstance(arguments, dict) else {}})
            _add(turns, "assistant", blocks or [{"type": "text", "text": " "}])
        else:
            _add(turns, "user", [{"type": "tool_result", "tool_use_id": message["tool_call_id"],
                                  "content": _text(message.get("content"))}])
    internal = {"model": body["model"], "messages": turns,
                "max_tokens": body.get("max_completion_tokens") or body.get("max_tokens") or DEFAULT_MAX_TOKENS}
    if system:
        internal["system"] = "\n\n".join(system)
    if body.get("tools"):
        internal["tools"] = [_tool(tool, index) for index, tool in enumerate(body["tools"])]
        choice = body.get("tool_choice")
        if choice == "required":
            internal["tool_choice"] = {"type": "any"}
        elif choice == "none":
            internal["tool_choice"] = {"type": "none"}
        elif isinstance(choice, dict):
            internal["tool_choice"] = {"type": "tool", "name": (choice.get("function") or {}).get("name")}
    if body.get("stop"):
        internal["stop_sequences"] = [body["stop"]] if isinstance(body["stop"], str) else body["stop"]
    return internal


def _tool(tool, index: int) -> dict:
    function = tool.get("function") if isinstance(tool, dict) and tool.get("type") == "function" else None
    if not isinstance(function, dict) or "name" not in function:
        raise OpenAIError(400, f"Missing required parameter: 'tools[{index}].function'.", param=f"tools[{index}].function")
    return {"name": function["name"], "description": function.get("description", ""),
            "input_schema": function.get("parameters") or {"type": "object", "properties": {}}}


def _add(turns: list, role: str, blocks: list) -> None:
    # Consecutive messages of one role are one Messages turn; tool results go before any text.
    if turns and turns[-1]["role"] == role:
        merged = turns[-1]["content"] + blocks
        turns[-1]["content"] = sorted(merged, key=lambda block: block["type"] != "tool_result")
    else:
        turns.append({"role": role, "content": list(blocks)})


def call_id(tool_use_id: str) -> str:
    return "call_" + tool_use_id.removeprefix("toolu_")


def arguments_text(tool_input) -> str:
    # An input that is not an object is what a model wrote as its arguments: it goes out as written.
    return tool_input if isinstance(tool_input, str) else json.dumps(tool_input, ensure_ascii=False)


def from_internal(message: dict) -> dict:
    """A Messages reply as a chat.completion."""
    text = "".join(block.get("text", "") for block in message["content"] if block["type"] == "text")
    calls = [{"id": call_id(block["id"]), "type": "function",
              "function": {"name": block["name"], "arguments": arguments_text(block["input"])}}
             for block in message["content"] if block["type"] == "tool_use"]
    reply = {"role": "assistant", "content": text or None, "refusal": None}
    if calls:
        reply["tool_calls"] = calls
    usage = message["usage"]
    prompt = usage["input_tokens"] + usage.get("cache_read_input_tokens", 0) + usage.get("cache_creation_input_tokens", 0)
    return {"id": "chatcmpl-" + message["id"].removeprefix("msg_"), "object": "chat.completion",
            "created": int(time.time()), "model": message["model"],
            "choices": [{"index": 0, "message": reply, "logprobs": None,
                         "finish_reason": FINISH_REASONS.get(message["stop_reason"], "stop")}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": usage["output_tokens"],
                      "total_tokens": prompt + usage["output_tokens"]}}


def pieces(text: str, size: int = 16) -> list[str]:
    return [text[start:start + size] for start in range(0, len(text), size)]


def stream_events(completion: dict, include_usage: bool = False):
    """The completion as the chunks a stream sends, each a line of server-sent events, then [DONE]."""
    head = {key: completion[key] for key in ("id", "created", "model")}

    def chunk(delta: dict, finish_reason=None) -> bytes:
        body = dict(head, object="chat.completion.chunk",
                    choices=[{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}])
        return b"data: " + json.dumps(body, ensure_ascii=False).encode() + b"\n\n"

    choice = completion["choices"][0]
    yield chunk({"role": "assistant", "content": "", "refusal": None})
    for piece in pieces(choice["message"]["content"] or ""):
        yield chunk({"content": piece})
    for index, call in enumerate(choice["message"].get("tool_calls", [])):
        yield chunk({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                     "function": {"name": call["function"]["name"], "arguments": ""}}]})
        for piece in pieces(call["function"]["arguments"]):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, choice["finish_reason"])
    if include_usage:
        yield b"data: " + json.dumps(dict(head, object="chat.completion.chunk", choices=[],
                                          usage=completion["usage"])).encode() + b"\n\n"
    yield b"data: [DONE]\n\n"
