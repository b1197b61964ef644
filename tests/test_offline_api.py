"""The offline model's contract: it answers through the real SDK the way the Messages API does.

Every request here goes through ``course.make_client("offline").messages.create``, so what is
pinned is what a stage sees: real SDK types on success, real SDK exceptions on failure.
"""

from __future__ import annotations

import json
import math
import re

import anthropic
import httpx2
import pytest
from anthropic.types import Message, TextBlock, ToolUseBlock

import course
from course.offline import OfflineTransport, tokens

READ_FILE = {
    "name": "read_file",
    "description": "Read one text file of the workspace.",
    "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
}
LIST_FILES = {
    "name": "list_files",
    "description": "List the files of the workspace.",
    "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
}
TOOLS = [LIST_FILES, READ_FILE]
TASK = {"role": "user", "content": "Summarise memo.md"}


def text(value: str) -> dict:
    return {"type": "text", "text": value}


def tool_use(id_: str, path: str = "memo.md") -> dict:
    return {"type": "tool_use", "id": id_, "name": "read_file", "input": {"path": path}}


def tool_result(id_: str, content: str = "# Meeting memo") -> dict:
    return {"type": "tool_result", "tool_use_id": id_, "content": content}


def create(client=None, **request):
    request = {"model": "offline", "max_tokens": 256, "messages": [TASK], **request}
    return (client or course.make_client("offline")).messages.create(**request)


def rejection(**request) -> anthropic.BadRequestError:
    with pytest.raises(anthropic.BadRequestError) as caught:
        create(**request)
    return caught.value


def assert_invalid_request(error: anthropic.APIStatusError, message: str) -> None:
    assert error.status_code == 400
    assert error.body == {"type": "error", "error": {"type": "invalid_request_error", "message": message}}


# ---------------------------------------------------------------- validation: required fields

@pytest.mark.parametrize("field", ["model", "max_tokens", "messages"])
def test_rejects_a_request_missing_a_required_field(field):
    # An explicit timeout: without one the SDK derives it from max_tokens, before sending anything.
    error = rejection(**{field: anthropic.NOT_GIVEN}, timeout=10)
    assert_invalid_request(error, f"{field}: Field required")


@pytest.mark.parametrize("max_tokens", [0, -5])
def test_rejects_max_tokens_below_one(max_tokens):
    assert_invalid_request(rejection(max_tokens=max_tokens),
                           "max_tokens: Input should be greater than or equal to 1")


def test_accepts_max_tokens_of_one():
    assert create(max_tokens=1).usage.output_tokens <= 1


def test_rejects_an_empty_message_list():
    assert_invalid_request(rejection(messages=[]),
                           "messages: List should have at least 1 item after validation, not 0")


# ---------------------------------------------------------------- validation: tool_use / tool_result pairing

def test_accepts_a_history_whose_tool_uses_are_answered_first():
    # The positive control for the pairing rules below: the same shapes, well formed.
    history = [TASK, {"role": "assistant", "content": [text("I'll read it."), tool_use("toolu_a"), tool_use("toolu_b", "hello.txt")]},
               {"role": "user", "content": [tool_result("toolu_a"), tool_result("toolu_b", "Hello"), text("go on")]}]
    assert isinstance(create(tools=TOOLS, messages=history), Message)


def test_rejects_a_tool_use_not_answered_in_the_next_message():
    history = [TASK, {"role": "assistant", "content": [text("I'll read it."), tool_use("toolu_a")]},
               {"role": "user", "content": "what did it say?"}]
    assert_invalid_request(
        rejection(tools=TOOLS, messages=history),
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_a. "
        "Each `tool_use` block must have a corresponding `tool_result` block in the next message.")


def test_rejects_when_only_some_tool_uses_of_a_reply_are_answered():
    history = [TASK, {"role": "assistant", "content": [tool_use("toolu_a"), tool_use("toolu_b", "hello.txt")]},
               {"role": "user", "content": [tool_result("toolu_a")]}]
    error = rejection(tools=TOOLS, messages=history)
    assert error.status_code == 400
    assert "without `tool_result` blocks immediately after: toolu_b." in error.body["error"]["message"]


