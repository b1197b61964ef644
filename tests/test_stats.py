"""`python -m course stats`: the three numbers of "Building an agent loop yourself" over the runs log,
and what the runs cost (offline runs: what they would cost, nothing spent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import course
from helpers import load_stage
from course import CourseError
from course.lab import ladder
from course.runtime import runlog
from course.__main__ import main
from course.lab.stats import report, summarise

pytestmark = pytest.mark.stage()  # these tests drive s03 to test course stats; they pin no stage

# Four runs, as s03 logs them (one JSON object a line).
LOG = """\
{"stage": "s03", "model": "offline", "task": "report", "stop_reason": "end_turn", "turns": 3, "tool_calls": {"list_files": 1, "write_file": 1}, "tool_errors": {}, "usage": {"input_tokens": 1640, "output_tokens": 90}, "duration_s": 0.02}
{"stage": "s03", "model": "offline", "task": "summarise", "stop_reason": "end_turn", "turns": 2, "tool_calls": {"read_file": 2}, "tool_errors": {"read_file": 1}, "usage": {"input_tokens": 1072, "output_tokens": 80}, "duration_s": 0.02}
{"stage": "s03", "model": "offline-looping", "task": "report", "stop_reason": "no_progress", "turns": 4, "tool_calls": {"list_files": 1, "write_file": 3}, "tool_errors": {}, "usage": {"input_tokens": 2309, "output_tokens": 120}, "duration_s": 0.05}

