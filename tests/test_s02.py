"""s02: one state object, one turn per function call, and a result that says why the run ended."""

from __future__ import annotations

import dataclasses

import pytest

import course
from helpers import REPORT_TASK as REPORT, load_stage

pytestmark = pytest.mark.stage("s02")  # every test here pins s02, unless it says otherwise



def recorder():
    events = []
    return events, lambda kind, payload: events.append((kind, payload))


@pytest.mark.exercise(1)
def test_every_continuation_records_why_the_loop_goes_on(workspace):
    result = load_stage("s02").run(REPORT, workspace=workspace)
    # The report task takes two tool turns, then the model's own end.
    assert result.transitions == ["tool_results_written", "tool_results_written"]
    assert result.stop_reason == "end_turn"
    assert result.turns == 3


@pytest.mark.exercise(1)
def test_the_trace_shows_each_transition_after_its_tool_results(workspace):
    events, trace = recorder()
    load_stage("s02").run(REPORT, workspace=workspace, trace=trace)
    kinds = [kind for kind, _ in events]
    assert kinds == ["assistant", "tool_results", "transition",
                     "assistant", "tool_results", "transition",
                     "assistant", "stop"]
    assert [payload for kind, payload in events if kind == "transition"] == ["tool_results_written"] * 2


@pytest.mark.exercise(2)
def test_takes_turns_until_the_model_ends(workspace):
    result = load_stage("s02").run(REPORT, workspace=workspace)
    report = (workspace / "report.txt").read_text(encoding="utf-8")
    assert all(name in report for name in ("config.json", "memo.md", "sample.txt"))
    assert result.answer.startswith("I wrote report.txt")


@pytest.mark.exercise(2)
def test_one_turn_is_one_model_call(workspace):
    client = course.capped(course.make_client("offline"), 10)
    result = load_stage("s02").run(REPORT, client=client, model="offline", workspace=workspace)
    assert result.turns == client.calls == 3


def test_take_turn_advances_the_state_and_says_whether_to_go_on(workspace):
    s02 = load_stage("s02")
    client = course.make_client("offline")
    state = s02.LoopState(messages=[{"role": "user", "content": REPORT}])
    quiet = lambda kind, payload: None  # noqa: E731
    answers = [s02.take_turn(state, client, "offline", workspace, quiet) for _ in range(3)]
    assert answers == [True, True, False]
    assert state.turn_count == 3
    assert state.transition_reason == "tool_results_written"
    assert state.stop_reason == "end_turn"
    assert len(state.messages) == 6  # task, then (reply, results) twice, then the last reply


def test_the_result_is_a_dataclass_with_the_common_keys(workspace):
    result = load_stage("s02").run("List the files", workspace=workspace)
    assert dataclasses.is_dataclass(result)
    data = course.as_dict(result)
    assert set(course.running.cli.SUMMARY_KEYS) <= set(data)
    assert data["usage"]["input_tokens"] > 0 and data["messages"][0]["content"] == "List the files"


def test_an_api_outage_ends_the_run_with_a_reason_and_keeps_the_history(workspace):
    client = course.make_client("offline", faults=course.Faults(rate=1.0, kinds=("overloaded",)))
    result = load_stage("s02").run(REPORT, client=client, model="offline", workspace=workspace)
    assert result.stop_reason == "api_error"
    assert "529" in result.answer and "\n" not in result.answer
    assert result.messages == [{"role": "user", "content": REPORT}]


@pytest.mark.stage("s01")  # what s01 does, the failure this stage fixes
def test_s01_loses_the_run_to_the_same_outage(workspace):
    client = course.make_client("offline", faults=course.Faults(rate=1.0, kinds=("overloaded",)))
    import anthropic
    with pytest.raises(anthropic.APIStatusError):
        load_stage("s01").run(REPORT, client=client, model="offline", workspace=workspace)


def test_still_has_no_stop_condition_of_its_own(workspace):
    client = course.capped(course.make_client("offline-looping"), 20)
    with pytest.raises(course.Runaway):
        load_stage("s02").run(REPORT, client=client, model="offline-looping", workspace=workspace)
    assert client.calls == 20
