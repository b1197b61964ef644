"""make_client(behaviour=...): a scripted model that goes through everything the built-in ones do.

Its requests are validated, counted, cut at max_tokens and faulted like any offline model's; its
replies are not checked, so a test can send what a real model never would and see the harness cope.
"""

from __future__ import annotations

import anthropic
import pytest

import course
from course.offline import Reply
from helpers import scripted_client

TASK = [{"role": "user", "content": "Say something."}]


def create(client, **request):
    return client.messages.create(**{"model": "scripted", "max_tokens": 256, "messages": TASK, **request})


def test_the_script_reads_the_request_and_its_blocks_come_back_as_sdk_types():
    seen = []

    def echo(body: dict) -> list[dict]:
        seen.append(body)
        return [{"type": "text", "text": f"{len(body['messages'])} message(s), system {body['system']!r}"}]

    reply = create(course.make_client(behaviour=echo), system="Be brief.")
    assert isinstance(reply, anthropic.types.Message)
    assert reply.content[0].text == "1 message(s), system 'Be brief.'" and reply.stop_reason == "end_turn"
    assert seen[0]["messages"] == TASK and seen[0]["model"] == "scripted"


def test_a_request_the_api_would_refuse_never_reaches_the_script():
    client, requests = scripted_client([{"type": "text", "text": "unreachable"}])
    orphan = [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}]}]
    with pytest.raises(anthropic.BadRequestError) as caught:
        create(client, messages=orphan)
    assert caught.value.status_code == 400 and requests == []


def test_usage_is_the_offline_estimate_not_a_constant():
    client, _ = scripted_client([{"type": "text", "text": "short"}], [{"type": "text", "text": "word " * 200}])
    short = create(client)
    long = create(client, messages=[{"role": "user", "content": "A longer question. " * 50}])
    assert short.usage.input_tokens == client.messages.count_tokens(model="scripted", messages=TASK).input_tokens
    assert long.usage.input_tokens > short.usage.input_tokens
    assert long.usage.output_tokens > 10 * short.usage.output_tokens


def test_a_scripted_reply_longer_than_max_tokens_is_cut():
    client, _ = scripted_client([{"type": "text", "text": "word " * 200}])
    reply = create(client, max_tokens=5)
    assert reply.stop_reason == "max_tokens" and reply.usage.output_tokens <= 5
    assert ("word " * 200).startswith(reply.content[0].text) and len(reply.content[0].text) < 100


def test_a_reply_object_sets_the_stop_reason():
    client, _ = scripted_client(Reply(stop_reason="refusal").text("I will not."))
    assert create(client).stop_reason == "refusal"


def test_injected_faults_apply_to_a_scripted_model():
    client, requests = scripted_client([{"type": "text", "text": "never"}],
                                       faults=course.Faults(rate=1.0, kinds=("overloaded",)))
    with pytest.raises(anthropic.APIStatusError) as caught:
        create(client)
    assert caught.value.status_code == 529 and requests == []


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")
def test_replies_are_not_validated_so_the_harness_sees_what_the_model_sent():
    odd = {"type": "tool_use", "id": "toolu_odd", "name": "", "input": ["not", "an", "object"]}
    client, _ = scripted_client([odd, {"type": "tool_use", "name": "list_files", "input": {}}])
    [first, second] = create(client).content
    assert (first.id, first.name, first.input) == ("toolu_odd", "", ["not", "an", "object"])
    assert second.id.startswith("toolu_") and second.id != "toolu_odd"  # an id the script left out is given


def test_a_broken_script_is_a_500_that_says_what_broke():
    client, _ = scripted_client([{"type": "text", "text": "one"}])
    create(client)
    with pytest.raises(anthropic.InternalServerError, match="the script has no reply left for request 2"):
        create(client)
    wrong, _ = scripted_client("Done.")
    with pytest.raises(anthropic.InternalServerError, match="return a list of content blocks"):
        create(wrong)


def test_a_behaviour_that_is_not_a_function_is_refused_in_one_line():
    with pytest.raises(course.CourseError, match="takes a function from the request body"):
        course.make_client(behaviour=[{"type": "text", "text": "Done."}])
