"""The offline models measured on a small local model (course/offline/small_local.py): each does what
it documents, read off the request alone, whatever stage sent it."""

from __future__ import annotations

import json

import pytest

import course
from course.lab import ladder
from course.lab.scenarios import REPORT_TASK, Scenario, reports_every_file
from helpers import assert_valid_history, calls_of, tool_uses

pytestmark = pytest.mark.stage()  # these tests drive a stage to test the offline model or a command; they pin none

READ_FILE = {"name": "read_file", "description": "Read one text file.",
             "input_schema": {"type": "object", "required": ["path"],
                              "properties": {"path": {"type": "string", "description": "File, e.g. 'memo.md'"}}}}
LIST_FILES = {"name": "list_files", "description": "List the files.",
              "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}
SYSTEM = "You are an agent working in a small project folder."


def ask(model: str, messages, *, tools=(READ_FILE, LIST_FILES), max_tokens=1024):
    client = course.make_client(model)
    return client.messages.create(model=model, max_tokens=max_tokens, system=SYSTEM, tools=list(tools),
                                  messages=[{"role": "user", "content": messages}] if isinstance(messages, str) else messages)


def text_of(reply) -> str:
    return "".join(block.text for block in reply.content if block.type == "text")


def failed_read(path: str, error: str, task: str = "Summarise memo.md") -> list:
    """A history in which the model asked for ``path`` and got ``error`` back."""
    return [{"role": "user", "content": task},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": path}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": error, "is_error": True}]}]


ACTIONABLE = json.dumps({"ok": False, "error": "not_found", "message": "path 'meom.md' does not exist",
                         "hint": "nearest existing names: memo.md"})


@pytest.mark.parametrize("max_tokens", [64, 1024])
def test_the_echoing_model_copies_its_prompt_until_cut_at_max_tokens(max_tokens):
    task = "List the files in the workspace"
    reply = ask("offline-echo", task, max_tokens=max_tokens)
    assert reply.stop_reason == "max_tokens" and reply.usage.output_tokens == max_tokens
    pieces = [piece for piece in text_of(reply).split("\n\n") if piece]
    assert len(pieces) > 1 and all(piece in SYSTEM or piece in task for piece in pieces)
    assert not tool_uses(reply)


def test_the_rambling_model_sends_one_complete_tool_use_then_is_cut():
    reply = ask("offline-ramble", "Read memo.md and todo.md and summarise them")
    assert reply.stop_reason == "max_tokens"
    assert calls_of(reply) == [("read_file", {"path": "memo.md"})]  # one of two, complete
    assert reply.content[-1].type == "text" and "{" not in reply.content[-1].text  # the ramble holds no second call


def test_the_rambling_model_writes_one_complete_json_call_as_text_then_is_cut():
    reply = ask("offline-ramble-text", "List the files in the workspace")
    text = text_of(reply)
    assert reply.stop_reason == "max_tokens" and not tool_uses(reply)
    [line] = [line for line in text.splitlines() if line.startswith("{")]
    assert json.loads(line) == {"name": "list_files", "arguments": {"path": "."}}
    before, after = text.split(line, 1)
    assert "{" not in before + after and len(after) > 1000  # one call, and the rambling goes on after it


def test_the_rambling_model_ends_its_answer_normally():
    history = [{"role": "user", "content": "List the files in the workspace"},
               {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "list_files", "input": {}}]},
               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "memo.md\ntodo.md"}]}]
    reply = ask("offline-ramble", history)
    assert reply.stop_reason == "end_turn" and "memo.md" in text_of(reply)


def test_the_stubborn_model_repeats_its_failing_call_where_the_typo_model_takes_the_hint():
    stubborn = ask("offline-stubborn", failed_read("meom.md", ACTIONABLE))
    typo = ask("offline-typo", failed_read("meom.md", ACTIONABLE))
    assert calls_of(stubborn) == [("read_file", {"path": "meom.md"})]
    assert calls_of(typo) == [("read_file", {"path": "memo.md"})]