def test_rejects_a_tool_result_answering_no_tool_use_of_the_previous_message():
    history = [TASK, {"role": "assistant", "content": [tool_use("toolu_a")]},
               {"role": "user", "content": [tool_result("toolu_a"), tool_result("toolu_zzz")]}]
    assert_invalid_request(
        rejection(tools=TOOLS, messages=history),
        "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_zzz. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.")


def test_rejects_a_tool_result_in_the_first_message():
    history = [{"role": "user", "content": [tool_result("toolu_a")]}]
    error = rejection(tools=TOOLS, messages=history)
    assert error.status_code == 400
    assert "unexpected `tool_use_id` found in `tool_result` blocks: toolu_a" in error.body["error"]["message"]


def test_rejects_duplicate_tool_use_ids_in_one_reply():
    history = [TASK, {"role": "assistant", "content": [text("Both."), tool_use("toolu_a"), tool_use("toolu_a", "hello.txt")]},
               {"role": "user", "content": [tool_result("toolu_a"), tool_result("toolu_a")]}]
    assert_invalid_request(rejection(tools=TOOLS, messages=history),
                           "messages.1.content.2: `tool_use` ids must be unique")


def test_rejects_a_tool_use_id_reused_in_a_later_reply():
    history = [TASK, {"role": "assistant", "content": [tool_use("toolu_a")]},
               {"role": "user", "content": [tool_result("toolu_a")]},
               {"role": "assistant", "content": [tool_use("toolu_a", "hello.txt")]},
               {"role": "user", "content": [tool_result("toolu_a")]}]
    assert_invalid_request(rejection(tools=TOOLS, messages=history),
                           "messages.3.content.0: `tool_use` ids must be unique")


def test_rejects_text_placed_before_the_tool_results():
    history = [TASK, {"role": "assistant", "content": [tool_use("toolu_a")]},
               {"role": "user", "content": [text("Here is the file:"), tool_result("toolu_a")]}]
    assert_invalid_request(
        rejection(tools=TOOLS, messages=history),
        "messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message. "
        "Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.")


# ---------------------------------------------------------------- validation: the tool table

TOOL_NAME_PATTERN = "String should match pattern '^[a-zA-Z0-9_-]{1,64}$'"


@pytest.mark.parametrize("name", ["read file", "read.file", "lire_le_fichier_é", "", "x" * 65])
def test_rejects_a_tool_name_outside_the_allowed_pattern(name):
    bad = dict(READ_FILE, name=name)
    assert_invalid_request(rejection(tools=[LIST_FILES, bad]), f"tools.1.custom.name: {TOOL_NAME_PATTERN}")


@pytest.mark.parametrize("name", ["a", "x" * 64, "read-file_2"])
def test_accepts_a_tool_name_inside_the_allowed_pattern(name):
    assert isinstance(create(tools=[dict(READ_FILE, name=name)]), Message)


@pytest.mark.parametrize("schema", [{"type": "string"}, {"type": "array", "items": {"type": "string"}},
                                    {"properties": {"path": {"type": "string"}}}])
def test_rejects_an_input_schema_that_is_not_an_object_schema(schema):
    bad = dict(READ_FILE, input_schema=schema)
    assert_invalid_request(rejection(tools=[bad]), "tools.0.custom.input_schema.type: Input should be 'object'")


def test_rejects_a_tool_without_an_input_schema():
    bad = {key: value for key, value in READ_FILE.items() if key != "input_schema"}
    assert_invalid_request(rejection(tools=[LIST_FILES, bad]), "tools.1.custom.input_schema: Field required")


def test_rejects_duplicate_tool_names():
    assert_invalid_request(rejection(tools=[READ_FILE, LIST_FILES, dict(READ_FILE, description="again")]),
                           "tools: Tool names must be unique.")


