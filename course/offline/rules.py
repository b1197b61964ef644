"""What the offline model checks and honours beyond the basics of ``validation.py``: one row per rule.

Each row names a rule of the real Messages API, the function that applies it, and where the rule is
written down (the API's documentation, or a public tracker quoting the API's own error). A request
that breaks a rule gets the API's status and error body (``ApiError``); the site renders this table
as the page "What the offline model checks" (``docs/offline-model-rules.md``), so the page cannot
drift from the code, and ``tests/test_offline_rules.py`` pins every row with a request that breaks it
and one that keeps it.

Two kinds of rows: ``refuses`` rows raise the 400 before the model is asked; ``honours`` rows change
the reply (``shape_reply``) after any behaviour answers, in this one place, so that no behaviour has
to know about ``tool_choice`` or ``stop_sequences``.

The messages are the API's own where public trackers quote them: "Extra inputs are not permitted"
(measured, see validation.py), "final assistant content cannot end with trailing whitespace"
(tailcallhq/forgecode #1872), "Requests which include tool_use or tool_result blocks must define tools."
(anthropics/anthropic-sdk-python #494), "Thinking may not be enabled when tool_choice forces tool use."
(mastra-ai/mastra #7507). The others give the meaning of the API's message, not its letter: an
approximation, as the status and the error type are not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from course.offline.validation import ApiError, invalid

DOCS = "https://platform.claude.com/docs/en"
# The offline ids stand in for the default Claude model, a Sonnet: its maximum output is 64,000 tokens
# (models overview, "Max output").
MAX_OUTPUT_TOKENS = 64_000
TOOL_USE_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
IMAGE_MEDIA_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
IMAGE_SOURCES = ("base64", "url", "file")

# The fields the API takes, by object: from the request types of the SDK (generated from the API's
# specification). Any other field is "Extra inputs are not permitted". Blocks of the assistant's own
# turns are left out: they are sent back as the API wrote them, with fields this course does not know.
REQUEST_FIELDS = frozenset({
    "model", "messages", "max_tokens", "system", "tools", "tool_choice", "stop_sequences", "stream",
    "temperature", "top_p", "top_k", "metadata", "thinking", "context_management", "container", "mcp_servers",
    "service_tier", "output_config", "output_format", "cache_control", "inference_geo", "thread", "speed"})
MESSAGE_FIELDS = frozenset({"role", "content"})
USER_BLOCK_FIELDS = {
    "text": frozenset({"type", "text", "cache_control", "citations"}),
    "image": frozenset({"type", "source", "cache_control"}),
    "document": frozenset({"type", "source", "title", "context", "citations", "cache_control"}),
    "tool_result": frozenset({"type", "tool_use_id", "content", "is_error", "cache_control"}),
}
CUSTOM_TOOL_FIELDS = frozenset({"type", "name", "description", "input_schema", "cache_control", "strict",
                                "input_examples", "defer_loading", "allowed_callers", "eager_input_streaming"})


@dataclass(frozen=True)
class Rule:
    name: str                       # the row's key, also the test's
    kind: str                       # "refuses" (a 400 before the model answers) or "honours" (shapes the reply)
    says: str                       # the rule, one line, English
    says_ja: str                    # the same, Japanese
    source: str                     # where the rule is written down
    check: Callable[[dict], None]   # raises ApiError for a request that breaks it (a no-op for "honours" rows)


def _blocks(content) -> list:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])


def _user_blocks(body: dict):
    for index, message in enumerate(body.get("messages") or []):
        if isinstance(message, dict):
            for position, block in enumerate(_blocks(message.get("content"))):
                if isinstance(block, dict):
                    yield index, message.get("role"), position, block


def _extra(where: str, given: dict, allowed: frozenset) -> None:
    for name in given:
        if name not in allowed:
            raise invalid(f"{where}{name}: Extra inputs are not permitted")


def check_no_extra_fields(body: dict) -> None:
    _extra("", body, REQUEST_FIELDS)
    for index, message in enumerate(body.get("messages") or []):
        if isinstance(message, dict):
            _extra(f"messages.{index}.", message, MESSAGE_FIELDS)
    for index, role, position, block in _user_blocks(body):
        allowed = USER_BLOCK_FIELDS.get(block.get("type"))
        if role == "user" and allowed:
            _extra(f"messages.{index}.content.{position}.{block['type']}.", block, allowed)
    for index, tool in enumerate(body.get("tools") or []):
        if isinstance(tool, dict) and tool.get("type", "custom") == "custom":
            _extra(f"tools.{index}.custom.", tool, CUSTOM_TOOL_FIELDS)


def check_tool_use_ids(body: dict) -> None:
    for index, _, position, block in _user_blocks(body):
        kind = block.get("type")
        key = "id" if kind == "tool_use" else "tool_use_id" if kind == "tool_result" else None
        if key and not (isinstance(block.get(key), str) and TOOL_USE_ID.match(block[key])):
            raise invalid(f"messages.{index}.content.{position}.{kind}.{key}: String should match pattern "
                          f"'^[a-zA-Z0-9_-]+$'")


def check_text_not_blank(body: dict) -> None:
    for index, _, position, block in _user_blocks(body):
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            if not block["text"]:
                raise invalid(f"messages.{index}.content.{position}: text content blocks must be non-empty")
            if not block["text"].strip():
                raise invalid(f"messages.{index}.content.{position}: text content blocks must contain non-whitespace text")


def check_final_assistant_trimmed(body: dict) -> None:
    messages = body.get("messages") or []
    if not messages or not isinstance(messages[-1], dict) or messages[-1].get("role") != "assistant":
        return
    blocks = _blocks(messages[-1].get("content"))
    if blocks and isinstance(blocks[-1], dict) and blocks[-1].get("type") == "text":
        text = blocks[-1].get("text")
        if isinstance(text, str) and text != text.rstrip():
            raise invalid("messages: final assistant content cannot end with trailing whitespace")


def check_max_tokens(body: dict) -> None:
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, int) and max_tokens > MAX_OUTPUT_TOKENS:
        raise invalid(f"max_tokens: {max_tokens} > {MAX_OUTPUT_TOKENS}, which is the maximum allowed number of "
                      f"output tokens for {body.get('model')}")


def check_tools_defined(body: dict) -> None:
    if body.get("tools"):
        return
    if any(block.get("type") in ("tool_use", "tool_result") for _, _, _, block in _user_blocks(body)):
        raise invalid("Requests which include tool_use or tool_result blocks must define tools.")


def check_images(body: dict) -> None:
    def images(blocks, where):
        for position, block in enumerate(blocks):
            if not isinstance(block, dict):
                continue
            if block.get("type") == "image":
                yield f"{where}.{position}", block
            elif block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                yield from images(block["content"], f"{where}.{position}.content")

    for index, message in enumerate(body.get("messages") or []):
        if not isinstance(message, dict):
            continue
        for where, block in images(_blocks(message.get("content")), f"messages.{index}.content"):
            source = block.get("source")
            if not isinstance(source, dict) or source.get("type") not in IMAGE_SOURCES:
                raise invalid(f"{where}.image.source: Input tag found using 'type' does not match any of the expected "
                              f"tags: {', '.join(map(repr, IMAGE_SOURCES))}")
            if source["type"] == "base64" and source.get("media_type") not in IMAGE_MEDIA_TYPES:
                raise invalid(f"{where}.image.source.base64.media_type: Input should be "
                              + ", ".join(map(repr, IMAGE_MEDIA_TYPES)))
            if source["type"] == "base64" and not isinstance(source.get("data"), str):
                raise invalid(f"{where}.image.source.base64.data: Field required")


def _thinking_on(body: dict) -> bool:
    thinking = body.get("thinking")
    return isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")


def check_tool_choice(body: dict) -> None:
    choice = body.get("tool_choice")
    if choice is None:
        return
    if not isinstance(choice, dict) or choice.get("type") not in ("auto", "any", "tool", "none"):
        raise invalid("tool_choice: Input tag found using 'type' does not match any of the expected tags: "
                      "'auto', 'any', 'tool', 'none'")
    allowed = {"type"} | ({"name"} if choice["type"] == "tool" else set()) \
        | ({"disable_parallel_tool_use"} if choice["type"] != "none" else set())
    _extra(f"tool_choice.{choice['type']}.", choice, frozenset(allowed))
    names = [tool.get("name") for tool in body.get("tools") or [] if isinstance(tool, dict)]
    if choice["type"] == "tool":
        if not isinstance(choice.get("name"), str):
            raise invalid("tool_choice.tool.name: Field required")
        if choice["name"] not in names:
            raise invalid(f"tool_choice.tool.name: Tool '{choice['name']}' not found in provided tools")
    if choice["type"] in ("any", "tool") and not names:
        raise invalid("tool_choice: tool_choice requires tools to be provided")
    if choice["type"] in ("any", "tool") and _thinking_on(body):
        raise invalid("Thinking may not be enabled when tool_choice forces tool use.")


def check_temperature_with_thinking(body: dict) -> None:
    if not _thinking_on(body):
        return
    if "temperature" in body and body["temperature"] != 1:
        raise invalid("`temperature` may only be set to 1 when thinking is enabled. Please consult our "
                      "documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking")
    if "top_k" in body:
        raise invalid("`top_k` must be unset when thinking is enabled.")


def check_stop_sequences(body: dict) -> None:
    sequences = body.get("stop_sequences")
    if sequences is None:
        return
    if not isinstance(sequences, list) or not all(isinstance(item, str) for item in sequences):
        raise invalid("stop_sequences: Input should be a valid list of strings")
    if any(not item.strip() for item in sequences):
        raise invalid("stop_sequences: each stop sequence must contain non-whitespace")


def _honoured(body: dict) -> None:
    return None


RULES: tuple[Rule, ...] = (
    Rule("extra_fields", "refuses", "A field the API does not define, at any level: \"Extra inputs are not permitted\".",
         "API が定義しないフィールドは、どの階層でも「Extra inputs are not permitted」で拒否する。",
         f"{DOCS}/api/messages", check_no_extra_fields),
    Rule("tool_use_id_pattern", "refuses", "A tool_use or tool_result id must match ^[a-zA-Z0-9_-]+$.",
         "tool_use と tool_result の id は ^[a-zA-Z0-9_-]+$ に合うこと。",
         f"{DOCS}/api/messages", check_tool_use_ids),
    Rule("text_not_blank", "refuses", "A text block must be non-empty and hold more than whitespace.",
         "text ブロックは空でも空白だけでもいけない。",
         f"{DOCS}/api/messages", check_text_not_blank),
    Rule("final_assistant_trimmed", "refuses", "A final assistant message (a prefill) cannot end with whitespace.",
         "最後の assistant メッセージ（プリフィル）は空白で終われない。",
         "https://github.com/tailcallhq/forgecode/issues/1872", check_final_assistant_trimmed),
    Rule("max_tokens_ceiling", "refuses", f"max_tokens may not exceed the model's maximum output ({MAX_OUTPUT_TOKENS:,}).",
         f"max_tokens はモデルの最大出力（{MAX_OUTPUT_TOKENS:,}）を超えられない。",
         f"{DOCS}/about-claude/models/overview", check_max_tokens),
    Rule("tools_defined", "refuses", "tool_use or tool_result blocks need a tools list in the same request.",
         "tool_use や tool_result ブロックを送るなら、同じリクエストに tools が要る。",
         "https://github.com/anthropics/anthropic-sdk-python/issues/494", check_tools_defined),
    Rule("image_sources", "refuses", "An image is base64 (jpeg, png, gif, webp), a URL or a file.",
         "画像は base64（jpeg・png・gif・webp）、URL、ファイルのいずれか。",
         f"{DOCS}/build-with-claude/vision", check_images),
    Rule("tool_choice", "refuses", "tool_choice is auto, any, tool (a tool that exists) or none; forcing a tool "
         "(any, tool) is refused with thinking on.",
         "tool_choice は auto・any・tool（ある道具）・none のどれか。thinking と道具の強制（any・tool）は併用できない。",
         f"{DOCS}/agents-and-tools/tool-use/implement-tool-use#forcing-tool-use", check_tool_choice),
    Rule("temperature_with_thinking", "refuses", "With thinking on, temperature may only be 1 and top_k must be unset.",
         "thinking を使うとき、temperature は 1 だけ、top_k は指定できない。",
         f"{DOCS}/build-with-claude/extended-thinking#feature-compatibility", check_temperature_with_thinking),
    Rule("stop_sequences_valid", "refuses", "stop_sequences is a list of strings, each with non-whitespace.",
         "stop_sequences は文字列のリストで、どれも空白だけではいけない。",
         f"{DOCS}/api/messages", check_stop_sequences),
    Rule("honour_tool_choice", "honours", "tool_choice: none gives no tool call; any gives one; tool gives one of that "
         "tool, with arguments valid for its schema.",
         "tool_choice: none なら道具を呼ばず、any なら必ず呼び、tool ならその道具をスキーマに合う引数で呼ぶ。",
         f"{DOCS}/agents-and-tools/tool-use/implement-tool-use#forcing-tool-use", _honoured),
    Rule("honour_disable_parallel", "honours", "disable_parallel_tool_use: at most one tool_use in a reply.",
         "disable_parallel_tool_use: 1 回の返答に tool_use は多くて 1 つ。",
         f"{DOCS}/agents-and-tools/tool-use/implement-tool-use#parallel-tool-use", _honoured),
    Rule("honour_stop_sequences", "honours", "stop_sequences: the text stops before the first one met; stop_reason "
         "is stop_sequence and stop_sequence names it.",
         "stop_sequences: 最初に現れた停止文字列の手前で止め、stop_reason は stop_sequence、stop_sequence にその文字列。",
         f"{DOCS}/api/messages", _honoured),
    Rule("honour_automatic_caching", "honours", "A top-level cache_control caches the prompt up to its last block.",
         "トップレベルの cache_control は、プロンプトを最後のブロックまでキャッシュする。",
         f"{DOCS}/build-with-claude/prompt-caching", _honoured),
)


def check(body: dict) -> None:
    """Raise the API's error for the first rule of the table the request breaks."""
    for rule in RULES:
        rule.check(body)