{"stage": "s03", "model": "offline-long-200", "task": "ledger", "stop_reason": "token_budget", "turns": 31, "tool_calls": {"list_files": 1, "read_file": 30}, "tool_errors": {"read_file": 2}, "usage": {"input_tokens": 58000, "output_tokens": 1500}, "duration_s": 0.8}
"""


@pytest.fixture
def log(tmp_path):
    path = tmp_path / "runs.jsonl"
    path.write_text(LOG, encoding="utf-8")
    return path


def test_stats_count_runs_and_the_share_of_each_stop_reason(log):
    summary = summarise(runlog.read(log))
    assert summary["runs"] == 4
    assert summary["stop_reasons"] == {"end_turn": 0.5, "no_progress": 0.25, "token_budget": 0.25}
    assert summary["cut_off"] == 0.5


def test_stats_give_mean_and_max_turns(log):
    assert summarise(runlog.read(log))["turns"] == {"mean": 10.0, "max": 31}


def test_stats_add_up_tool_calls_and_errors_by_tool(log):
    assert summarise(runlog.read(log))["tools"] == {
        "list_files": {"calls": 3, "errors": 0},
        "read_file": {"calls": 32, "errors": 3},
        "write_file": {"calls": 4, "errors": 0},
    }


def test_stats_table_shows_the_three_numbers(log):
    table = report(log)
    assert "runs: 4" in table
    assert "turns: mean 10.0, max 31" in table
    assert "cut off (any stop but end_turn): 50%" in table
    assert any(line.split() == ["read_file", "32", "3", "9%"] for line in table.splitlines())


def test_stats_command_reads_the_runs_log_named_by_the_environment(log, monkeypatch, capsys):
    monkeypatch.setenv(runlog.ENVIRONMENT_VARIABLE, str(log))
    assert main(["stats", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == summarise(runlog.read(log))


def test_stats_on_an_empty_log_say_there_is_nothing_yet(tmp_path):
    assert report(tmp_path / "none.jsonl").startswith("no runs logged in")
    assert summarise([])["runs"] == 0


def test_stats_on_a_broken_log_are_one_line_of_error(tmp_path, capsys):
    broken = tmp_path / "broken.jsonl"
    broken.write_text("not json\n", encoding="utf-8")
    with pytest.raises(CourseError):
        report(broken)
    assert main(["stats", "--log", str(broken)]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error:") and error.count("\n") == 1


def test_stats_count_the_runs_a_stage_logs(workspace):
    if "s03" not in ladder.stage_names():
        pytest.skip("s03 (the first stage with a runs log) is not present yet")
    s03 = load_stage("s03")
    s03.run("List the files in the workspace", model="offline", workspace=workspace)
    s03.run("List the files in the workspace", model="offline-looping", workspace=workspace, limits=s03.Limits(max_turns=1))
    summary = summarise(runlog.read())
    assert summary["runs"] == 2
    assert summary["stop_reasons"] == {"end_turn": 0.5, "max_turns": 0.5}
    assert summary["tools"]["list_files"] == {"calls": 2, "errors": 0}


def test_a_resumed_run_counts_once_with_the_numbers_of_its_last_record(workspace, tmp_path, capsys):
    s03 = load_stage("s03")
    stopped = s03.run("List the files and write their count and names to report.txt", model="offline",
                      workspace=workspace, client=course.make_client("offline", faults=course.Faults(rate=1.0, seed=1), max_retries=0))
    assert stopped.stop_reason == "api_error"
    finished = s03.run(resume=stopped.transcript, model="offline")
    assert finished.stop_reason == "end_turn"
    records = runlog.read()
    assert [record["run"] for record in records] == [Path(stopped.transcript).stem] * 2  # logged at each end
    summary = json.loads(report(as_json=True))
    assert summary["runs"] == 1 and summary["stop_reasons"] == {"end_turn": 1.0}
    assert summary["turns"]["max"] == finished.turns


@pytest.mark.parametrize("line", ['5', '[]', 'NaN', '{"turns":"x"}', '{"run":[1]}', '{"tool_calls":{"a":"x"}}',
                                  '{"model":5,"usage":{"input_tokens":1}}', '{"stop_reason":[1]}',
                                  '{"turns":1' + "0" * 400 + '}', "[" * 100_000])
def test_stats_on_a_line_of_json_that_is_no_runs_record_are_one_line_of_error(tmp_path, capsys, line):
    path = tmp_path / "runs.jsonl"
    path.write_text(LOG.splitlines()[0] + "\n" + line + "\n", encoding="utf-8")
    assert main(["stats", "--log", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path} is not a runs log") and err.count("\n") == 1


def test_offline_runs_are_priced_as_the_model_they_stand_for_and_cost_nothing(log, tmp_path):
    """The four runs of LOG are offline: their dollars are what the priced model would charge, not money spent."""
    table = report(log)
    model = course.DEFAULT_CLAUDE_MODEL
    assert f"offline runs, nothing spent: this is what they would cost on {model}" in table
    cost = summarise(runlog.read(log))["cost"]
    assert cost["offline_runs"] == 4 and cost["spent_usd"] == 0 and cost["offline_priced_as"] == model
    assert cost["offline_usd"] == pytest.approx(cost["total_usd"]) and cost["total_usd"] > 0
    assert all(len(line) <= 80 for line in table.splitlines() if not line.startswith("runs log:"))


def test_money_spent_on_real_models_is_told_apart_from_what_offline_runs_would_cost(log):
    real = {"stage": "s03", "model": "claude-haiku-4-5", "stop_reason": "end_turn", "turns": 2,
            "usage": {"input_tokens": 1_000_000, "output_tokens": 0}}
    log.write_text(log.read_text(encoding="utf-8") + json.dumps(real) + "\n", encoding="utf-8")
    cost = summarise(runlog.read(log))["cost"]
    assert cost["spent_usd"] == pytest.approx(1.00)  # a million input tokens of claude-haiku-4-5
    assert cost["total_usd"] == pytest.approx(cost["spent_usd"] + cost["offline_usd"])
    table = report(log)
    assert "$1.0000 spent by 1 run(s) of real models; the 4 offline run(s) spent nothing" in table
    assert f"is what they would cost on {course.DEFAULT_CLAUDE_MODEL}" in table
    assert all(len(line) <= 80 for line in table.splitlines() if not line.startswith("runs log:"))
