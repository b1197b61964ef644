"""Request validation: the rules of the real Messages API, with its status codes and wording.

A broken history must fail offline exactly where it would fail against Claude, or the course
would teach loops that only work on its own stand-in. Each rule below answers the way the real
API does: HTTP 400 with ``{"type": "error", "error": {"type": "invalid_request_error",
"message": ...}}``.

Where the real wording is known it is reproduced, with its source:

* "`tool_use` ids were found without `tool_result` blocks immediately after" and "unexpected
  `tool_use_id` found in `tool_result` blocks": quoted from API errors reported in
  anthropics/claude-code issues #1237 and #13460.
* "Did not find N `tool_result` block(s) at the beginning of this message": anthropics/claude-code
  issue #37.
* "`tool_use` ids must be unique": anthropics/claude-code issue #21083.
* "String should match pattern '^[a-zA-Z0-9_-]{1,64}$'" for tool names: anthropics/claude-code #985.
* "Tool names must be unique.": tailcallhq/forgecode issue #892 (the API's raw error).
* "prompt is too long: N tokens > M maximum": reported in earendil-works/pi issue #102.
* "all messages must have non-empty content except for the optional final assistant message".
* API version 2026-10-21 (the version anthropic 2.x sends in its ``anthropic-version`` header) refuses
  ``temperature``, ``top_p`` and ``top_k`` even at their default values ("temperature: Extra inputs
  are not permitted", as measured against the real API), a document block placed directly in an
  assistant message, and a non-empty ``citations`` list on a text block of a user message; 2023-06-01
  takes all three. Source: "Migrating to API version 2026-10-21",
  https://platform.claude.com/docs/en/api/migration-2026-10-21 (the wording of the last two errors
  is an approximation).

The field errors ("Field required", "Input should be ...") follow the API's validation style
(it reports pydantic-style messages such as "String should match pattern"); their exact text
for these fields is an approximation.
"""

from __future__ import annotations

import re

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
API_VERSIONS = ("2023-06-01", "2026-10-21")
LATEST_API_VERSION = API_VERSIONS[-1]
SAMPLING_PARAMETERS = ("temperature", "top_p", "top_k")  # gone in 2026-10-21
USER_BLOCKS = ("text", "tool_use", "tool_result", "image", "document")
# An assistant message takes back the blocks the API writes into its replies: thinking, the server
# tools' calls and results (https://platform.claude.com/docs/en/agents-and-tools/tool-use/server-tools),
# a compaction summary (https://platform.claude.com/docs/en/build-with-claude/compaction), and types
# added since (enum-like fields gain values, says the 2026-10-21 migration guide). The offline model
# cannot tell a type newer than this course from a wrong one, so it takes any type back there.


class ApiError(Exception):
    """An error response: HTTP status, error type and message, as the API sends them."""

    def __init__(self, status: int, error_type: str, message: str):
        super().__init__(message)
        self.status = status
        self.error_type = error_type
        self.message = message
        self.details: dict | None = None  # the error object's `details`, for the errors that carry some

    def body(self) -> dict:
        error = {"type": self.error_type, "message": self.message}
        return {"type": "error", "error": error | ({"details": self.details} if self.details else {})}


def invalid(message: str) -> ApiError:
    return ApiError(400, "invalid_request_error", message)