def with_automatic_caching(body: dict) -> dict:
    """A top-level ``cache_control`` is a breakpoint on the prompt's last block: the body as the cache reads it."""
    marker = body.get("cache_control")
    if not isinstance(marker, dict) or not body.get("messages"):
        return body
    messages = [dict(message) for message in body["messages"]]
    blocks = [dict(block) for block in _blocks(messages[-1].get("content"))]
    if blocks and "cache_control" not in blocks[-1]:
        blocks[-1]["cache_control"] = marker
    messages[-1]["content"] = blocks
    return {key: value for key, value in body.items() if key != "cache_control"} | {"messages": messages}


# ---------------------------------------------------------------- the "honours" rows, after any behaviour

def shape_reply(body: dict, blocks: list[dict], stop_reason: str | None) -> tuple[list[dict], str | None, str | None]:
    """The behaviour's reply with tool_choice, disable_parallel_tool_use and stop_sequences applied:
    (blocks, stop_reason, stop_sequence)."""
    if body.get("tool_choice") is None and not body.get("stop_sequences"):
        return blocks, stop_reason, None   # nothing to honour: most requests
    choice = body.get("tool_choice") or {"type": "auto"}
    tools = [tool for tool in body.get("tools") or [] if isinstance(tool, dict)]
    blocks = [dict(block) for block in blocks]
    if choice.get("type") == "none":
        # the calls the model wanted, said in words: it may not call a tool here
        blocks = [block if block.get("type") != "tool_use" else
                  {"type": "text", "text": f"I would call {block.get('name')} next."} for block in blocks]
        stop_reason = None if stop_reason == "tool_use" else stop_reason
    elif choice.get("type") in ("any", "tool"):
        wanted = choice.get("name") if choice["type"] == "tool" else None
        calls = [block for block in blocks if block.get("type") == "tool_use"
                 and (wanted is None or block.get("name") == wanted)]
        if not calls and tools:
            tool = next((tool for tool in tools if tool.get("name") == wanted), tools[0])
            calls = [{"type": "tool_use", "name": tool["name"], "input": example_of(tool.get("input_schema") or {})}]
        # a forced call comes straight away, with no text before it (the API prefills the call)
        blocks, stop_reason = [block for block in blocks if block.get("type") not in ("text", "tool_use")] + calls, None
    if choice.get("disable_parallel_tool_use"):
        first = next((i for i, block in enumerate(blocks) if block.get("type") == "tool_use"), None)
        blocks = [block for i, block in enumerate(blocks) if block.get("type") != "tool_use" or i == first]
    stop_sequence = None
    sequences = body.get("stop_sequences") or []
    for index, block in enumerate(blocks):
        if block.get("type") != "text" or not sequences:
            continue
        found = [(block["text"].find(s), s) for s in sequences if s in block["text"]]
        if found:
            at, stop_sequence = min(found)
            blocks = blocks[:index] + ([dict(block, text=block["text"][:at])] if at else [])
            stop_reason = "stop_sequence"
            break
    return blocks, stop_reason, stop_sequence


def example_of(schema: dict):
    """A value valid for a JSON schema of the kinds tools use: objects, strings, numbers, lists, enums."""
    if not isinstance(schema, dict):
        return None
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return example_of(schema[key][0])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties") or {}
        return {name: example_of(properties.get(name) or {}) for name in schema.get("required") or []
                if isinstance(name, str)}
    if kind == "array":
        return [example_of(schema.get("items") or {}) for _ in range(schema.get("minItems") or 0)]
    if kind == "integer":
        return int(schema["minimum"]) if isinstance(schema.get("minimum"), (int, float)) else 0
    if kind == "number":
        return float(schema.get("minimum") or 0)
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return "x" * max(int(schema.get("minLength") or 0), 1)
