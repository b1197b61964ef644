"""Every row of the offline model's table of rules (course/offline/rules.py), pinned both ways: a request
that breaks it gets the API's 400 with ``invalid_request_error``; the nearest request that keeps it is
answered. A row added to the table without a case here fails ``test_every_rule_has_a_case``."""

from __future__ import annotations

import anthropic
import pytest

import course
from course.offline import rules

READ_FILE = {"name": "read_file", "description": "Read a file.",
             "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}
MODEL = "offline"


def base(**fields) -> dict:
    return {"model": MODEL, "max_tokens": 256, "messages": [{"role": "user", "content": "Summarise memo.md"}]} | fields


def turn_with(id_: str, *, tools: bool = True) -> dict:
    messages = [{"role": "user", "content": "Summarise memo.md"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": id_, "name": "read_file", "input": {"path": "memo.md"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id_, "content": "hello"}]}]
    return base(messages=messages, **({"tools": [READ_FILE]} if tools else {}))


def image(media_type: str, source: str = "base64") -> dict:
    block = {"type": "image", "source": {"type": source, "media_type": media_type, "data": "iVBORw0KGgo="}}
    return base(messages=[{"role": "user", "content": [block, {"type": "text", "text": "What is this?"}]}])


THINKING = {"type": "enabled", "budget_tokens": 1024}

# rule -> (a request that breaks it, the nearest one that keeps it)
CASES = {
    "extra_fields": (base(temprature=1), base()),
    "tool_use_id_pattern": (turn_with("toolu.01"), turn_with("toolu_01")),
    "text_not_blank": (base(messages=[{"role": "user", "content": [{"type": "text", "text": "  \n"}]}]), base()),
    "final_assistant_trimmed": (base(messages=[{"role": "user", "content": "Say hi"}, {"role": "assistant", "content": "Hi "}]),
                                base(messages=[{"role": "user", "content": "Say hi"}, {"role": "assistant", "content": "Hi"}])),
    "max_tokens_ceiling": (base(max_tokens=rules.MAX_OUTPUT_TOKENS + 1), base(max_tokens=rules.MAX_OUTPUT_TOKENS)),
    "tools_defined": (turn_with("toolu_01", tools=False), turn_with("toolu_01")),
    "image_sources": (image("image/bmp"), image("image/png")),
    "tool_choice": (base(tools=[READ_FILE], tool_choice={"type": "any"}, thinking=THINKING, max_tokens=2048),
                    base(tools=[READ_FILE], tool_choice={"type": "auto"}, thinking=THINKING, max_tokens=2048)),
    "temperature_with_thinking": (base(thinking=THINKING, max_tokens=2048, top_k=5),
                                  base(thinking=THINKING, max_tokens=2048)),
    "stop_sequences_valid": (base(stop_sequences=["  "]), base(stop_sequences=["END"])),
}


def send(body: dict):
    # the fields a typed call would refuse before sending go as extra_body, as a raw client would send them
    client = course.make_client(MODEL, max_retries=0)
    required = {key: body[key] for key in ("model", "max_tokens", "messages")}
    # a timeout of its own: the SDK refuses an unstreamed call with a large max_tokens before sending it otherwise
    return client.messages.create(**required, timeout=60, extra_body={key: value for key, value in body.items() if key not in required})


def test_every_rule_has_a_case():
    refusing = {rule.name for rule in rules.RULES if rule.kind == "refuses"}
    assert refusing == set(CASES)
    assert all(rule.source.startswith("https://") for rule in rules.RULES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_request_that_breaks_the_rule_is_refused_and_one_that_keeps_it_is_answered(name):
    broken, kept = CASES[name]
    with pytest.raises(anthropic.BadRequestError) as caught:
        send(broken)
    assert caught.value.status_code == 400
    assert caught.value.body["error"]["type"] == "invalid_request_error"
    [rule] = [rule for rule in rules.RULES if rule.name == name]
    with pytest.raises(rules.ApiError):   # the row's own check refuses it, not some other rule
        rule.check(broken)
    assert send(kept).type == "message"


def test_unknown_fields_are_refused_inside_messages_and_tools_too():
    nested = base(messages=[{"role": "user", "content": [{"type": "text", "text": "hi", "colour": "red"}]}])
    tool = base(tools=[READ_FILE | {"inputSchema": {}}])
    for body in (nested, tool):
        with pytest.raises(anthropic.BadRequestError):
            send(body)


def test_the_temperature_rule_applies_under_the_version_that_takes_temperature():
    client = course.make_client(MODEL, max_retries=0)
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.create(**base(thinking=THINKING, max_tokens=2048), extra_body={"temperature": 0.5},
                               extra_headers={"anthropic-version": "2023-06-01"})
    assert "temperature" in caught.value.message


# ---------------------------------------------------------------- the rows that shape the reply

TOOLS = [READ_FILE, {"name": "list_files", "description": "List files.",
                     "input_schema": {"type": "object", "properties": {"depth": {"type": "integer", "minimum": 1}},
                                      "required": ["depth"]}}]


def test_tool_choice_none_gives_no_tool_call():
    reply = send(base(tools=TOOLS, tool_choice={"type": "none"}))
    assert reply.stop_reason == "end_turn"
    assert reply.content and {block.type for block in reply.content} == {"text"}
    assert any(block.type == "tool_use" for block in send(base(tools=TOOLS)).content)  # unconstrained, it calls one


def test_tool_choice_tool_forces_that_tool_with_valid_arguments():
    reply = send(base(tools=TOOLS, tool_choice={"type": "tool", "name": "list_files"}))
    assert reply.stop_reason == "tool_use"
    [call] = [block for block in reply.content if block.type == "tool_use"]
    assert call.name == "list_files" and call.input["depth"] >= 1


def test_tool_choice_any_forces_some_call_even_on_a_closing_turn():
    reply = send(turn_with("toolu_01") | {"tool_choice": {"type": "any"}})
    assert reply.stop_reason == "tool_use"
    assert any(block.type == "tool_use" for block in reply.content)


def test_disable_parallel_tool_use_leaves_one_call():
    def two_calls(body):
        return [{"type": "tool_use", "name": "read_file", "input": {"path": p}} for p in ("a", "b")]
    client = course.make_client(behaviour=two_calls, max_retries=0)
    free = client.messages.create(**base(tools=TOOLS))
    single = client.messages.create(**base(tools=TOOLS, tool_choice={"type": "auto", "disable_parallel_tool_use": True}))
    assert len(free.content) == 2 and len(single.content) == 1


def test_a_stop_sequence_ends_the_text_and_is_named():
    client = course.make_client(behaviour=lambda body: [{"type": "text", "text": "one two END three"}], max_retries=0)
    reply = client.messages.create(**base(stop_sequences=["END"]))
    assert (reply.stop_reason, reply.stop_sequence, reply.content[0].text) == ("stop_sequence", "END", "one two ")
    assert client.messages.create(**base()).stop_sequence is None


def test_top_level_cache_control_caches_the_prompt():
    long_task = "Summarise memo.md. " + "Context line. " * 2000
    body = base(messages=[{"role": "user", "content": long_task}], cache_control={"type": "ephemeral"})
    client = course.make_client(MODEL, max_retries=0)
    first, second = client.messages.create(**body), client.messages.create(**body)
    assert first.usage.cache_creation_input_tokens > 0
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens


def test_the_site_page_shows_every_row_with_its_source_in_both_languages():
    from course.site import pages as site
    for language in ("en", "ja"):
        table = site.render("offline-rules", "", language)
        for rule in rules.RULES:
            assert f"`{rule.name}`" in table and f"({rule.source})" in table
    assert "<!-- offline-rules -->" in open("docs/offline-model-rules.ja.md", encoding="utf-8").read()