def _blocks(content) -> list:
    """Content as a list of blocks (a plain string is one text block)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content)


def validate_request(body: dict, *, needs_max_tokens: bool = True, api_version: str = LATEST_API_VERSION) -> None:
    """Raise ApiError for the first rule the request breaks, like the API does, under ``api_version``
    (the request's anthropic-version header)."""
    if api_version not in API_VERSIONS:
        raise invalid(f"anthropic-version: {api_version!r} is not a valid version; use one of {', '.join(API_VERSIONS)}")
    for field in ("model", "messages") + (("max_tokens",) if needs_max_tokens else ()):
        if field not in body:
            raise invalid(f"{field}: Field required")
    if api_version >= "2026-10-21":
        for name in SAMPLING_PARAMETERS:
            if name in body:
                raise invalid(f"{name}: Extra inputs are not permitted")
    if not isinstance(body["model"], str) or not body["model"]:
        raise invalid("model: Input should be a valid string")
    if needs_max_tokens:
        max_tokens = body["max_tokens"]
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
            raise invalid("max_tokens: Input should be a valid integer")
        if max_tokens < 1:
            raise invalid("max_tokens: Input should be greater than or equal to 1")
    _validate_tools(body.get("tools") or [])
    _validate_messages(body["messages"])
    if api_version >= "2026-10-21":
        _validate_2026_content(body["messages"])


def _validate_2026_content(messages: list) -> None:
    """What 2026-10-21 refuses inside messages: a document straight in an assistant message (one nested in
    another block, such as a tool result, is still taken), citations on a user's text block."""
    for index, message in enumerate(messages):
        for position, block in enumerate(_blocks(message["content"])):
            if message["role"] == "assistant" and block.get("type") == "document":
                raise invalid(f"messages.{index}.content.{position}: document blocks are not accepted in assistant "
                              "messages; send the document in a user message")
            if message["role"] == "user" and block.get("type") == "text" and block.get("citations"):
                raise invalid(f"messages.{index}.content.{position}.citations: citations are not accepted on text "
                              "blocks of user messages; remove them")


def _validate_tools(tools: list) -> None:
    names = set()
    for index, tool in enumerate(tools):
        name = tool.get("name")
        if not isinstance(name, str) or not TOOL_NAME.match(name):
            raise invalid(f"tools.{index}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'")
        schema = tool.get("input_schema")
        if not isinstance(schema, dict):
            raise invalid(f"tools.{index}.custom.input_schema: Field required")
        if schema.get("type") != "object":
            raise invalid(f"tools.{index}.custom.input_schema.type: Input should be 'object'")
        if name in names:
            raise invalid("tools: Tool names must be unique.")
        names.add(name)


def _validate_messages(messages) -> None:
    if not isinstance(messages, list):
        raise invalid("messages: Input should be a valid list")
    if not messages:
        raise invalid("messages: List should have at least 1 item after validation, not 0")
    if messages[0].get("role") != "user":
        raise invalid('messages: first message must use the "user" role')

    seen_ids: set[str] = set()
    for index, message in enumerate(messages):
        role = message.get("role")
        if role not in ("user", "assistant"):
            raise invalid(f"messages.{index}.role: Input should be 'user' or 'assistant'")
        content = message.get("content")
        is_final_assistant = role == "assistant" and index == len(messages) - 1
        if content is None or (not content and not is_final_assistant):
            raise invalid(
                f"messages.{index}: all messages must have non-empty content except for the "
                "optional final assistant message"
            )
        blocks = _blocks(content)
        for position, block in enumerate(blocks):
            kind = block.get("type")
            if kind == "tool_use":
                if role != "assistant":
                    raise invalid(f"messages.{index}.content.{position}: tool_use blocks are only allowed in assistant messages")
                if block.get("id") in seen_ids:
                    raise invalid(f"messages.{index}.content.{position}: `tool_use` ids must be unique")
                seen_ids.add(block.get("id"))
            elif kind == "tool_result" and role != "user":
                raise invalid(f"messages.{index}.content.{position}: tool_result blocks are only allowed in user messages")
            elif kind not in USER_BLOCKS and role != "assistant":
                raise invalid(f"messages.{index}.content.{position}.type: Input tag '{kind}' found using 'type' does not match any of the expected tags")
        _validate_results_follow_uses(messages, index)


def _validate_results_follow_uses(messages: list, index: int) -> None:
    """Every tool_use id of an assistant message is answered at the start of the next message,
    and every tool_result answers a tool_use of the message just before it."""
    message = messages[index]
    blocks = _blocks(message["content"])
    if message["role"] == "assistant":
        use_ids = [b["id"] for b in blocks if b.get("type") == "tool_use"]
        if not use_ids:
            return
        following = _blocks(messages[index + 1]["content"]) if index + 1 < len(messages) else []
        answered = {b.get("tool_use_id") for b in following if b.get("type") == "tool_result"}
        missing = [i for i in use_ids if i not in answered]
        if missing:
            raise invalid(
                f"messages.{index}: `tool_use` ids were found without `tool_result` blocks immediately "
                f"after: {', '.join(missing)}. Each `tool_use` block must have a corresponding "
                "`tool_result` block in the next message."
            )
        leading = 0
        while leading < len(following) and following[leading].get("type") == "tool_result":
            leading += 1
        if leading < len(use_ids):
            raise invalid(
                f"messages.{index + 1}: Did not find {len(use_ids)} `tool_result` block(s) at the "
                "beginning of this message. Messages following `tool_use` blocks must begin with a "
                "matching number of `tool_result` blocks."
            )
        return
    previous = _blocks(messages[index - 1]["content"]) if index > 0 and messages[index - 1]["role"] == "assistant" else []
    previous_ids = {b.get("id") for b in previous if b.get("type") == "tool_use"}
    for position, block in enumerate(blocks):
        if block.get("type") == "tool_result" and block.get("tool_use_id") not in previous_ids:
            raise invalid(
                f"messages.{index}.content.{position}: unexpected `tool_use_id` found in `tool_result` "
                f"blocks: {block.get('tool_use_id')}. Each `tool_result` block must have a "
                "corresponding `tool_use` block in the previous message."
            )