# ---------------------------------------------------------------- replies: real SDK types, statelessness

def test_returns_real_sdk_types():
    reply = create(tools=TOOLS)
    assert isinstance(reply, Message)
    assert reply.role == "assistant" and reply.model == "offline"
    assert isinstance(reply.content[0], TextBlock)
    calls = [block for block in reply.content if isinstance(block, ToolUseBlock)]
    assert calls and calls[0].name == "read_file" and calls[0].input == {"path": "memo.md"}
    assert calls[0].id.startswith("toolu_")
    assert reply.stop_reason == "tool_use"


def test_the_same_request_gets_the_same_reply_ids_included():
    client = course.make_client("offline")
    first, second = create(client, tools=TOOLS), create(client, tools=TOOLS)
    fresh = create(course.make_client("offline"), tools=TOOLS)
    assert first.model_dump() == second.model_dump() == fresh.model_dump()


def test_a_different_request_gets_different_ids():
    one = create(tools=TOOLS)
    other = create(tools=TOOLS, messages=[{"role": "user", "content": "Summarise hello.txt"}])
    assert one.id != other.id
    assert one.content[-1].id != other.content[-1].id


# ---------------------------------------------------------------- usage and count_tokens

MESSAGE_OVERHEAD = 4  # tokens per message, as documented in course/offline/tokens.py


def estimate(text_: str) -> int:
    """The rule documented in course/offline/tokens.py, redone by hand: ceil(UTF-8 bytes / 4)."""
    return math.ceil(len(text_.encode("utf-8")) / 4)


@pytest.mark.parametrize("prompt", ["List the files", "作業ディレクトリのファイル一覧を取得してください", "x" * 401])
def test_input_tokens_follow_the_documented_estimate(prompt):
    system = "You are a careful agent."
    reply = create(system=system, messages=[{"role": "user", "content": prompt}])
    assert reply.usage.input_tokens == estimate(system) + MESSAGE_OVERHEAD + estimate(prompt)


def test_input_tokens_count_the_tools_and_every_message():
    history = [TASK, {"role": "assistant", "content": [text("I'll read it."), tool_use("toolu_a")]},
               {"role": "user", "content": [tool_result("toolu_a", "# Meeting memo\nWe agreed.")]}]
    body = {"system": "Be brief.", "tools": TOOLS, "messages": history}
    reply = create(**body)
    by_hand = (estimate("Be brief.")
               + sum(estimate(json.dumps(tool, ensure_ascii=False, sort_keys=True)) for tool in TOOLS)
               + 3 * MESSAGE_OVERHEAD + estimate("Summarise memo.md")
               + estimate("I'll read it.") + estimate("read_file") + estimate('{"path": "memo.md"}')
               + estimate("# Meeting memo\nWe agreed."))
    assert reply.usage.input_tokens == by_hand == tokens.request_tokens(body)


def test_input_tokens_grow_with_the_prompt():
    prompts = ["List the files " + "please " * n for n in (0, 10, 100)]
    sizes = [create(messages=[{"role": "user", "content": prompt}]).usage.input_tokens for prompt in prompts]
    assert sizes[0] < sizes[1] < sizes[2]
    assert sizes[2] - sizes[0] == estimate(prompts[2]) - estimate(prompts[0])  # about 7 bytes a "please ", so ~175


def test_output_tokens_follow_the_documented_estimate():
    reply = create(tools=TOOLS, messages=[{"role": "user", "content": "Summarise memo.md and hello.txt"}])
    by_hand = 0
    for block in reply.content:
        if block.type == "text":
            by_hand += estimate(block.text)
        else:
            by_hand += estimate(block.name) + estimate(json.dumps(block.input, ensure_ascii=False, sort_keys=True))
    assert [block.type for block in reply.content] == ["text", "tool_use", "tool_use"]
    assert reply.usage.output_tokens == by_hand