def test_the_stubborn_model_misspells_the_file_the_task_names():
    reply = ask("offline-stubborn", "Summarise todo.md")
    assert calls_of(reply) == [("read_file", {"path": "tood.md"})]


@pytest.mark.parametrize("example", ["memo.md", "notes/plan.txt"])
def test_the_borrowing_model_reads_the_example_file_of_the_tool_description(example):
    tool = json.loads(json.dumps(READ_FILE).replace("memo.md", example))
    reply = ask("offline-borrowing", "Read sample.txt and compute the total price", tools=[tool])
    assert calls_of(reply) == [("read_file", {"path": example})]


def test_the_borrowing_model_keeps_the_task_file_when_no_example_names_a_file():
    tool = json.loads(json.dumps(READ_FILE).replace("e.g. 'memo.md'", "relative to the workspace"))
    reply = ask("offline-borrowing", "Read sample.txt and compute the total price", tools=[tool])
    assert calls_of(reply) == [("read_file", {"path": "sample.txt"})]


def test_the_borrowing_model_repeats_a_tool_result_back_as_its_answer():
    history = failed_read("memo.md", "# Meeting memo\nWe met.", task="Read sample.txt and compute the total price")
    history[-1]["content"][0]["is_error"] = False
    reply = ask("offline-borrowing", history)
    assert reply.stop_reason == "end_turn" and text_of(reply) == "# Meeting memo\nWe met."


def test_a_complete_tool_use_in_a_cut_reply_is_run_by_s02_and_refused_by_s03():
    """Why offline-ramble has no ladder row: s01 and s02 run every tool_use whatever the stop reason,
    so they complete this task, and s03 stops on the cut. The row would break the ladder's rule at
    s03 (a stage may break nothing), although s03's refusal is right for a cut call (offline-verbose's)."""
    scenario = Scenario("ramble", REPORT_TASK, reports_every_file, model="offline-ramble", may_write=("report.txt",))
    cells = {}
    for stage in ("s02", "s03"):
        with ladder.scratch_workspace() as workspace:
            cells[stage] = ladder.run_cell(stage, scenario, workspace)
    assert cells["s02"].outcome == "completed"
    assert (cells["s03"].outcome, cells["s03"].stop_reason, cells["s03"].turns) == ("stopped", "max_tokens", 1)


@pytest.mark.parametrize("model", ["offline-echo", "offline-ramble", "offline-ramble-text", "offline-stubborn",
                                   "offline-borrowing"])
def test_every_stage_from_s03_ends_a_run_on_these_models_with_a_named_reason_and_a_valid_history(model):
    """What was measured on the real model (Gemma 3 270M): no stage crashed, every run from s03 on
    ended with a named reason and a valid history."""
    for stage in ("s03", "s04", "s05", "s06"):
        options = {"approver": None, "audit_log": False} if stage == "s06" else {}
        result = course.as_dict(ladder.load_stage(stage).run(
            "Summarise memo.md", model=model, workspace=course.prepare_workspace(), runs_log=False,
            **options))
        assert result["stop_reason"] and result["explanation"]
        assert_valid_history(result["messages"])


def test_the_rambling_text_model_finishes_the_task_for_a_harness_that_runs_a_complete_call(workspace):
    """The `rambling` row can be completed: s04, shown each cut reply as if it had ended normally,
    runs the complete call written before the cut and goes on to write the report (s04's own
    handling of a cut reply does the same for real: the ladder's `rambling` row)."""
    client = course.make_client("offline-ramble-text")
    create = client.messages.create

    def uncut(**request):
        reply = create(**request)
        if reply.stop_reason == "max_tokens":
            reply.stop_reason = "end_turn"
        return reply

    client.messages.create = uncut
    before = course.snapshot(workspace)
    result = ladder.load_stage("s04").run(REPORT_TASK, client=client, model="offline-ramble-text", workspace=workspace,
                                          runs_log=False)
    assert (result.stop_reason, result.turns, result.transitions) == (
        "end_turn", 3, ["text_calls_recovered", "text_calls_recovered"])
    assert reports_every_file({}, workspace, before)
