"""s03: the loop stops on its own, for a named reason, and leaves a valid history and a runs-log line."""

from __future__ import annotations

import json

import pytest

import course
from helpers import REPORT_TASK as REPORT, assert_valid_history, calls_of, load_stage

pytestmark = pytest.mark.stage("s03")  # every test here pins s03, unless it says otherwise



def run_s03(task=REPORT, model="offline", workspace=None, cap=60, **limits):
    """s03 under a guard: a stop condition that failed would show as Runaway, not as a hang."""
    client = course.capped(course.make_client(model), cap)
    s03 = load_stage("s03")
    result = s03.run(task, client=client, model=model, workspace=workspace, limits=s03.Limits(**limits))
    return result, client


def test_a_natural_end_is_end_turn(workspace):
    result, _ = run_s03(workspace=workspace)
    assert result.stop_reason == "end_turn"
    assert (workspace / "report.txt").exists()


@pytest.mark.exercise(1)
def test_stops_at_the_turn_limit(workspace):
    result, client = run_s03(model="offline-looping", workspace=workspace, max_turns=5, max_repeats=100)
    assert result.stop_reason == "max_turns"
    assert result.turns == client.calls == 5
    assert result.explanation.startswith("turn limit: 5 of 5 turns taken") and result.answer == ""
    assert_valid_history(result.messages)


@pytest.mark.exercise(1)
def test_stops_once_the_token_budget_is_spent(workspace):
    budget = 3000
    result, client = run_s03(model="offline-looping", workspace=workspace, token_budget=budget, max_repeats=100)
    assert result.stop_reason == "token_budget"
    spent = [u.input_tokens + u.output_tokens for u in client.usages]
    assert sum(spent) >= budget > sum(spent[:-1])  # the call that crossed the budget was the last one
    assert_valid_history(result.messages)


@pytest.mark.exercise(2)
def test_stops_when_the_same_call_repeats(workspace):
    result, client = run_s03(model="offline-looping", workspace=workspace)
    assert result.stop_reason == "no_progress"
    calls = calls_of(result.messages)
    assert calls[-1] == calls[-2] == calls[-3] and calls[-4] != calls[-1]
    # The 1.5b of "An AI agent is a while loop inside" ran to its guard at turn 8; this one stops at
    # the third repeat.
    assert client.calls == 4
    assert_valid_history(result.messages)


def reads_of(paths: list[str], result: str, is_error: bool) -> list[dict]:
    """A history of one read_file call per turn, each answered with ``result``."""
    messages = [{"role": "user", "content": "go"}]
    for index, path in enumerate(paths):
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": f"toolu_{index}", "name": "read_file", "input": {"path": path}}]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{index}", "content": result, "is_error": is_error}]})
    return messages


@pytest.mark.exercise(2)
def test_stops_after_consecutive_tool_errors():
    s03 = load_stage("s03")
    messages = reads_of([f"missing-{index}" for index in range(3)], "Error: not found", is_error=True)
    limits = s03.Limits()
    assert "failed" in s03.no_progress(messages, limits)
    messages[-1]["content"][0]["is_error"] = False
    assert s03.no_progress(messages, limits) is None


def test_different_calls_are_progress():
    s03 = load_stage("s03")
    messages = reads_of([f"part-{index}" for index in range(5)], "ok", is_error=False)
    assert s03.no_progress(messages, s03.Limits()) is None


def test_a_reply_cut_by_max_tokens_ends_the_run_and_its_tool_use_is_answered(workspace, monkeypatch):
    s03 = load_stage("s03")
    # Room for the tutor's sentence of reasoning, not for the tool call after it.
    probe = course.make_client("offline").messages.create(
        model="offline", max_tokens=1024, system=s03.SYSTEM_PROMPT, tools=s03.TOOLS,
        messages=[{"role": "user", "content": REPORT}])
    monkeypatch.setattr(s03, "MAX_TOKENS", -(-len(probe.content[0].text.encode()) // 4) + 1)
    result, _ = run_s03(workspace=workspace)
    assert result.stop_reason == "max_tokens"
    cut = result.messages[-2]["content"]
    assert cut[-1]["type"] == "tool_use" and cut[-1]["input"] == {}
    answer = result.messages[-1]["content"][0]
    assert answer["tool_use_id"] == cut[-1]["id"] and answer["is_error"] and "not run" in answer["content"]
    assert_valid_history(result.messages)
    assert not (workspace / "report.txt").exists()


def test_a_refusal_ends_the_run_with_its_own_reason(workspace):
    result, client = run_s03(model="offline-refusing", workspace=workspace)
    assert result.stop_reason == "refusal"
    assert client.calls == 1


@pytest.mark.parametrize("limit, value", [("max_turns", 0), ("token_budget", -5), ("max_repeats", "abc"),
                                          ("max_consecutive_errors", 1.5), ("max_turns", True)])
def test_a_nonsense_limit_is_refused_before_any_call(workspace, limit, value):
    client = course.capped(course.make_client("offline"), 0)  # any call would raise Runaway
    with pytest.raises(course.CourseError, match=limit):
        s03 = load_stage("s03")
        s03.run(REPORT, client=client, model="offline", workspace=workspace, limits=s03.Limits(**{limit: value}))


def test_the_command_line_refuses_a_nonsense_limit_in_one_line(capsys):
    assert load_stage("s03").main(["List the files", "--max-turns", "zero"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: max_turns") and err.count("\n") == 1


def test_every_run_appends_its_metrics_to_the_runs_log(workspace, tmp_path):
    log = tmp_path / "log.jsonl"
    s03 = load_stage("s03")
    s03.run(REPORT, workspace=workspace, runs_log=log)
    s03.run("Summarise missing.txt", workspace=workspace, runs_log=log)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["stop_reason"] for r in records] == ["end_turn", "end_turn"]
    assert records[0]["tool_calls"] == {"list_files": 1, "write_file": 1} and records[0]["tool_errors"] == {}
    assert records[1]["tool_errors"] == {"read_file": 1}
    assert {"stage", "model", "task", "turns", "usage", "duration_s", "time"} <= set(records[0])


def test_the_runs_log_goes_where_the_environment_says(workspace, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_COURSE_RUNS_LOG", str(tmp_path / "elsewhere.jsonl"))
    load_stage("s03").run("List the files", workspace=workspace)
    assert len((tmp_path / "elsewhere.jsonl").read_text().splitlines()) == 1


def test_runs_log_false_writes_nothing(workspace, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_COURSE_RUNS_LOG", str(tmp_path / "none.jsonl"))
    load_stage("s03").run("List the files", workspace=workspace, runs_log=False)
    assert not (tmp_path / "none.jsonl").exists()


def test_the_trace_explains_the_stop_in_one_line(workspace):
    events = []
    load_stage("s03").run(REPORT, model="offline-looping", workspace=workspace,
                          trace=lambda kind, payload: events.append((kind, payload)))
    stops = [payload for kind, payload in events if kind == "stop"]
    assert len(stops) == 1 and stops[0].startswith("no progress") and "\n" not in stops[0]