def test_count_tokens_matches_the_input_tokens_of_create():
    history = [TASK, {"role": "assistant", "content": [text("I'll read it."), tool_use("toolu_a")]},
               {"role": "user", "content": [tool_result("toolu_a", "# Meeting memo")]}]
    client = course.make_client("offline")
    for request in ({"messages": [TASK]}, {"system": "Be brief.", "tools": TOOLS, "messages": history}):
        counted = client.messages.count_tokens(model="offline", **request)
        created = create(client, **request)
        assert counted.input_tokens == created.usage.input_tokens == tokens.request_tokens(request)


def test_count_tokens_validates_the_request_too():
    with pytest.raises(anthropic.BadRequestError) as caught:
        course.make_client("offline").messages.count_tokens(model="offline", messages=[])
    assert_invalid_request(caught.value, "messages: List should have at least 1 item after validation, not 0")


# ---------------------------------------------------------------- the context window

def test_rejects_a_prompt_longer_than_the_context_window():
    client = course.make_client("offline", context_window=600)
    prompt = "List the files. " + "padding " * 400
    assert tokens.request_tokens({"messages": [{"role": "user", "content": prompt}]}) > 600
    with pytest.raises(anthropic.BadRequestError) as caught:
        create(client, messages=[{"role": "user", "content": prompt}])
    error = caught.value
    assert error.status_code == 400
    assert error.body["error"]["type"] == "invalid_request_error"
    assert error.body["error"]["message"] == (
        f"prompt is too long: {tokens.request_tokens({'messages': [{'role': 'user', 'content': prompt}]})} tokens > 600 maximum")
    assert re.fullmatch(r"prompt is too long: \d+ tokens > 600 maximum", error.body["error"]["message"])


def test_accepts_a_prompt_that_fits_the_context_window():
    client = course.make_client("offline", context_window=600)
    prompt = "List the files. " + "padding " * 200
    size = tokens.request_tokens({"messages": [{"role": "user", "content": prompt}]})
    assert size <= 600
    assert create(client, messages=[{"role": "user", "content": prompt}]).usage.input_tokens == size


def test_the_default_context_window_is_200k_tokens():
    prompt = "x" * 4 * 150_000  # 150k tokens: over a small window, under the default one
    assert create(messages=[{"role": "user", "content": prompt}]).usage.input_tokens > 150_000


# ---------------------------------------------------------------- max_tokens

def test_a_reply_longer_than_max_tokens_is_cut():
    reply = create(max_tokens=3, messages=[{"role": "user", "content": "What is the weather like?"}])
    full = create(messages=[{"role": "user", "content": "What is the weather like?"}])
    assert full.stop_reason == "end_turn" and full.usage.output_tokens > 3
    assert reply.stop_reason == "max_tokens"
    assert reply.usage.output_tokens <= 3
    assert full.content[0].text.startswith(reply.content[0].text) and reply.content[0].text


def test_a_tool_use_cut_by_max_tokens_comes_back_with_empty_input():
    full = create(tools=TOOLS)
    reasoning = full.content[0].text
    assert full.content[1].input == {"path": "memo.md"}
    cut = create(tools=TOOLS, max_tokens=estimate(reasoning))  # room for the sentence, none for the call
    assert cut.stop_reason == "max_tokens"
    assert cut.content[0].text == reasoning
    assert isinstance(cut.content[1], ToolUseBlock) and cut.content[1].name == "read_file"
    assert cut.content[1].input == {}
    assert cut.usage.output_tokens <= estimate(reasoning)


def test_a_reply_that_fits_max_tokens_is_not_cut():
    full = create(tools=TOOLS)
    exact = create(tools=TOOLS, max_tokens=full.usage.output_tokens)
    assert exact.stop_reason == "tool_use"
    assert exact.content[1].input == full.content[1].input


# ---------------------------------------------------------------- model ids

def test_an_unknown_offline_model_is_a_course_error():
    with pytest.raises(course.CourseError, match="offline-nope"):
        course.make_client("offline-nope")


