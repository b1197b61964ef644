"""Stage s01: the closed loop, until a reply asks for no tool.

Exercise 1 is the body of ``tool_calls``, exercise 2 the ``while`` loop of ``run``.
"""

from __future__ import annotations

import pytest

import course
from helpers import assert_valid_history, tool_uses

pytestmark = pytest.mark.stage("s01")  # every test here pins s01, unless it says otherwise

FAMILY_TASKS = {
    "list": "List the files in the workspace",
    "report": "List the files and write their count and names to report.txt",
    "total": "Read sample.txt and compute the total price",
    "find": "Which files mention agent?",
    "summarise": "Summarise memo.md",
}
REPORT_TASK = FAMILY_TASKS["report"]


class Recording:
    """A client that keeps every reply it returned, in order."""

    def __init__(self, client):
        self._client = client
        self.replies = []
        self.messages = self

    def create(self, **request):
        reply = self._client.messages.create(**request)
        self.replies.append(reply)
        return reply


def run_recorded(stage, task: str, workspace, model: str = "offline"):
    client = Recording(course.make_client(model))
    return stage.run(task, client=client, model=model, workspace=workspace), client.replies


# ---------------------------------------------------------------- exercise 2: the loop

@pytest.mark.exercise(2)
@pytest.mark.parametrize("family", sorted(FAMILY_TASKS))
def test_runs_every_task_family_to_its_natural_end(s01, workspace, family):
    result, replies = run_recorded(s01, FAMILY_TASKS[family], workspace)
    assert result["stop_reason"] == "end_turn"
    assert replies[-1].stop_reason == "end_turn"
    assert all(reply.stop_reason == "tool_use" for reply in replies[:-1])
    assert result["answer"] == "".join(block.text for block in replies[-1].content if block.type == "text")
    assert_valid_history(result["messages"])


@pytest.mark.exercise(2)
def test_goes_on_past_the_first_round_trip_to_write_the_report(s01, workspace):
    result, replies = run_recorded(s01, REPORT_TASK, workspace)
    assert len(replies) >= 3  # list, write, answer: s00 stopped after two
    report = workspace / "report.txt"
    assert report.is_file()
    listed = sorted(path.name for path in workspace.iterdir() if path.name != "report.txt")
    assert all(name in report.read_text(encoding="utf-8") for name in listed)


@pytest.mark.exercise(2)
def test_turns_equal_the_number_of_model_calls(s01, workspace):
    for task in (REPORT_TASK, "What is the capital of France?"):
        client = course.capped(course.make_client("offline"), 20)
        result = s01.run(task, client=client, workspace=workspace)
        assert result["turns"] == client.calls


@pytest.mark.exercise(2)
def test_usage_totals_the_usage_of_every_reply(s01, workspace):
    result, replies = run_recorded(s01, REPORT_TASK, workspace)
    assert len(replies) > 1
    assert result["usage"] == {"input_tokens": sum(reply.usage.input_tokens for reply in replies),
                               "output_tokens": sum(reply.usage.output_tokens for reply in replies)}


@pytest.mark.exercise(2)
def test_keeps_every_reply_whole_in_the_history(s01, workspace):
    result, replies = run_recorded(s01, REPORT_TASK, workspace)
    in_history = [message for message in result["messages"] if message["role"] == "assistant"]
    assert len(in_history) == len(replies)
    for message, reply in zip(in_history, replies):
        assert [block["type"] for block in message["content"]] == [block.type for block in reply.content]
        for kept, sent in zip(message["content"], reply.content):
            if sent.type == "text":
                assert kept["text"] == sent.text
            else:
                assert (kept["id"], kept["name"], kept["input"]) == (sent.id, sent.name, sent.input)
    assert [block["type"] for block in in_history[0]["content"]] == ["text", "tool_use"]


