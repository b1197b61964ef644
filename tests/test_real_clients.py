"""Clients nobody in this course wrote, run against the offline model as they would run against the API:
the SDK's tool runner with its defaults (the message-threads beta), streaming, token counting, structured
outputs, raw responses, the models list and the asynchronous client. Each would fail on an offline model
that only answers ``messages.create`` the way the stages call it."""

from __future__ import annotations

import asyncio
import json

import anthropic
import pydantic
import pytest
from anthropic import beta_tool

import course
from course.offline import known_models

READ_FILE = {"name": "read_file", "description": "Read one text file of the workspace.",
             "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}
TASK = [{"role": "user", "content": "Summarise memo.md"}]
REQUEST = dict(model="offline", max_tokens=1024, tools=[READ_FILE], messages=TASK)
MEMO = "# Memo\nShip on Friday. All tests pass."


def client():
    return course.make_client("offline", max_retries=0)


def test_the_sdk_tool_runner_with_its_defaults_completes_a_task():
    read = []

    @beta_tool
    def read_file(path: str) -> str:
        """Read one text file of the workspace.

        Args:
            path: the file's path
        """
        read.append(path)
        return MEMO

    runner = client().beta.messages.tool_runner(model="offline", max_tokens=1024, tools=[read_file], messages=TASK)
    replies = list(runner)
    assert read == ["memo.md"]
    assert [reply.stop_reason for reply in replies] == ["tool_use", "end_turn"]


def test_a_threaded_request_is_refused_as_one_the_server_cannot_thread():
    # the shape the SDK's threads read to fall back to the full history
    with pytest.raises(anthropic.BadRequestError) as caught:
        client().messages.create(**REQUEST, extra_body={"thread": {"type": "create"}})
    assert caught.value.body["error"]["details"]["error_code"] == "thread_unsupported_request"


def test_a_streamed_reply_is_the_unstreamed_one_sent_in_events():
    with client().messages.stream(**REQUEST) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert final.model_dump() == client().messages.create(**REQUEST).model_dump()
    assert text == final.content[0].text and final.content[-1].input == {"path": "memo.md"}


def test_streamed_events_come_in_the_documented_order():
    kinds = [event.type for event in client().messages.create(**REQUEST, stream=True)]
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    middle = kinds[1:-2]
    assert middle.count("content_block_start") == middle.count("content_block_stop") == 2
    deltas = [event.delta.type for event in client().messages.create(**REQUEST, stream=True)
              if event.type == "content_block_delta"]
    assert {"text_delta", "input_json_delta"} == set(deltas)


def test_count_tokens_matches_what_create_reports():
    counted = client().messages.count_tokens(model="offline", messages=TASK, tools=[READ_FILE]).input_tokens
    assert counted == client().messages.create(**REQUEST).usage.input_tokens


class Summary(pydantic.BaseModel):
    title: str
    points: list[str]
    count: int


def test_parse_gets_a_reply_valid_for_its_schema():
    reply = client().messages.parse(model="offline", max_tokens=1024, messages=TASK, output_format=Summary)
    assert isinstance(reply.parsed_output, Summary)
    assert Summary.model_validate(json.loads(reply.content[0].text)) == reply.parsed_output


def test_every_response_has_its_own_request_id():
    offline = client()
    raw, second = (offline.messages.with_raw_response.create(**REQUEST) for _ in range(2))
    assert raw.headers["request-id"] == raw.parse()._request_id
    assert raw.headers["request-id"] != second.headers["request-id"]
    assert client().messages.create(**REQUEST)._request_id is not None


def test_models_lists_and_retrieves_the_offline_ids():
    listed = [model.id for model in client().models.list(limit=5)]   # the SDK pages through them all
    assert listed == known_models()
    assert client().models.retrieve("offline-long-60").id == "offline-long-60"
    with pytest.raises(anthropic.NotFoundError):
        client().models.retrieve("offline-nonesuch")


def test_the_asynchronous_client_gets_the_same_replies():
    async def both():
        asynchronous = course.make_async_client("offline", max_retries=0)
        created = await asynchronous.messages.create(**REQUEST)
        async with asynchronous.messages.stream(**REQUEST) as stream:
            streamed = await stream.get_final_message()
        return created, streamed

    created, streamed = asyncio.run(both())
    expected = client().messages.create(**REQUEST).model_dump()
    assert created.model_dump() == streamed.model_dump() == expected