def test_an_unknown_offline_model_is_not_found_on_the_wire():
    with pytest.raises(anthropic.NotFoundError) as caught:
        create(model="offline-nope")
    assert caught.value.status_code == 404
    assert caught.value.body["error"]["type"] == "not_found_error"

    http = httpx2.Client(transport=OfflineTransport())
    response = http.post("http://offline.invalid/v1/messages",
                         json={"model": "offline-nope", "max_tokens": 10, "messages": [TASK]})
    assert response.status_code == 404
    assert response.json()["type"] == "error"
    assert response.json()["error"]["type"] == "not_found_error"
    assert "offline-nope" in response.json()["error"]["message"]


# ---------------------------------------------------------------- fault injection

def test_an_injected_overload_is_a_529_overloaded_error():
    client = course.make_client("offline", faults=course.Faults(rate=1.0, kinds=("overloaded",)), max_retries=0)
    with pytest.raises(anthropic.APIStatusError) as caught:
        create(client)
    assert caught.value.status_code == 529
    assert caught.value.body["error"]["type"] == "overloaded_error"


def test_the_sdk_retries_get_most_calls_through_transient_faults():
    transient = ("overloaded", "rate_limit", "api_error")  # all sent with retry-after-ms: 1, so retries are quick

    def successes(max_retries: int) -> int:
        client = course.make_client("offline", faults=course.Faults(rate=0.5, kinds=transient), max_retries=max_retries)
        count = 0
        for _ in range(20):
            try:
                create(client)
                count += 1
            except (anthropic.RateLimitError, anthropic.InternalServerError, anthropic.APIStatusError):
                pass
        return count

    without_retries, with_retries = successes(0), successes(2)
    assert 0 < without_retries < 20  # faults are injected, and not always
    assert with_retries > without_retries
    assert with_retries >= 15


# ---------------------------------------------------------------- API version 2026-10-21

def test_the_sdk_sends_the_api_version_whose_rules_the_offline_model_applies():
    import anthropic._constants
    assert anthropic._constants.ANTHROPIC_API_VERSION == "2026-10-21"


@pytest.mark.parametrize("name, value", [("temperature", 1.0), ("top_p", 0.9), ("top_k", 5), ("temperature", 0.0)])
def test_sampling_parameters_are_refused_even_at_their_defaults(name, value):
    client = course.make_client("offline", max_retries=0)
    with pytest.raises(anthropic.BadRequestError) as refused:
        client.messages.create(model="offline", max_tokens=50, messages=[{"role": "user", "content": "Hello"}],
                               extra_body={name: value})
    assert refused.value.body["error"] == {"type": "invalid_request_error", "message": f"{name}: Extra inputs are not permitted"}


def test_the_older_api_version_still_takes_them():
    client = course.make_client("offline", max_retries=0)
    reply = client.messages.create(model="offline", max_tokens=50, messages=[{"role": "user", "content": "Hello"}],
                                   extra_body={"temperature": 0.2}, extra_headers={"anthropic-version": "2023-06-01"})
    assert reply.content


def test_a_document_in_an_assistant_message_and_citations_on_a_user_text_are_refused():
    document = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "x"}}
    cited = {"type": "text", "text": "as quoted", "citations": [{"type": "char_location", "cited_text": "x",
                                                                 "document_index": 0, "start_char_index": 0,
                                                                 "end_char_index": 1}]}
    histories = {"document in assistant": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": [document]},
                                           {"role": "user", "content": "Go on"}],
                 "citations on user text": [{"role": "user", "content": [cited]}]}
    client = course.make_client("offline", max_retries=0)
    for name, messages in histories.items():
        with pytest.raises(anthropic.BadRequestError, match="not accepted"):
            client.messages.create(model="offline", max_tokens=50, messages=messages)
        old = client.messages.create(model="offline", max_tokens=50, messages=messages,
                                     extra_headers={"anthropic-version": "2023-06-01"})
        assert old.content, name