@pytest.mark.exercise(2)
def test_traces_each_reply_and_each_batch_of_results_as_they_join_the_history(s01, workspace):
    """The command line prints a run from these calls: a loop that drops them prints no turns."""
    traced = []
    client = Recording(course.make_client("offline"))
    result = s01.run(REPORT_TASK, client=client, workspace=workspace,
                     trace=lambda kind, payload: traced.append((kind, payload)))
    expected = [("assistant" if message["role"] == "assistant" else "tool_results", message)
                for message in result["messages"][1:]]  # every message after the task, in order
    assert [kind for kind, _ in traced] == [kind for kind, _ in expected]
    assert [kind for kind, _ in traced].count("assistant") == len(client.replies) >= 3
    assert all(payload == message for (_, payload), (_, message) in zip(traced, expected))


@pytest.mark.exercise(2)
def test_answers_parallel_calls_in_one_message_results_first(s01, workspace):
    result, replies = run_recorded(s01, "Summarise memo.md and hello.txt", workspace)
    ids = [block.id for block in tool_uses(replies[0])]
    assert len(ids) == 2
    answers = result["messages"][2]
    assert answers["role"] == "user"
    assert [block["type"] for block in answers["content"]] == ["tool_result", "tool_result"]
    assert [block["tool_use_id"] for block in answers["content"]] == ids
    contents = [block["content"] for block in answers["content"]]
    assert contents == [(workspace / "memo.md").read_text(encoding="utf-8"),
                        (workspace / "hello.txt").read_text(encoding="utf-8")]
    assert result["stop_reason"] == "end_turn"


@pytest.mark.exercise(2)
def test_a_failing_tool_does_not_end_the_loop(s01, workspace, monkeypatch):
    def broken(workspace, **arguments):
        raise OSError("disk unplugged")

    monkeypatch.setitem(s01.TOOL_FUNCTIONS, "list_files", broken)
    result, replies = run_recorded(s01, REPORT_TASK, workspace)
    assert result["stop_reason"] == "end_turn"
    errors = [block for message in result["messages"] if message["role"] == "user" and isinstance(message["content"], list)
              for block in message["content"] if block.get("is_error")]
    assert errors and "disk unplugged" in errors[0]["content"]
    assert_valid_history(result["messages"])


@pytest.mark.exercise(2)
def test_has_no_stop_of_its_own_and_is_still_going_after_50_calls(s01, workspace):
    # offline-looping repeats the same call forever; only the model's own end stops s01 (s03 adds limits).
    client = course.capped(course.make_client("offline-looping"), 50)
    with pytest.raises(course.Runaway):
        s01.run(REPORT_TASK, client=client, model="offline-looping", workspace=workspace)
    assert client.calls == 50


def test_returns_the_documented_result(s01, workspace):
    result = s01.run("List the files", workspace=workspace)
    assert set(result) == {"stage", "model", "answer", "stop_reason", "turns", "usage", "workspace", "messages"}
    assert result["stage"] == "s01" and result["model"] == "offline"
    assert result["workspace"] == str(workspace)
    assert set(result["usage"]) == {"input_tokens", "output_tokens"}


# ---------------------------------------------------------------- exercise 1: finding the tool calls

@pytest.mark.exercise(1)
def test_finds_every_tool_call_of_a_reply_in_order(s01):
    reply = course.make_client("offline").messages.create(
        model="offline", max_tokens=s01.MAX_TOKENS, tools=s01.TOOLS,
        messages=[{"role": "user", "content": "Summarise memo.md and hello.txt"}])
    calls = s01.tool_calls(reply)
    assert [block.type for block in reply.content] == ["text", "tool_use", "tool_use"]
    assert [call.id for call in calls] == [block.id for block in reply.content[1:]]
    assert [call.input["path"] for call in calls] == ["memo.md", "hello.txt"]


@pytest.mark.exercise(1)
def test_finds_no_tool_call_in_a_text_reply(s01):
    reply = course.make_client("offline").messages.create(
        model="offline", max_tokens=s01.MAX_TOKENS, tools=s01.TOOLS,
        messages=[{"role": "user", "content": "What is the capital of France?"}])
    assert [block.type for block in reply.content] == ["text"]
    assert list(s01.tool_calls(reply)) == []
